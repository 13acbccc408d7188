// BOP scene_camera.json: JSON parsing, the line numbers of messages, and the per-image K and
// depth_scale checks. The first byte says whether depth_scale is required (depth.scale unset).
#include <cstddef>
#include <cstdint>
#include <string>

#include "depthmask/detail/layout_readers.h"
#include "depthmask/errors.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  if (size == 0) return 0;
  const std::string text(reinterpret_cast<const char*>(data + 1), size - 1);
  try {
    (void)depthmask::detail::parse_scene_camera(text, "scene_camera.json", (data[0] & 1) != 0);
  } catch (const depthmask::Error&) {
  }
  return 0;
}
