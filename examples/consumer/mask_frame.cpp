// mask_frame: masks one RGB-D frame read from files with the installed depthmask library.
//   mask_frame DEPTH.png MASK.png [OUT.tiff]
// Prints how many pixels were kept, their depth range in metres and the backend; writes the masked
// float32 depth as a TIFF when OUT is given (the same bytes `depthmask run` writes for that frame).
#include <depthmask/depthmask.h>
#include <depthmask/encoders.h>

#include <opencv2/imgcodecs.hpp>

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <exception>
#include <limits>
#include <string>

int main(int argc, char** argv) {
  if (argc < 3 || argc > 4) {
    std::fprintf(stderr, "usage: %s DEPTH.png MASK.png [OUT.tiff]\n", argv[0]);
    return 2;
  }
  try {
    // The sample's depth is 16-bit millimetres; keep the objects (mask > 0) nearer than 2 m.
    depthmask::Masker masker = depthmask::Masker::from_yaml("depth: {scale: 0.001, max: 2}");
    const cv::Mat depth = cv::imread(argv[1], cv::IMREAD_UNCHANGED);
    const cv::Mat mask = cv::imread(argv[2], cv::IMREAD_UNCHANGED);
    if (depth.empty() || mask.empty()) {
      throw depthmask::InputError(std::string("cannot read ") + (depth.empty() ? argv[1] : argv[2]));
    }
    const cv::Mat metres = masker.mask(depth, mask);  // CV_32FC1

    // A kept pixel, as the library counts them (count_kept): finite, above 0 and not output.invalid.
    const float invalid = masker.config().output.invalid;
    auto depth_kept = [invalid](float z) { return std::isfinite(z) && z > 0.0f && z != invalid; };
    size_t kept = 0;
    float lo = std::numeric_limits<float>::max(), hi = 0.0f;
    for (int y = 0; y < metres.rows; ++y) {
      const float* row = metres.ptr<float>(y);
      for (int x = 0; x < metres.cols; ++x) {
        if (!depth_kept(row[x])) continue;
        ++kept;
        lo = std::min(lo, row[x]);
        hi = std::max(hi, row[x]);
      }
    }
    std::printf("kept %zu of %d pixels, min %.6f m, max %.6f m\n", kept, metres.rows * metres.cols, kept ? lo : 0.0f,
                hi);
    std::printf("backend %s: %s\n", std::string(depthmask::to_string(masker.backend())).c_str(),
                masker.reason().c_str());
    if (argc == 4) depthmask::write_file_atomic(argv[3], depthmask::tiff_file(metres), false);
    return 0;
  } catch (const std::exception& e) {
    std::fprintf(stderr, "mask_frame: %s\n", e.what());
    return depthmask::exit_code(depthmask::failure_of(e));
  }
}
