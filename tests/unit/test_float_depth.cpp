// Float depth in metres from files: 32-bit float TIFF, 32-bit float EXR and half-float EXR, through
// the loader (FrameSlot::load) and the rule, on the cpu backend.
#include <gtest/gtest.h>

#include <cmath>
#include <limits>
#include <opencv2/imgcodecs.hpp>

#include "depthmask/backend.h"
#include "depthmask/config.h"
#include "depthmask/frame.h"
#include "test_support.h"

namespace dm = depthmask;

namespace {

// Values exactly representable in half precision, so every format round-trips them unchanged.
cv::Mat float_depth() {
  cv::Mat d(3, 4, CV_32FC1);
  const float v[12] = {0.5f, 1.0f, 1.25f, 2.0f, 0.0f, 3.5f, 0.75f, 1.5f, 0.25f, 12.0f, 0.125f, 1.75f};
  std::memcpy(d.data, v, sizeof v);
  return d;
}

cv::Mat mask_all_but_last() {
  cv::Mat m(3, 4, CV_8UC1, cv::Scalar(1));
  m.at<uint8_t>(2, 3) = 0;
  return m;
}

void expect_masked(const cv::Mat& out, const cv::Mat& depth, float max_m) {
  for (int y = 0; y < depth.rows; ++y)
    for (int x = 0; x < depth.cols; ++x) {
      const float d = depth.at<float>(y, x);
      const bool keep = d > 0 && d <= max_m && !(y == 2 && x == 3);
      EXPECT_EQ(out.at<float>(y, x), keep ? d : 0.0f) << "at (" << x << ", " << y << ")";
    }
}

class FloatDepthFiles : public ::testing::TestWithParam<const char*> {};

}  // namespace

TEST_P(FloatDepthFiles, LoadedAsMetresAndMasked) {
  const std::string kind = GetParam();
  dmtest::TempDir dir;
  const cv::Mat depth = float_depth();
  std::string ext = kind == "tiff" ? ".tiff" : ".exr";
  std::vector<int> params;
  if (kind == "exr_half") params = {cv::IMWRITE_EXR_TYPE, cv::IMWRITE_EXR_TYPE_HALF};
  if (kind == "exr_float") params = {cv::IMWRITE_EXR_TYPE, cv::IMWRITE_EXR_TYPE_FLOAT};
  const auto depth_file = dir / ("d" + ext);
  dmtest::enable_opencv_exr();  // cv::imwrite below; the loader switches the codec on for itself
  const auto mask_file = dir / "m.png";
  ASSERT_TRUE(cv::imwrite(depth_file.string(), depth, params)) << "OpenCV could not write " << kind;
  ASSERT_TRUE(cv::imwrite(mask_file.string(), mask_all_but_last()));

  auto backend = dm::make_backend(dm::BackendChoice{dm::BackendKind::Cpu, 0, "test", false}, dm::PlatformInfo{});
  dm::FrameSlot slot(*backend);
  dm::FrameEntry f;
  f.id = "d";
  f.depth = depth_file;
  f.mask = mask_file;
  slot.load(f, false);
  ASSERT_EQ(slot.depth().type(), CV_32FC1) << kind << " should load as float metres";
  dm::Config c;
  c.depth.max = 10.0;
  slot.run_mask(dm::mask_params(c));
  expect_masked(slot.out(), depth, 10.0f);
}

INSTANTIATE_TEST_SUITE_P(Formats, FloatDepthFiles, ::testing::Values("tiff", "exr_float", "exr_half"),
                         [](const ::testing::TestParamInfo<const char*>& i) { return std::string(i.param); });

TEST(FloatDepthFiles, NanAndInfInATiffAreInvalid) {
  dmtest::TempDir dir;
  cv::Mat depth(1, 3, CV_32FC1);
  depth.at<float>(0, 0) = std::numeric_limits<float>::quiet_NaN();
  depth.at<float>(0, 1) = std::numeric_limits<float>::infinity();
  depth.at<float>(0, 2) = 1.5f;
  ASSERT_TRUE(cv::imwrite((dir / "d.tiff").string(), depth));
  ASSERT_TRUE(cv::imwrite((dir / "m.png").string(), cv::Mat(1, 3, CV_8UC1, cv::Scalar(255))));
  auto backend = dm::make_backend(dm::BackendChoice{dm::BackendKind::Cpu, 0, "test", false}, dm::PlatformInfo{});
  dm::FrameSlot slot(*backend);
  dm::FrameEntry f;
  f.depth = dir / "d.tiff";
  f.mask = dir / "m.png";
  slot.load(f, false);
  dm::MaskParams p;
  p.invalid = -1.0f;
  slot.run_mask(p);
  EXPECT_EQ(slot.out().at<float>(0, 0), -1.0f);
  EXPECT_EQ(slot.out().at<float>(0, 1), -1.0f);
  EXPECT_EQ(slot.out().at<float>(0, 2), 1.5f);
}
