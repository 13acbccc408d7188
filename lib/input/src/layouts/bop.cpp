// BOP scene folders (BOP toolkit docs, "datasets format"):
//   scene_camera.json   {"<im_id>": {"cam_K": [9 numbers, row-major], "depth_scale": d, ...}, ...}
//                       raw depth x depth_scale = millimetres, so metres per raw unit = depth_scale / 1000
//   depth/{im_id:06d}.png, rgb/ or gray/{im_id:06d}.png|.jpg|.tif
//   mask/ and mask_visib/{im_id:06d}_{gt_idx:06d}.png: one binary mask per annotated object instance
// Frames are the images of scene_camera.json in im_id order, with their own K and depth scale.
#include <nlohmann/json.hpp>

#include <algorithm>
#include <cctype>
#include <cmath>
#include <cstdio>
#include <fstream>
#include <map>
#include <set>
#include <sstream>
#include <system_error>

#include "depthmask/detail/layout_readers.h"
#include "depthmask/detail/read_file.h"
#include "depthmask/detail/text_numbers.h"
#include "depthmask/errors.h"

namespace fs = std::filesystem;

namespace depthmask::detail {

namespace {

// Where keys start in the JSON text, for messages that name a line: the keys of the top-level object
// and those of the objects directly under it. nlohmann::json keeps no positions.
struct KeyPositions {
  std::map<std::string, size_t> top;
  std::map<std::pair<std::string, std::string>, size_t> inner;
};

KeyPositions key_positions(const std::string& text) {
  KeyPositions kp;
  int depth = 0;
  std::string current;
  for (size_t i = 0; i < text.size(); ++i) {
    const char ch = text[i];
    if (ch == '"') {
      const size_t start = i;
      std::string s;
      for (++i; i < text.size() && text[i] != '"'; ++i) {
        if (text[i] == '\\' && i + 1 < text.size()) s += text[i++];
        s += text[i];
      }
      size_t j = i + 1;
      while (j < text.size() && std::isspace(static_cast<unsigned char>(text[j]))) ++j;
      if (j < text.size() && text[j] == ':') {
        if (depth == 1) {
          current = s;
          kp.top.emplace(s, start);
        } else if (depth == 2) {
          kp.inner.emplace(std::make_pair(current, s), start);
        }
      }
    } else if (ch == '{' || ch == '[') {
      ++depth;
    } else if (ch == '}' || ch == ']') {
      --depth;
    }
  }
  return kp;
}

size_t line_of(const std::string& text, size_t offset) {
  offset = std::min(offset, text.size());
  return 1 + static_cast<size_t>(std::count(text.begin(), text.begin() + static_cast<std::ptrdiff_t>(offset), '\n'));
}

std::string show(const nlohmann::json& v) {
  std::string s = v.dump();
  if (s.size() > 40) s = s.substr(0, 37) + "...";
  return s;
}

}  // namespace

std::vector<BopCamera> parse_scene_camera(const std::string& text, const fs::path& file, bool need_scale) {
  const std::string name = "BOP camera file '" + file.string() + "'";

  nlohmann::json root;
  try {
    root = nlohmann::json::parse(text);
  } catch (const nlohmann::json::parse_error& e) {
    // e.byte counts from 1 and points at the last character read.
    const size_t at = e.byte > 0 ? e.byte - 1 : 0;
    const size_t line = line_of(text, at);
    const size_t line_start = text.rfind('\n', at == 0 ? 0 : at - 1);
    const size_t column = line_start == std::string::npos || at == 0 ? at + 1 : at - line_start;
    std::string why = e.what();
    if (const auto p = why.find("column "); p != std::string::npos)
      if (const auto colon = why.find(": ", p); colon != std::string::npos) why = why.substr(colon + 2);
    throw InputError(name + " line " + std::to_string(line) + ", column " + std::to_string(column) + " (byte " +
                     std::to_string(e.byte) + "): invalid JSON: " + why);
  } catch (const nlohmann::json::exception& e) {
    // Such as "number overflow parsing '1e400'": no position, so find the quoted token.
    std::string why = e.what();
    if (const auto p = why.find("] "); p != std::string::npos) why = why.substr(p + 2);
    std::string where;
    const auto q1 = why.find('\''), q2 = why.rfind('\'');
    if (q1 != std::string::npos && q2 > q1 + 1)
      if (const auto at = text.find(why.substr(q1 + 1, q2 - q1 - 1)); at != std::string::npos)
        where = " line " + std::to_string(line_of(text, at));
    throw InputError(name + where + ": invalid JSON: " + why);
  }
  DM_EXPECT(root.is_object(), InputError,
            name << " line 1: expected an object mapping image ids to cameras ({\"0\": {\"cam_K\": [...], "
                    "\"depth_scale\": 1.0}}), got "
                 << root.type_name());
  DM_EXPECT(!root.empty(), InputError, name << " lists no images");

  const KeyPositions pos = key_positions(text);
  auto at_key = [&](const std::string& key) {
    const auto it = pos.top.find(key);
    return name + (it == pos.top.end() ? std::string() : " line " + std::to_string(line_of(text, it->second)));
  };
  auto at_inner = [&](const std::string& key, const std::string& sub) {
    const auto it = pos.inner.find({key, sub});
    return it == pos.inner.end() ? at_key(key) : name + " line " + std::to_string(line_of(text, it->second));
  };

  std::vector<BopCamera> out;
  for (const auto& [key, v] : root.items()) {
    DM_EXPECT(!key.empty() && key.size() <= 9 &&
                  std::all_of(key.begin(), key.end(), [](char ch) { return ch >= '0' && ch <= '9'; }),
              InputError, at_key(key) << ": key '" << key << "' is not an image id (a non-negative integer)");
    BopCamera cam;
    cam.im_id = std::stol(key);
    DM_EXPECT(v.is_object(), InputError,
              at_key(key) << ": image " << key << " is " << v.type_name()
                          << "; expected an object with cam_K and depth_scale");
    const auto k = v.find("cam_K");
    DM_EXPECT(k != v.end(), InputError,
              at_key(key) << ": image " << key << " has no 'cam_K' (9 numbers, a row-major 3x3 K)");
    DM_EXPECT(k->is_array() && k->size() == 9, InputError,
              at_inner(key, "cam_K") << ": 'cam_K' of image " << key << " is " << show(*k)
                                     << "; expected 9 numbers (a row-major 3x3 K)");
    double m[9];
    for (size_t i = 0; i < 9; ++i) {
      const auto& x = (*k)[i];
      DM_EXPECT(x.is_number(), InputError,
                at_inner(key, "cam_K") << ": element " << i + 1 << " of 'cam_K' of image " << key << " is " << show(x)
                                       << ", not a number");
      m[i] = x.get<double>();
    }
    DM_EXPECT(std::all_of(m, m + 9, [](double x) { return std::isfinite(x); }) && m[0] > 0 && m[4] > 0 && m[1] == 0 &&
                  m[3] == 0 && m[6] == 0 && m[7] == 0 && m[8] == 1,
              InputError,
              at_inner(key, "cam_K") << ": 'cam_K' of image " << key
                                     << " is not a pinhole K [fx 0 cx 0 fy cy 0 0 1] with positive fx and fy");
    cam.k.fx = m[0];
    cam.k.cx = m[2];
    cam.k.fy = m[4];
    cam.k.cy = m[5];
    const auto s = v.find("depth_scale");
    if (s == v.end()) {
      DM_EXPECT(
          !need_scale, InputError,
          at_key(key)
              << ": image " << key
              << " has no 'depth_scale' (millimetres per raw depth unit); set depth.scale to give one for all images");
    } else {
      DM_EXPECT(s->is_number() && s->get<double>() > 0 && std::isfinite(s->get<double>()), InputError,
                at_inner(key, "depth_scale") << ": 'depth_scale' of image " << key << " is " << show(*s)
                                             << "; expected a positive number (millimetres per raw depth unit)");
      cam.depth_scale = s->get<double>();
    }
    out.push_back(cam);
  }
  std::sort(out.begin(), out.end(), [](const BopCamera& a, const BopCamera& b) { return a.im_id < b.im_id; });
  for (size_t i = 1; i < out.size(); ++i)
    DM_EXPECT(out[i].im_id != out[i - 1].im_id, InputError,
              name << ": image " << out[i].im_id << " is listed twice (as different keys such as \"1\" and \"01\")");
  return out;
}

namespace {

std::vector<BopCamera> read_scene_camera(const fs::path& file, bool need_scale) {
  return parse_scene_camera(detail::read_file_bounded(file, detail::kMaxTextFileBytes, "BOP camera file"), file,
                            need_scale);
}

std::string six_digits(long v) {
  char b[32];
  std::snprintf(b, sizeof b, "%06ld", v);
  return b;
}

// Regular files directly in `dir`, sorted.
std::vector<fs::path> files_in(const fs::path& dir) {
  std::vector<fs::path> out;
  std::error_code ec;
  if (!fs::is_directory(dir, ec)) return out;
  for (fs::directory_iterator it(dir, ec), end; !ec && it != end; it.increment(ec)) {
    std::error_code e2;
    if (it->is_regular_file(e2)) out.push_back(it->path().lexically_normal());
  }
  std::sort(out.begin(), out.end());
  return out;
}

bool all_digits(const std::string& s) {
  return !s.empty() && std::all_of(s.begin(), s.end(), [](char ch) { return ch >= '0' && ch <= '9'; });
}

}  // namespace

void resolve_bop(ResolvedInput& r) {
  Config& e = r.config;
  const fs::path root = e.input.root.lexically_normal();
  refuse_pattern_key(r, "input.depth", "scene_camera.json and depth/");
  refuse_pattern_key(r, "input.color", "scene_camera.json and rgb/ or gray/");
  const fs::path cam_file = root / "scene_camera.json";
  std::error_code ec;
  DM_EXPECT(fs::is_regular_file(cam_file, ec), InputError,
            layout_label(r) << ": no scene_camera.json in '" << root.string() << "' (a BOP scene folder holds it)");
  const bool use_own_scale = !e.is_set_by_user("depth.scale");
  const bool use_own_k = !e.is_set_by_user("input.intrinsics");
  if (!use_own_scale)
    warn_override(r, "depth.scale", describe(e.depth.scale), "the per-image depth_scale of scene_camera.json");
  if (!use_own_k)
    warn_override(r, "input.intrinsics", describe(e.input.intrinsics), "the per-image cam_K of scene_camera.json");
  const std::vector<BopCamera> cams = read_scene_camera(cam_file, use_own_scale);
  DM_EXPECT(fs::is_directory(root / "depth", ec), InputError,
            layout_label(r) << ": no depth/ folder in '" << root.string() << "'");

  // Instance masks by im_id, in gt_idx order. An explicit input.mask pattern replaces them.
  const bool mask_pattern = e.is_set_by_user("input.mask");
  const fs::path mask_dir = root / e.input.bop_masks;
  std::map<long, std::vector<std::pair<std::string, fs::path>>> instances;
  std::vector<fs::path> mask_strays;
  if (!mask_pattern) {
    DM_EXPECT(fs::is_directory(mask_dir, ec), InputError,
              layout_label(r) << ": no " << e.input.bop_masks << "/ folder in '" << root.string()
                              << "' (input.bop_masks: mask_visib or mask; or set input.mask to a pattern)");
    for (const fs::path& p : files_in(mask_dir)) {
      const std::string stem = p.stem().string();
      const auto us = stem.find('_');
      if (p.extension() == ".png" && us != std::string::npos && all_digits(stem.substr(0, us)) &&
          all_digits(stem.substr(us + 1)) && us <= 9)
        instances[std::stol(stem.substr(0, us))].emplace_back(stem.substr(us + 1), p);
      else
        mask_strays.push_back(p);
    }
    for (auto& [id, list] : instances)
      std::sort(list.begin(), list.end(), [](const auto& a, const auto& b) { return natural_less(a.first, b.first); });
  }

  // Color: rgb/ (or gray/ for grayscale datasets such as ITODD), by stem, .png before .jpg / .tif.
  const fs::path color_dir = fs::is_directory(root / "rgb", ec) ? root / "rgb" : root / "gray";
  std::map<std::string, fs::path> colors;
  std::vector<fs::path> color_files = files_in(color_dir);
  for (const fs::path& p : color_files) {
    const std::string ext = p.extension().string();
    if (ext != ".png" && ext != ".jpg" && ext != ".jpeg" && ext != ".tif") continue;
    auto [it, inserted] = colors.emplace(p.stem().string(), p);
    if (!inserted && ext == ".png") it->second = p;
  }

  std::set<fs::path> used;
  for (const BopCamera& cam : cams) {
    FrameEntry f;
    f.id = six_digits(cam.im_id);
    f.depth = root / "depth" / (f.id + ".png");
    if (const auto c = colors.find(f.id); c != colors.end()) f.color = c->second;
    if (mask_pattern) {
      f.mask = (root / substitute_id(e.input.mask, f.id)).lexically_normal();
    } else if (const auto in = instances.find(cam.im_id); in != instances.end()) {
      f.instances = in->second;
      f.mask = f.instances.front().second;  // for code that reads one mask; the instances are the truth
    } else {
      // No annotated instance: the frame fails when loaded, naming the file it expected.
      f.mask = mask_dir / (f.id + "_000000.png");
    }
    if (use_own_k) f.intrinsics = cam.k;
    if (use_own_scale && cam.depth_scale) f.depth_scale = *cam.depth_scale / 1000.0;
    used.insert(f.depth);
    if (!f.color.empty()) used.insert(f.color);
    for (const auto& inst : f.instances) used.insert(inst.second);
    r.listing.frames.push_back(std::move(f));
  }
  // What the configuration shows: the first image's scale (each frame still uses its own).
  if (use_own_scale && !r.listing.frames.empty() && r.listing.frames.front().depth_scale)
    e.depth.scale = *r.listing.frames.front().depth_scale;

  for (const fs::path& p : files_in(root / "depth"))
    if (!used.count(p)) add_unmatched(r.listing, p);
  for (const fs::path& p : color_files)
    if (!used.count(p)) add_unmatched(r.listing, p);
  for (const auto& [id, list] : instances)
    for (const auto& inst : list)
      if (!used.count(inst.second)) add_unmatched(r.listing, inst.second);
  for (const fs::path& p : mask_strays) add_unmatched(r.listing, p);
}

}  // namespace depthmask::detail
