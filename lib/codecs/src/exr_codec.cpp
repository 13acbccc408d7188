#include "depthmask/detail/exr_codec.h"

#include <cstdlib>
#include <fstream>

#include "depthmask/detail/image_header.h"

namespace depthmask::detail {

void enable_exr_codec() {
  // overwrite = 0: a value the host set stays. Called per EXR file, so a variable the host removed
  // in between is set again before the next EXR.
  ::setenv("OPENCV_IO_ENABLE_OPENEXR", "1", 0);
}

void enable_exr_codec_for(const uint8_t* data, size_t size) {
  if (is_exr(data, size)) enable_exr_codec();
}

void enable_exr_codec_for(const std::filesystem::path& file) {
  char head[4] = {};
  std::ifstream in(file, std::ios::binary);
  if (in.read(head, sizeof head)) enable_exr_codec_for(reinterpret_cast<const uint8_t*>(head), sizeof head);
}

}  // namespace depthmask::detail
