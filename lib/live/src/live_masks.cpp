#include "live_masks.h"

#include <algorithm>
#include <system_error>

#include <opencv2/core.hpp>

#include "depthmask/detail/log.h"
#include "depthmask/errors.h"

namespace depthmask::detail {

// The rule with live.mask.depth_band: the depth range narrowed to the band, so the band is the rule's
// own range check (CPU and GPU agree by construction).
MaskParams live_mask_params(const Config& c) {
  MaskParams p = mask_params(c);
  if (const auto& band = c.live.mask.depth_band) {
    const double lo = std::max(c.depth.min, band->min), hi = std::min(c.depth.max, band->max);
    if (lo > hi)
      detail::log().warn(
          "live: live.mask.depth_band [{}, {}] m lies outside depth.min..depth.max [{}, {}] m: nothing is kept",
          band->min, band->max, c.depth.min, c.depth.max);
    set_depth_range(p, c.depth.scale, lo, hi);
  }
  return p;
}

// live.mask.static, read once through the batch loader's ImageReader (input.max_*, its decoders and
// checks), as a plane of test results (mask_rule.h): kTestKeep where the image is nonzero,
// kTestLiveDrop elsewhere (8- or 16-bit input), so a frame without a mask of its own can be masked
// with it directly and the `reason` output says the live mask dropped the pixel.
cv::Mat read_static_mask(const std::filesystem::path& file, const InputLimits& limits) {
  std::error_code ec;
  DM_EXPECT(std::filesystem::is_regular_file(file, ec), InputError,
            "config key 'live.mask.static': '" << file.string() << "' does not exist or is not a file");
  ImageReader reader(limits);
  cv::Mat m;
  try {
    reader.read(file, ImageRole::Mask, m);
  } catch (const InputError& e) {
    throw InputError(std::string("config key 'live.mask.static': ") + e.what());
  }
  cv::Mat roi;
  cv::compare(m, 0, roi, cv::CMP_NE);
  roi.setTo(kTestLiveDrop, roi == 0);
  return roi;
}

}  // namespace depthmask::detail
