// The live runner's masks besides the frames' own (live.mask, docs/LIVE.md): the depth band as the
// rule's range, the static region of interest, and a frame's mask tests AND-ed with it.
#pragma once

#include <opencv2/core.hpp>

#include <filesystem>

#include "depthmask/config.h"
#include "depthmask/frame.h"
#include "depthmask/image_reader.h"
#include "depthmask/kernels/mask_rule.h"

namespace depthmask::detail {

// The rule with live.mask.depth_band: the depth range narrowed to the band, so the band is the rule's
// own range check (CPU and GPU agree by construction).
MaskParams live_mask_params(const Config& c);

// live.mask.static, read once through the batch loader's ImageReader (input.max_*, its decoders and
// checks), as a plane of test results (mask_rule.h): kTestKeep where the image is nonzero,
// kTestLiveDrop elsewhere (8- or 16-bit input), so a frame without a mask of its own can be masked
// with it directly and the `reason` output says the live mask dropped the pixel.
cv::Mat read_static_mask(const std::filesystem::path& file, const InputLimits& limits);

// A plane of test results (mask_rule.h): kTestKeep where the frame's mask passes `p`'s mask test and
// the static mask is nonzero, kTestLiveDrop where only the static mask drops it, else 0.
template <class MaskT>
void and_tests(const cv::Mat& mask, const cv::Mat& roi, const MaskParams& p, cv::Mat& out) {
  out.create(mask.size(), CV_8UC1);
  for (int y = 0; y < mask.rows; ++y) {
    const MaskT* m = mask.ptr<MaskT>(y);
    const uint8_t* r = roi.ptr<uint8_t>(y);
    uint8_t* o = out.ptr<uint8_t>(y);
    for (int x = 0; x < mask.cols; ++x) o[x] = !mask_keeps(m[x], p) ? uint8_t{0} : r[x];
  }
}

}  // namespace depthmask::detail
