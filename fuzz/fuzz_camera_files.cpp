// Camera files: the 3x3 K text of camera-intrinsics.txt (7-Scenes) and cam_K.txt (YCBInEOAT), APC's
// cam.info.txt, and the intrinsics YAML. The first byte picks the reader, the rest is the file.
#include <cstddef>
#include <cstdint>
#include <string>

#include "depthmask/config.h"
#include "depthmask/errors.h"
#include "depthmask/geometry.h"
#include "depthmask/intrinsics.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  if (size == 0) return 0;
  const std::string text(reinterpret_cast<const char*>(data + 1), size - 1);
  try {
    switch (data[0] % 3) {
      case 0:
        (void)depthmask::parse_intrinsics_k_text(text, "camera-intrinsics.txt");
        break;
      case 1:
        (void)depthmask::parse_apc_cam_info(text, "cam.info.txt");
        break;
      default:
        (void)depthmask::parse_intrinsics_yaml(text, "intrinsics.yaml");
        break;
    }
  } catch (const depthmask::Error&) {
  }
  return 0;
}
