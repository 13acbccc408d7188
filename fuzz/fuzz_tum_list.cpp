// TUM RGB-D rgb.txt / depth.txt / mask.txt lists, with the dataset-root check of the paths they name.
// The first byte says whether paths outside the root are allowed (input.allow_paths_outside_root).
#include <cstddef>
#include <cstdint>
#include <string>

#include "depthmask/detail/layout_readers.h"
#include "depthmask/errors.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  if (size == 0) return 0;
  const std::string text(reinterpret_cast<const char*>(data + 1), size - 1);
  try {
    (void)depthmask::detail::parse_tum_list(text, "depth.txt", (data[0] & 1) != 0);
  } catch (const depthmask::Error&) {
  }
  return 0;
}
