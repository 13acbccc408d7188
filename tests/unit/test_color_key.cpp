// The colour key's per-pixel rule (color_key.h): HSV by hand for primaries, greys and rounding cases,
// every 8-bit colour against OpenCV's cvtColor, the key test (hue wrap, inclusive bounds, keep
// outside), argument checks, and the CPU loop over ROIs with 8- and 16-bit masks.
#include <gtest/gtest.h>

#include <opencv2/imgproc.hpp>

#include <stdexcept>
#include <vector>

#include "depthmask/kernels/color_key.h"

namespace dm = depthmask;

namespace {

struct Case {
  int b, g, r;
  int h, s, v;
};

// Hand-computed from the definition in color_key.h (H = (n * round(122880 / d) + 2048) >> 12 ...).
const Case kCases[] = {
    {0, 0, 0, 0, 0, 0},            // black: V = 0, S = 0, H = 0
    {255, 255, 255, 0, 0, 255},    // white: a grey (d = 0)
    {128, 128, 128, 0, 0, 128},    // mid grey
    {0, 0, 255, 0, 255, 255},      // red
    {0, 255, 0, 60, 255, 255},     // green: 120 degrees
    {255, 0, 0, 120, 255, 255},    // blue: 240 degrees
    {0, 255, 255, 30, 255, 255},   // yellow
    {255, 255, 0, 90, 255, 255},   // cyan
    {255, 0, 255, 150, 255, 255},  // magenta
    // V = B = 58, d = 58, n = R - G + 4d = 231: exactly 119.48, but 231 * round(122880 / 58) = 231 * 2119,
    // + 2048, >> 12 = 120 (OpenCV's rounding).
    {58, 1, 0, 120, 255, 58},
    // V = R = 200, n = G - B = -10: -10 * 614 + 2048 = -4092, floor(/ 4096) = -1, + 180 = 179 (wraps).
    {10, 0, 200, 179, 255, 200},
    // d = 100, V = 200: S exactly 127.5, but 100 * round(1044480 / 200) = 100 * 5222, + 2048, >> 12 = 127.
    // H: 50 * 1229 + 2048 >> 12 = 15.
    {100, 150, 200, 15, 127, 200},
    {1, 1, 2, 0, 128, 2},         // S: 522240 + 2048 >> 12 = 128 (127.5 rounds up here)
    {0, 128, 255, 15, 255, 255},  // orange: 128 * 482 + 2048 >> 12 = 15
};

TEST(ColorKeyRule, HsvOfPrimariesGreysAndRoundingCasesByHand) {
  for (const Case& c : kCases) {
    const dm::Hsv8 hsv =
        dm::hsv_from_bgr(static_cast<uint8_t>(c.b), static_cast<uint8_t>(c.g), static_cast<uint8_t>(c.r));
    EXPECT_EQ(hsv.h, c.h) << "BGR " << c.b << "," << c.g << "," << c.r;
    EXPECT_EQ(hsv.s, c.s) << "BGR " << c.b << "," << c.g << "," << c.r;
    EXPECT_EQ(hsv.v, c.v) << "BGR " << c.b << "," << c.g << "," << c.r;
  }
}

// The claim in color_key.h: the rule equals cv::cvtColor(COLOR_BGR2HSV) for every 8-bit colour.
TEST(ColorKeyRule, EqualsOpenCvCvtColorForAllSixteenMillionColours) {
  cv::Mat bgr(4096, 4096, CV_8UC3);
  for (int i = 0; i < (1 << 24); ++i) {
    uint8_t* p = bgr.data + 3 * static_cast<size_t>(i);
    p[0] = static_cast<uint8_t>(i & 255), p[1] = static_cast<uint8_t>((i >> 8) & 255),
    p[2] = static_cast<uint8_t>(i >> 16);
  }
  cv::Mat hsv;
  cv::cvtColor(bgr, hsv, cv::COLOR_BGR2HSV);
  long long differ = 0;
  for (int i = 0; i < (1 << 24); ++i) {
    const uint8_t* p = bgr.data + 3 * static_cast<size_t>(i);
    const uint8_t* q = hsv.data + 3 * static_cast<size_t>(i);
    const dm::Hsv8 m = dm::hsv_from_bgr(p[0], p[1], p[2]);
    if (m.h != q[0] || m.s != q[1] || m.v != q[2]) {
      if (differ < 5)
        ADD_FAILURE() << "BGR " << int(p[0]) << "," << int(p[1]) << "," << int(p[2]) << ": rule " << int(m.h) << ","
                      << int(m.s) << "," << int(m.v) << " cvtColor " << int(q[0]) << "," << int(q[1]) << ","
                      << int(q[2]);
      ++differ;
    }
  }
  EXPECT_EQ(differ, 0) << "colours where the rule differs from OpenCV " << CV_VERSION;
}

dm::ColorKey key(int h0, int h1, int s0, int s1, int v0, int v1, bool inside = true) {
  dm::ColorKey k;
  k.h_min = static_cast<uint8_t>(h0), k.h_max = static_cast<uint8_t>(h1);
  k.s_min = static_cast<uint8_t>(s0), k.s_max = static_cast<uint8_t>(s1);
  k.v_min = static_cast<uint8_t>(v0), k.v_max = static_cast<uint8_t>(v1);
  k.keep_inside = inside;
  return k;
}

dm::Hsv8 hsv(int h, int s, int v) {
  return dm::Hsv8{static_cast<uint8_t>(h), static_cast<uint8_t>(s), static_cast<uint8_t>(v)};
}

TEST(ColorKeyRule, RangesAreInclusiveAndHueWrapsWhenMinExceedsMax) {
  const dm::ColorKey green = key(35, 85, 50, 255, 40, 255);
  EXPECT_TRUE(dm::hsv_inside(hsv(35, 50, 40), green));
  EXPECT_TRUE(dm::hsv_inside(hsv(85, 255, 255), green));
  EXPECT_FALSE(dm::hsv_inside(hsv(34, 200, 200), green));
  EXPECT_FALSE(dm::hsv_inside(hsv(86, 200, 200), green));
  EXPECT_FALSE(dm::hsv_inside(hsv(60, 49, 200), green));
  EXPECT_FALSE(dm::hsv_inside(hsv(60, 200, 39), green));

  const dm::ColorKey red = key(170, 10, 0, 255, 0, 255);  // wraps through 0
  for (int h : {170, 175, 179, 0, 5, 10}) EXPECT_TRUE(dm::hsv_inside(hsv(h, 100, 100), red)) << h;
  for (int h : {11, 60, 120, 169}) EXPECT_FALSE(dm::hsv_inside(hsv(h, 100, 100), red)) << h;
  // A one-value hue range, and the full range.
  EXPECT_TRUE(dm::hsv_inside(hsv(42, 1, 1), key(42, 42, 0, 255, 0, 255)));
  EXPECT_FALSE(dm::hsv_inside(hsv(43, 1, 1), key(42, 42, 0, 255, 0, 255)));
  for (int h = 0; h <= dm::kHueMax; ++h) EXPECT_TRUE(dm::hsv_inside(hsv(h, 0, 0), dm::ColorKey{}));
}

TEST(ColorKeyRule, KeepOutsideKeepsTheOtherColours) {
  // Green-screen removal: the green key with keep outside drops pure green and keeps red and greys.
  const dm::ColorKey screen = key(35, 85, 80, 255, 40, 255, false);
  EXPECT_FALSE(dm::color_key_keeps(0, 255, 0, screen));
  EXPECT_TRUE(dm::color_key_keeps(0, 0, 255, screen));
  EXPECT_TRUE(dm::color_key_keeps(128, 128, 128, screen));  // grey: S = 0 < 80
  const dm::ColorKey same_inside = key(35, 85, 80, 255, 40, 255, true);
  EXPECT_TRUE(dm::color_key_keeps(0, 255, 0, same_inside));
  EXPECT_FALSE(dm::color_key_keeps(0, 0, 255, same_inside));
}

TEST(ColorKeyRule, ValidateNamesTheBoundThatIsWrong) {
  EXPECT_NO_THROW(dm::validate(dm::ColorKey{}));
  EXPECT_NO_THROW(dm::validate(key(170, 10, 0, 255, 0, 255)));  // hue may wrap
  const auto message = [](const dm::ColorKey& k) {
    try {
      dm::validate(k);
    } catch (const std::invalid_argument& e) {
      return std::string(e.what());
    }
    return std::string("(no error)");
  };
  EXPECT_NE(message(key(0, 180, 0, 255, 0, 255)).find("h range [0, 180] exceeds 0..179"), std::string::npos);
  EXPECT_NE(message(key(200, 10, 0, 255, 0, 255)).find("h range"), std::string::npos);
  EXPECT_NE(message(key(0, 179, 9, 8, 0, 255)).find("s range [9, 8] has min > max"), std::string::npos);
  EXPECT_NE(message(key(0, 179, 0, 255, 200, 100)).find("v range [200, 100]"), std::string::npos);
}

// The CPU loop over ROIs (row steps longer than a row, odd widths), with 8- and 16-bit masks and the
// mask rule's label/invert choices: each output byte is 255 exactly when the mask test and the key
// (computed here from cvtColor) both keep the pixel, and nothing outside the ROI is written.
template <class MaskT>
void check_cpu_loop(int mask_cv_type) {
  const int w = 37, h = 11;
  cv::Mat color_big(h + 2, w + 5, CV_8UC3), mask_big(h + 3, w + 1, mask_cv_type),
      out_big(h + 1, w + 7, CV_8UC1, cv::Scalar(7));
  for (int y = 0; y < color_big.rows; ++y)
    for (int x = 0; x < color_big.cols; ++x)
      color_big.at<cv::Vec3b>(y, x) =
          cv::Vec3b(static_cast<uint8_t>(x * 41 + y * 7), static_cast<uint8_t>(y * 23 + x * 3),
                    static_cast<uint8_t>((x + y) * 19));
  for (int y = 0; y < mask_big.rows; ++y)
    for (int x = 0; x < mask_big.cols; ++x) mask_big.at<MaskT>(y, x) = static_cast<MaskT>((x + 2 * y) % 3);
  const cv::Mat color = color_big(cv::Rect(3, 1, w, h)), mask = mask_big(cv::Rect(1, 2, w, h));
  cv::Mat out = out_big(cv::Rect(5, 0, w, h));
  const dm::ColorKey k = key(150, 40, 60, 255, 30, 250);
  dm::MaskParams p;
  p.label_count = 1, p.labels[0] = 2, p.invert = true;  // mask test: mask != 2
  dm::ColorKeyJob job;
  job.mask = {mask.data, mask.step[0]};
  job.mask_type = sizeof(MaskT) == 1 ? dm::MaskType::U8 : dm::MaskType::U16;
  job.color = {color.data, color.step[0]};
  job.out = {out.data, out.step[0]};
  job.rows = h, job.cols = w;
  dm::color_key_cpu(job, p, k);

  cv::Mat hsv;
  cv::cvtColor(color, hsv, cv::COLOR_BGR2HSV);
  int kept = 0;
  for (int y = 0; y < h; ++y)
    for (int x = 0; x < w; ++x) {
      const cv::Vec3b c = hsv.at<cv::Vec3b>(y, x);
      const bool hue = c[0] >= 150 || c[0] <= 40;
      const bool by_mask = mask.at<MaskT>(y, x) != 2;
      const bool want = by_mask && hue && c[1] >= 60 && c[2] >= 30 && c[2] <= 250;
      kept += want;
      // Kept: 255; the mask keeps it and the key drops it: kTestLiveDrop (1); the mask drops it: 0.
      ASSERT_EQ(out.at<uint8_t>(y, x), want ? 255 : by_mask ? dm::kTestLiveDrop : 0) << "pixel " << x << "," << y;
    }
  EXPECT_GT(kept, 0);
  EXPECT_LT(kept, w * h);
  // Outside the ROI the fill is untouched.
  EXPECT_EQ(cv::countNonZero(out_big.colRange(0, 5) != 7), 0);
  EXPECT_EQ(cv::countNonZero(out_big.colRange(5 + w, out_big.cols) != 7), 0);
  EXPECT_EQ(cv::countNonZero(out_big.row(h) != 7), 0);
}

TEST(ColorKeyCpu, RoiWithEightBitMask) { check_cpu_loop<uint8_t>(CV_8UC1); }
TEST(ColorKeyCpu, RoiWithSixteenBitMask) { check_cpu_loop<uint16_t>(CV_16UC1); }

TEST(ColorKeyCpu, RejectsBadJobsAndKeys) {
  uint8_t mask[4] = {}, color[12] = {}, out[4] = {};
  dm::ColorKeyJob job;
  job.mask = {mask, 4}, job.color = {color, 12}, job.out = {out, 4};
  job.rows = 1, job.cols = 4;
  EXPECT_NO_THROW(dm::color_key_cpu(job, dm::MaskParams{}, dm::ColorKey{}));
  dm::ColorKeyJob short_color = job;
  short_color.color.step = 11;
  EXPECT_THROW(dm::color_key_cpu(short_color, dm::MaskParams{}, dm::ColorKey{}), std::invalid_argument);
  dm::ColorKeyJob no_out = job;
  no_out.out.data = nullptr;
  EXPECT_THROW(dm::color_key_cpu(no_out, dm::MaskParams{}, dm::ColorKey{}), std::invalid_argument);
  EXPECT_THROW(dm::color_key_cpu(job, dm::MaskParams{}, key(0, 180, 0, 255, 0, 255)), std::invalid_argument);
  dm::ColorKeyJob empty;
  EXPECT_NO_THROW(dm::color_key_cpu(empty, dm::MaskParams{}, dm::ColorKey{}));
}

}  // namespace
