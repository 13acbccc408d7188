// The `reason` pass on the GPU equals the CPU exactly, on every cause: the kernels against the CPU
// loop on pitched device ROIs (nothing outside the output ROI written), and every GPU backend's
// FrameSlot against the cpu backend's on the frames of reason_support.h (labels, thresholds, invert,
// erode, markers, APC encoding, a live band, a plane of test results, the colour key, resample and
// reproject) at awkward sizes, codes and masked depth alike. Skips without a GPU.
#include <gtest/gtest.h>

#include <opencv2/core.hpp>

#include <random>
#include <string>
#include <tuple>

#include "depthmask/backend.h"
#include "depthmask/frame.h"
#include "depthmask/kernels/reason.h"
#include "gpu_test_support.h"
#include "reason_support.h"
#include "test_support.h"

namespace dm = depthmask;

namespace {

class ReasonKernelParity : public ::testing::TestWithParam<std::tuple<cv::Size, bool /*float depth*/, int /*erode*/>> {
};

TEST_P(ReasonKernelParity, KernelEqualsCpuLoop) {
  DM_REQUIRE_GPU();
#if DEPTHMASK_HAVE_CUDA
  const auto [size, float_depth, erode] = GetParam();
  std::mt19937 rng(static_cast<unsigned>(size.area() * 3 + erode));
  const cv::Mat depth = float_depth ? dmtest::reason_depth_f32(size, rng) : dmtest::reason_depth_u16(size, rng);
  const cv::Mat mask = dmtest::reason_mask(size, CV_8UC1, rng);
  dm::MaskParams rule, configured;
  dm::set_depth_range(configured, 0.001, 0.3, 5.0);
  rule = configured;
  dm::set_depth_range(rule, 0.001, 1.0, 3.0);  // a band
  rule.label_count = 2, rule.labels[0] = 1, rule.labels[1] = 2;
  rule.erode = erode;
  const dm::ReasonParams p = dm::reason_params(rule, configured);

  dm::ReasonJob job;
  job.depth_type = float_depth ? dm::DepthType::F32 : dm::DepthType::U16;
  job.mask_type = dm::MaskType::U8;
  job.rows = size.height, job.cols = size.width;
  cv::Mat gold(size, CV_8UC1, cv::Scalar(77)), scratch(size, CV_8UC1);
  job.depth = {depth.data, depth.step[0]};
  job.mask = {mask.data, mask.step[0]};
  job.out = {gold.data, gold.step[0]};
  job.scratch = {scratch.data, scratch.step[0]};
  dm::reason_cpu(job, p);

  dmtest::DeviceImage d_depth(depth, 3, 2, 5, 1), d_mask(mask, 3, 2, 5, 1);
  dmtest::DeviceImage d_out(size, 1, 3, 2, 5, 1), d_scratch(size, 1, 0, 0, 0, 0);
  ASSERT_EQ(d_out.status(), cudaSuccess);
  ASSERT_EQ(d_scratch.status(), cudaSuccess);
  ASSERT_EQ(cudaDeviceSynchronize(), cudaSuccess);
  dmtest::TestStream stream;
  ASSERT_EQ(stream.status(), cudaSuccess);
  job.depth = {d_depth.roi(), d_depth.pitch()};
  job.mask = {d_mask.roi(), d_mask.pitch()};
  job.out = {reinterpret_cast<uint8_t*>(d_out.roi()), d_out.pitch()};
  job.scratch = {reinterpret_cast<uint8_t*>(d_scratch.roi()), d_scratch.pitch()};
  dm::launch_reason(job, p, stream.get());
  ASSERT_EQ(cudaStreamSynchronize(stream.get()), cudaSuccess);
  cv::Mat got(size, CV_8UC1);
  ASSERT_EQ(d_out.download(got), cudaSuccess);
  EXPECT_EQ(cv::countNonZero(gold != got), 0);
  EXPECT_EQ(d_out.padding_changes(), 0);
#endif
}

INSTANTIATE_TEST_SUITE_P(Sizes, ReasonKernelParity,
                         ::testing::Combine(::testing::Values(cv::Size(1, 1), cv::Size(13, 1), cv::Size(1, 13),
                                                              cv::Size(31, 33), cv::Size(639, 481)),
                                            ::testing::Bool(), ::testing::Values(0, 3)),
                         [](const ::testing::TestParamInfo<ReasonKernelParity::ParamType>& i) {
                           const cv::Size s = std::get<0>(i.param);
                           return std::to_string(s.width) + "x" + std::to_string(s.height) +
                                  (std::get<1>(i.param) ? "_f32" : "_u16") + "_erode" +
                                  std::to_string(std::get<2>(i.param));
                         });

class ReasonBackendParity : public ::testing::TestWithParam<dm::BackendKind> {};

TEST_P(ReasonBackendParity, FrameSlotCodesEqualCpuBackend) {
  DM_REQUIRE_GPU();
  auto cpu = dmtest::cpu_gold_backend();
  auto gpu = dmtest::backend_of(GetParam());
  dm::FrameSlot gold_slot(*cpu), slot(*gpu);
  for (const cv::Size size :
       {cv::Size(639, 481), cv::Size(1, 1), cv::Size(33, 31), cv::Size(13, 1), cv::Size(96, 72)}) {
    for (const dmtest::ReasonCase& c : dmtest::reason_cases(size, static_cast<unsigned>(size.area()))) {
      SCOPED_TRACE(c.name + " " + std::to_string(size.width) + "x" + std::to_string(size.height));
      const auto [gold_out, gold_codes] = dmtest::run_reason_case(gold_slot, c);
      const auto [out, codes] = dmtest::run_reason_case(slot, c);
      EXPECT_TRUE(dmtest::same_pixels(gold_out, out));
      ASSERT_EQ(codes.size(), gold_codes.size());
      EXPECT_EQ(cv::countNonZero(codes != gold_codes), 0);
      EXPECT_TRUE(dmtest::codes_match_output(out, codes, c.params.invalid));
    }
  }
}

INSTANTIATE_TEST_SUITE_P(GpuBackends, ReasonBackendParity,
                         ::testing::Values(dm::BackendKind::Copy, dm::BackendKind::ZeroCopy, dm::BackendKind::Managed),
                         [](const ::testing::TestParamInfo<dm::BackendKind>& i) {
                           return std::string(dm::to_string(i.param));
                         });

}  // namespace
