// The per-pixel rule on a hand-checked 5x5 case, through the rule itself, the CPU loop and the cpu
// backend. Scale 0.25 keeps every product exact, so the expected values are written out by hand.
#include <gtest/gtest.h>

#include <cmath>
#include <cstring>
#include <limits>
#include <opencv2/core.hpp>

#include "depthmask/backend.h"
#include "depthmask/frame.h"
#include "depthmask/kernels/image_view.h"
#include "depthmask/kernels/mask_kernel.h"
#include "depthmask/kernels/mask_rule.h"

namespace dm = depthmask;

namespace {

const uint16_t kDepth[5][5] = {
    {0, 3, 4, 32, 33},      // 0 invalid; 0.75 < min; 1.0 == min kept; 8.0 == max kept; 8.25 > max
    {8, 8, 8, 8, 8},        // 2.0 m
    {12, 12, 12, 12, 12},   // 3.0 m
    {16, 0, 16, 0, 16},     // 4.0 m with holes
    {20, 24, 28, 20, 24}};  // 5, 6, 7 m
const uint8_t kMask[5][5] = {{1, 1, 1, 1, 1}, {0, 1, 2, 3, 255}, {7, 7, 0, 7, 7}, {1, 1, 1, 1, 1}, {0, 0, 0, 0, 0}};

constexpr float X = -1.0f;  // the invalid value used below

dm::MaskParams base_params() {
  dm::MaskParams p;
  dm::set_depth_range(p, 0.25, 1.0, 8.0);
  p.invalid = X;
  return p;
}

void expect_grid(const float (&want)[5][5], const cv::Mat& got) {
  ASSERT_EQ(got.type(), CV_32FC1);
  for (int y = 0; y < 5; ++y)
    for (int x = 0; x < 5; ++x) EXPECT_EQ(got.at<float>(y, x), want[y][x]) << "at (" << x << ", " << y << ")";
}

cv::Mat run_cpu_loop(const dm::MaskParams& p, int tasks = 0) {
  cv::Mat depth(5, 5, CV_16UC1, const_cast<uint16_t*>(&kDepth[0][0]));
  cv::Mat mask(5, 5, CV_8UC1, const_cast<uint8_t*>(&kMask[0][0]));
  cv::Mat out(5, 5, CV_32FC1, cv::Scalar(12345.0f));
  dm::MaskJob job;
  job.depth = {depth.data, depth.step[0]}, job.depth_type = dm::DepthType::U16;
  job.mask = {mask.data, mask.step[0]}, job.mask_type = dm::MaskType::U8;
  job.out = {out.ptr<float>(), out.step[0]}, job.rows = 5, job.cols = 5;
  dm::mask_cpu(job, p, tasks);
  return out;
}

}  // namespace

TEST(MaskRule, ThresholdZeroKeepsNonZeroMaskInRange) {
  const float want[5][5] = {{X, X, 1, 8, X}, {X, 2, 2, 2, 2}, {3, 3, X, 3, 3}, {4, X, 4, X, 4}, {X, X, X, X, X}};
  expect_grid(want, run_cpu_loop(base_params()));
}

TEST(MaskRule, LabelsKeepOnlyListedValues) {
  dm::MaskParams p = base_params();
  p.label_count = 2;
  p.labels[0] = 2;
  p.labels[1] = 7;
  p.threshold = 200;  // ignored when labels are given
  const float want[5][5] = {{X, X, X, X, X}, {X, X, 2, X, X}, {3, 3, X, 3, 3}, {X, X, X, X, X}, {X, X, X, X, X}};
  expect_grid(want, run_cpu_loop(p));
}

TEST(MaskRule, InvertAppliesLastButDepthStillMustBeValid) {
  dm::MaskParams p = base_params();
  p.invert = true;
  const float want[5][5] = {{X, X, X, X, X}, {2, X, X, X, X}, {X, X, 3, X, X}, {X, X, X, X, X}, {5, 6, 7, 5, 6}};
  expect_grid(want, run_cpu_loop(p));
}

TEST(MaskRule, ThresholdIsStrictlyGreater) {
  dm::MaskParams p = base_params();
  p.threshold = 2;
  const float want[5][5] = {{X, X, X, X, X}, {X, X, X, 2, 2}, {3, 3, X, 3, 3}, {X, X, X, X, X}, {X, X, X, X, X}};
  expect_grid(want, run_cpu_loop(p));
}

