// The `reason` output on the CPU: each code on hand-made pixels (and the order in which they apply),
// every code on frames made to show it (labels, thresholds, invert, erode, markers, APC encoding, a
// live band, a plane of test results, the colour key, resample and reproject), and on every frame
// the code is 0 exactly where the masked depth holds a depth. The GPU's equality with these is in
// tests/gpu/test_reason_parity.cpp.
#include <gtest/gtest.h>

#include <opencv2/core.hpp>

#include <cmath>
#include <limits>
#include <set>
#include <string>

#include "depthmask/backend.h"
#include "depthmask/encoders.h"
#include "depthmask/frame.h"
#include "depthmask/kernels/reason.h"
#include "depthmask/reason.h"
#include "reason_support.h"
#include "test_support.h"

namespace dm = depthmask;

namespace {

cv::Mat codes_of(dm::FrameSlot& slot, const cv::Mat& depth, const cv::Mat& mask, const dm::MaskParams& p,
                 std::optional<dm::MaskParams> configured = std::nullopt) {
  slot.set_reason(true, configured);
  slot.set(depth, mask);
  slot.run_mask(p);
  EXPECT_TRUE(dmtest::codes_match_output(slot.out(), slot.reason(), p.invalid));
  return slot.reason().clone();
}

TEST(Reason, EachCodeOnItsPixel) {
  auto backend = dmtest::cpu_gold_backend();
  dm::FrameSlot slot(*backend);
  dm::MaskParams configured;
  dm::set_depth_range(configured, 0.001, 0.3, 5.0);
  configured.invalid_raw_count = 1, configured.invalid_raw[0] = 65535;
  dm::MaskParams band = configured;
  dm::set_depth_range(band, 0.001, 1.0, 3.0);
  // mask 0 | depth 0 | marker | 0.1 m | 6 m | 0.5 m (in range, below the band) | 2 m | mask 0 and no depth
  const cv::Mat depth = (cv::Mat_<uint16_t>(1, 8) << 2000, 0, 65535, 100, 6000, 500, 2000, 0);
  const cv::Mat mask = (cv::Mat_<uint8_t>(1, 8) << 0, 1, 1, 1, 1, 1, 1, 0);
  const cv::Mat with_band = codes_of(slot, depth, mask, band, configured);
  const cv::Mat want_band = (cv::Mat_<uint8_t>(1, 8) << dm::kDropMaskRule, dm::kDropNoDepth, dm::kDropNoDepth,
                             dm::kDropBelowMin, dm::kDropAboveMax, dm::kDropDepthBand, dm::kKept, dm::kDropMaskRule);
  EXPECT_EQ(cv::countNonZero(with_band != want_band), 0) << with_band;
  // Without a band, 0.5 m is kept.
  const cv::Mat no_band = codes_of(slot, depth, mask, configured);
  EXPECT_EQ(no_band.at<uint8_t>(0, 5), dm::kKept);
  EXPECT_EQ(no_band.at<uint8_t>(0, 3), dm::kDropBelowMin);
}

TEST(Reason, ErosionComesBeforeDepthAndTheImageEdgePasses) {
  auto backend = dmtest::cpu_gold_backend();
  dm::FrameSlot slot(*backend);
  cv::Mat depth(5, 5, CV_16UC1, cv::Scalar(1000));
  depth.at<uint16_t>(1, 1) = 0;  // eroded and without depth: erosion is the reason
  cv::Mat mask(5, 5, CV_8UC1, cv::Scalar(1));
  mask.at<uint8_t>(0, 0) = 0;
  dm::MaskParams p;
  p.erode = 1;
  const cv::Mat codes = codes_of(slot, depth, mask, p);
  EXPECT_EQ(codes.at<uint8_t>(0, 0), dm::kDropMaskRule);
  EXPECT_EQ(codes.at<uint8_t>(0, 1), dm::kDropErosion);
  EXPECT_EQ(codes.at<uint8_t>(1, 0), dm::kDropErosion);
  EXPECT_EQ(codes.at<uint8_t>(1, 1), dm::kDropErosion);
  EXPECT_EQ(codes.at<uint8_t>(2, 2), dm::kKept);
  EXPECT_EQ(codes.at<uint8_t>(4, 4), dm::kKept);  // its window reaches outside the image: passes
  EXPECT_EQ(codes.at<uint8_t>(0, 2), dm::kKept);
}

TEST(Reason, TestsPlaneTellsTheLiveMaskFromTheRule) {
  auto backend = dmtest::cpu_gold_backend();
  dm::FrameSlot slot(*backend);
  const cv::Mat depth(1, 3, CV_16UC1, cv::Scalar(1000));
  const cv::Mat plane = (cv::Mat_<uint8_t>(1, 3) << 0, dm::kTestLiveDrop, dm::kTestKeep);
  const cv::Mat codes = codes_of(slot, depth, plane, dm::union_mask_params(dm::MaskParams{}));
  const cv::Mat want = (cv::Mat_<uint8_t>(1, 3) << dm::kDropMaskRule, dm::kDropLiveMask, dm::kKept);
  EXPECT_EQ(cv::countNonZero(codes != want), 0) << codes;
}

// Every case at sizes a tile walk finds awkward: codes 0 exactly where depth was written, and at the
// larger sizes every code the case is made to show.
class ReasonCases : public ::testing::TestWithParam<cv::Size> {};

TEST_P(ReasonCases, CodesMatchTheMaskedDepth) {
  const cv::Size size = GetParam();
  auto backend = dmtest::cpu_gold_backend();
  dm::FrameSlot slot(*backend);
  for (const dmtest::ReasonCase& c : dmtest::reason_cases(size)) {
    SCOPED_TRACE(c.name);
    const auto [out, codes] = dmtest::run_reason_case(slot, c);
    ASSERT_EQ(codes.size(), c.mask.size());
    EXPECT_TRUE(dmtest::codes_match_output(out, codes, c.params.invalid));
    if (size.area() < 60 * 40) continue;
    std::set<int> seen;
    for (int y = 0; y < codes.rows; ++y)
      for (int x = 0; x < codes.cols; ++x) seen.insert(codes.at<uint8_t>(y, x));
    for (const uint8_t want : c.expect_codes) EXPECT_TRUE(seen.count(want)) << "no pixel with code " << int(want);
  }
}

INSTANTIATE_TEST_SUITE_P(Sizes, ReasonCases,
                         ::testing::Values(cv::Size(1, 1), cv::Size(13, 1), cv::Size(1, 13), cv::Size(31, 33),
                                           cv::Size(96, 72), cv::Size(639, 481)),
                         [](const ::testing::TestParamInfo<cv::Size>& i) {
                           return std::to_string(i.param.width) + "x" + std::to_string(i.param.height);
                         });

TEST(Reason, OffMeansNoPassAndNoPlane) {
  auto backend = dmtest::cpu_gold_backend();
  dm::FrameSlot slot(*backend);
  slot.set(cv::Mat(4, 4, CV_16UC1, cv::Scalar(1000)), cv::Mat(4, 4, CV_8UC1, cv::Scalar(1)));
  slot.run_mask(dm::MaskParams{});
  EXPECT_TRUE(slot.reason().empty());
  slot.set_reason(true);
  slot.run_mask(dm::MaskParams{});
  EXPECT_EQ(slot.reason().size(), cv::Size(4, 4));
  slot.set_reason(false);
  slot.run_mask(dm::MaskParams{});
  EXPECT_TRUE(slot.reason().empty());
}

TEST(Reason, BadJobsAreRefused) {
  dm::ReasonParams p;
  dm::ReasonJob job;
  job.rows = 2, job.cols = 2;
  EXPECT_THROW(dm::reason_cpu(job, p), std::invalid_argument);  // null planes
  uint16_t depth[4] = {};
  uint8_t mask[4] = {}, out[4] = {};
  job.depth = {depth, 4}, job.mask = {mask, 2}, job.out = {out, 2};
  EXPECT_NO_THROW(dm::reason_cpu(job, p));
  p.rule.erode = 1;  // erode needs the scratch plane
  EXPECT_THROW(dm::reason_cpu(job, p), std::invalid_argument);
  p.rule.erode = 0;
  p.registration = dm::ReasonRegistration::Resample;  // registered depth is float
  EXPECT_THROW(dm::reason_cpu(job, p), std::invalid_argument);
}

TEST(Reason, ColoursOfThePreview) {
  const cv::Mat codes = (cv::Mat_<uint8_t>(1, 3) << dm::kKept, dm::kDropNoDepth, 200);
  const cv::Mat bgr = dm::reason_colors(codes);
  ASSERT_EQ(bgr.type(), CV_8UC3);
  const dm::ReasonStyle& s = dm::kReasonStyles[dm::kDropNoDepth];
  EXPECT_EQ(bgr.at<cv::Vec3b>(0, 1), cv::Vec3b(s.b, s.g, s.r));
  EXPECT_EQ(bgr.at<cv::Vec3b>(0, 2), cv::Vec3b(255, 255, 255));
  // Every code has a colour of its own.
  std::set<int> colours;
  for (const dm::ReasonStyle& st : dm::kReasonStyles) colours.insert(st.b << 16 | st.g << 8 | st.r);
  EXPECT_EQ(colours.size(), dm::kReasonStyles.size());
  const cv::Mat depth(2, 3, CV_32FC1, cv::Scalar(1.0f)), mask(2, 3, CV_8UC1, cv::Scalar(1));
  EXPECT_EQ(dm::make_preview(cv::Mat(), mask, depth, 0.0f).cols, 9);
  EXPECT_EQ(dm::make_preview(cv::Mat(), mask, depth, 0.0f, cv::Mat(2, 3, CV_8UC1, cv::Scalar(0))).cols, 12);
}

}  // namespace
