// The PLY backprojection on the GPU equals the CPU loop exactly (the CPU is the gold): the kernel on
// pitched ROI device images over awkward sizes, depth with zeros, NaN, infinities, negatives and the
// invalid value, several invalid values and intrinsics; and end to end through FrameSlot + Backprojector
// on every GPU backend against the cpu backend, PLY bytes included. Skips without a GPU.
#include <gtest/gtest.h>

#include <cstring>
#include <limits>
#include <opencv2/core.hpp>
#include <random>
#include <tuple>

#include "depthmask/backend.h"
#include "depthmask/config.h"
#include "depthmask/encoders.h"
#include "depthmask/frame.h"
#include "depthmask/frame_writer.h"
#include "depthmask/kernels/backproject.h"
#include "gpu_test_support.h"
#include "test_support.h"

namespace dm = depthmask;

namespace {

constexpr float kNaN = std::numeric_limits<float>::quiet_NaN();
constexpr float kInf = std::numeric_limits<float>::infinity();

// Output depth as the masking pass leaves it: kept metres, the invalid value elsewhere, plus values no
// masking pass writes (NaN, infinities, negatives, denormals) to check the rule's guards on both sides.
[[maybe_unused]] cv::Mat random_out_depth(int rows, int cols, float invalid, std::mt19937& rng) {
  cv::Mat d(rows, cols, CV_32FC1);
  std::uniform_int_distribution<int> pick(0, 19);
  std::uniform_real_distribution<float> metres(0.05f, 12.0f);
  const float specials[] = {0.0f, -0.0f, kNaN, kInf, -kInf, -1.0f, std::numeric_limits<float>::denorm_min(), 5.0f};
  for (int y = 0; y < rows; ++y)
    for (int x = 0; x < cols; ++x) {
      const int k = pick(rng);
      d.at<float>(y, x) = k < 8 ? specials[k] : k < 11 ? invalid : metres(rng);
    }
  return d;
}

struct Lens {
  const char* name;
  dm::Pinhole k;
};

[[maybe_unused]] std::vector<Lens> lenses(int cols, int rows) {
  return {{"centred", dm::make_pinhole(0.78 * cols + 1, 0.78 * cols + 1, 0.5 * (cols - 1), 0.5 * (rows - 1))},
          {"kinect", dm::make_pinhole(525.0, 525.0, 319.5, 239.5)},
          {"odd", dm::make_pinhole(1234.5678, 987.654321, -3.25, 1e4)}};
}

[[maybe_unused]] cv::Mat cpu_gold(const cv::Mat& depth, float invalid, const dm::Pinhole& k) {
  cv::Mat xyz(depth.size(), CV_32FC3, cv::Scalar(777, 777, 777));
  dm::BackprojectJob job;
  job.depth = {depth.ptr<float>(), depth.step[0]};
  job.xyz = {xyz.ptr<float>(), xyz.step[0]};
  job.rows = depth.rows, job.cols = depth.cols, job.invalid = invalid, job.k = k;
  dm::backproject_cpu(job);
  return xyz;
}

using Param = std::tuple<cv::Size, bool /*roi*/>;
class BackprojectParity : public ::testing::TestWithParam<Param> {};

}  // namespace

TEST_P(BackprojectParity, GpuEqualsCpuExactly) {
  DM_REQUIRE_GPU();
#if DEPTHMASK_HAVE_CUDA
  const auto [size, roi] = GetParam();
  std::mt19937 rng(static_cast<unsigned>(size.width * 7919 + size.height * 104729 + roi));
  for (const float invalid : {0.0f, kNaN, -1.0f, 5.0f}) {
    const int ox = roi ? 3 : 0, oy = roi ? 2 : 0;
    const cv::Mat full = random_out_depth(size.height + oy + 4, size.width + ox + 6, invalid, rng);
    const cv::Rect r(ox, oy, size.width, size.height);
    const cv::Mat depth = roi ? full(r) : full(r).clone();  // the CPU reads the ROI with its step too
    for (const Lens& lens : lenses(size.width, size.height)) {
      SCOPED_TRACE(std::string(lens.name) + " invalid " + std::to_string(invalid));
      const cv::Mat gold = cpu_gold(depth, invalid, lens.k);
      const dmtest::DeviceImage d(depth, roi ? 5 : 0, roi ? 1 : 0, roi ? 9 : 0, 0);
      const dmtest::DeviceImage o(cv::Mat(size, CV_32FC3, cv::Scalar(0, 0, 0)), roi ? 2 : 0, roi ? 3 : 0, roi ? 3 : 0,
                                  roi ? 1 : 0);
      dm::BackprojectJob job;
      job.depth = {reinterpret_cast<const float*>(d.roi()), d.pitch()};
      job.xyz = {reinterpret_cast<float*>(o.roi()), o.pitch()};
      job.rows = size.height, job.cols = size.width, job.invalid = invalid, job.k = lens.k;
      dm::launch_backproject(job, nullptr);
      ASSERT_EQ(cudaDeviceSynchronize(), cudaSuccess);
      cv::Mat got(size, CV_32FC3);
      ASSERT_EQ(o.download(got), cudaSuccess);
      // Bitwise: no NaN is ever written (not-kept pixels are (0, 0, 0)), so bits are the honest compare.
      EXPECT_TRUE(dmtest::SameBits(gold, got));
      if (roi) {
        // Nothing outside the ROI was written: the padding still holds the 0x5A fill.
        EXPECT_GT(o.padding_bytes(), 0u);
        EXPECT_EQ(o.padding_changes(), 0) << "bytes written outside the ROI";
      }
    }
  }
#endif
}

