// The JSON sidecar of one frame (`{id}.json`, output.formats: json), written and read here: what the
// numbers in its outputs mean and where they came from. The frame writer writes it; the QA report
// (report.h) reads it back for a folder without a manifest (the live runner's) and for the inputs
// behind a composed thumbnail.
#pragma once

#include <cstddef>
#include <filesystem>
#include <optional>
#include <string>
#include <vector>

#include "depthmask/intrinsics.h"

namespace depthmask {

// `invalid_value` is a number, or the string "nan" (JSON has no NaN); `intrinsics` is null when none
// were configured.
struct SidecarInfo {
  std::string id;
  double depth_scale = 0;          // metres per raw unit of 16-bit input depth
  bool depth_input_float = false;  // the input depth was float metres (scale unused)
  double depth_min = 0, depth_max = 0;
  float invalid = 0;
  std::optional<Intrinsics> intrinsics;
  std::filesystem::path depth_file, mask_file, color_file;  // color empty: none
  std::string backend;
  int width = 0, height = 0;
  size_t kept_pixels = 0;
  std::vector<std::string> outputs;  // file names, siblings of the sidecar
};

// The sidecar's text: {"id", "units": "metres", "depth_scale", "depth_input", "depth_range": {"min",
// "max"}, "invalid_value", "intrinsics": {"fx", "fy", "cx", "cy"[, "width", "height"]} or null,
// "source": {"depth", "mask", "color" (or null)}, "backend", "width", "height", "kept_pixels",
// "outputs": [...]}, indented by 2.
std::string encode_sidecar(const SidecarInfo& info);

// The sidecar at `path` when it is one: a JSON object with a string "id", an array "outputs" and an
// unsigned "kept_pixels" (not a run's own files, not another tool's JSON). What it reads: id,
// kept_pixels, width, height, outputs (their strings), source's depth, mask and color (where strings).
// None for anything else: unreadable, larger than 1 MiB, not JSON, not of that shape. Never throws.
std::optional<SidecarInfo> read_sidecar(const std::filesystem::path& path);

}  // namespace depthmask