TEST(MaskRule, FloatDepthNonFiniteAndNonPositiveAreInvalid) {
  const dm::MaskParams p = base_params();
  const float inf = std::numeric_limits<float>::infinity();
  const float nan = std::numeric_limits<float>::quiet_NaN();
  const uint8_t keep = 1;
  EXPECT_EQ(dm::mask_pixel(nan, keep, p), X);
  EXPECT_EQ(dm::mask_pixel(inf, keep, p), X);
  EXPECT_EQ(dm::mask_pixel(-inf, keep, p), X);
  EXPECT_EQ(dm::mask_pixel(-2.0f, keep, p), X);
  EXPECT_EQ(dm::mask_pixel(0.0f, keep, p), X);
  EXPECT_EQ(dm::mask_pixel(2.5f, keep, p), 2.5f);  // float depth is metres: no scale
  EXPECT_EQ(dm::mask_pixel(8.0f, keep, p), 8.0f);
  EXPECT_EQ(dm::mask_pixel(8.0001f, keep, p), X);
  EXPECT_EQ(dm::mask_pixel(2.5f, uint8_t{0}, p), X);
}

TEST(MaskRule, SixteenBitMaskUsesFullRange) {
  dm::MaskParams p = base_params();
  p.threshold = 40000;
  EXPECT_EQ(dm::mask_pixel(uint16_t{8}, uint16_t{40001}, p), 2.0f);
  EXPECT_EQ(dm::mask_pixel(uint16_t{8}, uint16_t{40000}, p), X);
  p.label_count = 1;
  p.labels[0] = 65535;
  EXPECT_EQ(dm::mask_pixel(uint16_t{8}, uint16_t{65535}, p), 2.0f);
  EXPECT_EQ(dm::mask_pixel(uint16_t{8}, uint16_t{65534}, p), X);
}

// Decimal bounds at millimetre scale are inclusive for 16-bit depth too, although float(raw) * scale
// rounds above the bound (1500 * 0.001f == 1.50000012f > 1.5f).
TEST(MaskRule, SixteenBitRangeBoundsAreInclusiveAtDecimalScales) {
  dm::MaskParams p;
  for (const double max_m : {0.7, 1.5, 3.0, 0.001, 9.999}) {
    dm::set_depth_range(p, 0.001, 0.0, max_m);
    const auto at = static_cast<uint16_t>(std::lround(max_m * 1000));
    EXPECT_NE(dm::mask_pixel(at, uint8_t{1}, p), p.invalid) << "max " << max_m;
    EXPECT_EQ(dm::mask_pixel(static_cast<uint16_t>(at + 1), uint8_t{1}, p), p.invalid) << "max " << max_m;
  }
  for (const double min_m : {0.3, 0.7, 1.1}) {
    dm::set_depth_range(p, 0.001, min_m, 10.0);
    const auto at = static_cast<uint16_t>(std::lround(min_m * 1000));
    EXPECT_NE(dm::mask_pixel(at, uint8_t{1}, p), p.invalid) << "min " << min_m;
    EXPECT_EQ(dm::mask_pixel(static_cast<uint16_t>(at - 1), uint8_t{1}, p), p.invalid) << "min " << min_m;
  }
  // Every millimetre value: kept exactly when the decimal value is within [0.3, 1.5].
  dm::set_depth_range(p, 0.001, 0.3, 1.5);
  for (int raw = 1; raw < 65536; ++raw) {
    const bool want = raw >= 300 && raw <= 1500;
    ASSERT_EQ(dm::mask_pixel(static_cast<uint16_t>(raw), uint8_t{1}, p) != p.invalid, want) << raw;
  }
  // A range above what 16 bits can hold keeps nothing; max beyond it keeps everything valid.
  dm::set_depth_range(p, 0.001, 70.0, 80.0);
  EXPECT_EQ(dm::mask_pixel(uint16_t{65535}, uint8_t{1}, p), p.invalid);
  dm::set_depth_range(p, 0.001, 0.0, 1000.0);
  EXPECT_NE(dm::mask_pixel(uint16_t{65535}, uint8_t{1}, p), p.invalid);
  EXPECT_EQ(dm::mask_pixel(uint16_t{0}, uint8_t{1}, p), p.invalid);
}

TEST(MaskRule, NanInvalidValueIsWritten) {
  dm::MaskParams p = base_params();
  p.invalid = std::numeric_limits<float>::quiet_NaN();
  EXPECT_TRUE(std::isnan(dm::mask_pixel(uint16_t{0}, uint8_t{1}, p)));
  EXPECT_EQ(dm::mask_pixel(uint16_t{8}, uint8_t{1}, p), 2.0f);
}

TEST(MaskRule, CpuBackendMatchesTheHandCheckedCase) {
  auto backend = dm::make_backend(dm::BackendChoice{dm::BackendKind::Cpu, 0, "test", false}, dm::PlatformInfo{});
  dm::FrameSlot slot(*backend);
  cv::Mat depth(5, 5, CV_16UC1, const_cast<uint16_t*>(&kDepth[0][0]));
  cv::Mat mask(5, 5, CV_8UC1, const_cast<uint8_t*>(&kMask[0][0]));
  slot.set(depth, mask);
  slot.run_mask(base_params());
  const float want[5][5] = {{X, X, 1, 8, X}, {X, 2, 2, 2, 2}, {3, 3, X, 3, 3}, {4, X, 4, X, 4}, {X, X, X, X, X}};
  expect_grid(want, slot.out());
}