namespace {
std::string param_name(const ::testing::TestParamInfo<Param>& info) {
  const cv::Size s = std::get<0>(info.param);
  return std::to_string(s.width) + "x" + std::to_string(s.height) + (std::get<1>(info.param) ? "_roi" : "");
}
}  // namespace

INSTANTIATE_TEST_SUITE_P(Sizes, BackprojectParity,
                         ::testing::Combine(::testing::Values(cv::Size(1, 1), cv::Size(13, 1), cv::Size(1, 13),
                                                              cv::Size(31, 33), cv::Size(33, 31), cv::Size(640, 480),
                                                              cv::Size(639, 481)),
                                            ::testing::Bool()),
                         param_name);

// Every GPU backend, end to end: masking and backprojection through FrameSlot and Backprojector (the
// device view of the slot's output buffer, the XYZ buffer's transfers), and the PLY bytes.
class BackprojectBackendParity : public ::testing::TestWithParam<dm::BackendKind> {};

TEST_P(BackprojectBackendParity, XyzAndPlyEqualCpuBackend) {
  DM_REQUIRE_GPU();
  auto cpu = dmtest::cpu_gold_backend();
  auto gpu = dmtest::backend_of(GetParam());
  ASSERT_TRUE(gpu->device_executes());
  dm::FrameSlot gold_slot(*cpu), slot(*gpu);
  dm::Backprojector gold_bp(*cpu), bp(*gpu);
  std::mt19937 rng(7);
  std::uniform_int_distribution<int> raw(0, 12000), label(0, 3);
  // Sizes that grow and shrink the buffers.
  for (const cv::Size size :
       {cv::Size(639, 481), cv::Size(1, 1), cv::Size(31, 33), cv::Size(640, 480), cv::Size(13, 1)}) {
    cv::Mat depth(size, CV_16UC1), mask(size, CV_8UC1), color(size, CV_8UC3);
    for (int i = 0; i < size.area(); ++i) {
      depth.at<uint16_t>(i) = static_cast<uint16_t>(raw(rng));
      mask.at<uint8_t>(i) = static_cast<uint8_t>(label(rng));
      color.at<cv::Vec3b>(i) = cv::Vec3b(static_cast<uint8_t>(i), static_cast<uint8_t>(i >> 8), 9);
    }
    for (const float invalid : {0.0f, kNaN}) {
      SCOPED_TRACE(std::to_string(size.width) + "x" + std::to_string(size.height) + " invalid " +
                   std::to_string(invalid));
      dm::MaskParams p;
      dm::set_depth_range(p, 0.001, 0.2, 9.0);
      p.invalid = invalid;
      const dm::Pinhole k = dm::make_pinhole(0.78 * size.width + 0.3, 0.81 * size.width + 0.7, 0.5 * size.width - 0.3,
                                             0.5 * size.height + 0.2);
      gold_slot.set(depth, mask, color);
      gold_slot.run_mask(p);
      slot.set(depth, mask, color);
      slot.run_mask(p);
      const cv::Mat& want = gold_bp.run(gold_slot, k, invalid);
      const cv::Mat& got = bp.run(slot, k, invalid);
      EXPECT_TRUE(dmtest::SameBits(want, got));
      EXPECT_EQ(dm::encode_ply(got, slot.color()), dm::encode_ply(want, gold_slot.color()));
    }
  }
}

INSTANTIATE_TEST_SUITE_P(GpuBackends, BackprojectBackendParity,
                         ::testing::Values(dm::BackendKind::Copy, dm::BackendKind::ZeroCopy, dm::BackendKind::Managed),
                         [](const ::testing::TestParamInfo<dm::BackendKind>& i) {
                           return std::string(dm::to_string(i.param));
                         });
