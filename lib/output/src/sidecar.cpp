// The frame sidecar's one home (sidecar.h): its writer and its reader.

#include "depthmask/sidecar.h"
#include "depthmask/detail/read_file.h"
#include "depthmask/errors.h"

#include <nlohmann/json.hpp>

#include <cmath>
#include <fstream>
#include <iterator>
#include <system_error>

namespace fs = std::filesystem;

namespace depthmask {

std::string encode_sidecar(const SidecarInfo& s) {
  using nlohmann::json;
  json j;
  j["id"] = s.id;
  j["units"] = "metres";
  j["depth_scale"] = s.depth_scale;
  j["depth_input"] = s.depth_input_float ? "float32 metres" : "uint16 raw units (metres = raw * depth_scale)";
  j["depth_range"] = {{"min", s.depth_min}, {"max", s.depth_max}};
  if (std::isnan(s.invalid))
    j["invalid_value"] = "nan";
  else
    j["invalid_value"] = static_cast<double>(s.invalid);
  if (s.intrinsics) {
    const Intrinsics& k = *s.intrinsics;
    j["intrinsics"] = {{"fx", k.fx}, {"fy", k.fy}, {"cx", k.cx}, {"cy", k.cy}};
    if (k.width > 0) j["intrinsics"]["width"] = k.width;
    if (k.height > 0) j["intrinsics"]["height"] = k.height;
  } else {
    j["intrinsics"] = nullptr;
  }
  j["source"] = {{"depth", s.depth_file.string()}, {"mask", s.mask_file.string()}};
  if (s.color_file.empty())
    j["source"]["color"] = nullptr;
  else
    j["source"]["color"] = s.color_file.string();
  j["backend"] = s.backend;
  j["width"] = s.width;
  j["height"] = s.height;
  j["kept_pixels"] = s.kept_pixels;
  j["outputs"] = s.outputs;
  return j.dump(2) + "\n";
}

std::optional<SidecarInfo> read_sidecar(const fs::path& path) {
  // A sidecar is about a kilobyte: a larger {id}.json is not one, and is not read whole.
  constexpr size_t kMaxBytes = size_t{1} << 20;
  std::string text;
  try {
    text = detail::read_file_bounded(path, kMaxBytes, "sidecar");
  } catch (const InputError&) {
    return std::nullopt;
  }
  const nlohmann::json j = nlohmann::json::parse(text, nullptr, false);
  if (!j.is_object() || !j.contains("id") || !j["id"].is_string() || !j.contains("outputs") ||
      !j["outputs"].is_array() || !j.contains("kept_pixels") || !j["kept_pixels"].is_number_unsigned())
    return std::nullopt;
  SidecarInfo s;
  s.id = j["id"].get<std::string>();
  s.kept_pixels = j["kept_pixels"].get<size_t>();
  const auto dimension = [&](const char* key) {
    return j.contains(key) && j[key].is_number_integer() ? j[key].get<int>() : 0;
  };
  s.width = dimension("width");
  s.height = dimension("height");
  for (const auto& o : j["outputs"])
    if (o.is_string()) s.outputs.push_back(o.get<std::string>());
  if (j.contains("source") && j["source"].is_object()) {
    const auto& src = j["source"];
    for (const auto& [key, field] :
         {std::pair<const char*, fs::path*>{"depth", &s.depth_file}, {"mask", &s.mask_file}, {"color", &s.color_file}})
      if (src.contains(key) && src[key].is_string()) *field = src[key].get<std::string>();
  }
  return s;
}

}  // namespace depthmask