TEST(MaskRule, CpuLoopGivesTheSameGridForEveryTaskCount) {
  // 1 band, several of uneven height, one per row, more bands asked for than there are rows; and
  // through the cpu backend's FrameSlot::set_cpu_tasks.
  const float want[5][5] = {{X, X, 1, 8, X}, {X, 2, 2, 2, 2}, {3, 3, X, 3, 3}, {4, X, 4, X, 4}, {X, X, X, X, X}};
  for (int tasks : {0, 1, 2, 3, 5, 64}) {
    SCOPED_TRACE("tasks " + std::to_string(tasks));
    expect_grid(want, run_cpu_loop(base_params(), tasks));
  }
  auto backend = dm::make_backend(dm::BackendChoice{dm::BackendKind::Cpu, 0, "test", false}, dm::PlatformInfo{});
  dm::FrameSlot slot(*backend);
  slot.set(cv::Mat(5, 5, CV_16UC1, const_cast<uint16_t*>(&kDepth[0][0])),
           cv::Mat(5, 5, CV_8UC1, const_cast<uint8_t*>(&kMask[0][0])));
  slot.set_cpu_tasks(2);
  slot.run_mask(base_params());
  expect_grid(want, slot.out());
  EXPECT_THROW(run_cpu_loop(base_params(), -1), std::invalid_argument);
}

// The one plane type of every job: rows by byte steps, bands from a row, typed views, and the
// conversions a job's planes need (mutable to const, typed to type-erased).
TEST(MaskJobPlane, RowsBandsViewsAndConversions) {
  alignas(4) uint8_t bytes[3 * 12] = {};
  const dm::Plane<uint8_t> p{bytes, 12};
  EXPECT_EQ(p.row(2), bytes + 24);
  EXPECT_EQ(p.from_row(1).row(1), bytes + 24);
  EXPECT_EQ(p.from_row(1).step, 12u);
  const dm::Plane<const void> erased = p;
  EXPECT_EQ(erased.data, bytes);
  EXPECT_EQ(erased.step, 12u);
  const dm::ImageView<const uint16_t> v = erased.view<const uint16_t>(3, 6);
  EXPECT_EQ(reinterpret_cast<const uint8_t*>(v.row(1)), bytes + 12);
  EXPECT_EQ(v.rows, 3);
  EXPECT_EQ(v.cols, 6);
  const dm::Plane<const uint8_t> read_only = p;
  EXPECT_EQ(read_only.view(3, 12).row(2), bytes + 24);
}

// check_plane(), shared by the four jobs' validate(), names the job and the plane.
TEST(MaskJobPlane, CheckPlaneNamesTheJobAndThePlane) {
  alignas(4) uint8_t bytes[16] = {};
  const auto message = [](const dm::Plane<const void>& p, size_t pixel, size_t align, int cols) {
    try {
      dm::check_plane("some job", "depth", p, pixel, align, cols);
    } catch (const std::invalid_argument& e) {
      return std::string(e.what());
    }
    return std::string("(no error)");
  };
  EXPECT_EQ(message({bytes, 8}, 2, 2, 4), "(no error)");
  EXPECT_EQ(message({nullptr, 8}, 2, 2, 4), "some job: depth pointer is null");
  EXPECT_EQ(message({bytes + 1, 8}, 2, 2, 4), "some job: depth pointer or row step is not aligned to 2 bytes");
  EXPECT_EQ(message({bytes, 7}, 1, 1, 8), "some job: depth row step 7 bytes is shorter than a row of 8 pixels");
}

TEST(MaskJobValidation, RejectsNullPointersShortStepsAndNegativeSizes) {
  float out[4] = {};
  uint16_t depth[4] = {};
  uint8_t mask[4] = {};
  dm::MaskJob job;
  job.depth = {depth, 4}, job.mask = {mask, 2}, job.out = {out, 8};
  job.rows = 2, job.cols = 2;
  EXPECT_NO_THROW(dm::validate(job));
  dm::MaskJob bad = job;
  bad.mask.data = nullptr;
  EXPECT_THROW(dm::validate(bad), std::invalid_argument);
  bad = job;
  bad.out.step = 4;  // shorter than 2 floats
  EXPECT_THROW(dm::validate(bad), std::invalid_argument);
  bad = job;
  bad.rows = -1;
  EXPECT_THROW(dm::validate(bad), std::invalid_argument);
  bad = job;
  bad.rows = 0;
  bad.depth.data = nullptr;  // an empty job needs no pointers
  EXPECT_NO_THROW(dm::mask_cpu(bad, base_params()));
}
