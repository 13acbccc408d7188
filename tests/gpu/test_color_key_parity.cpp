// The colour key (live.mask.color_key) on the GPU equals the CPU exactly: the key kernel against the
// CPU loop over awkward sizes, 8- and 16-bit masks, pitched ROI inputs and keys that wrap or keep the
// outside (nothing outside the output ROI written); every GPU backend's FrameSlot (colour through the
// backend's memory, the key pass, then masking, with erode and both mask types) against the cpu
// backend's; and run_live with the key on every GPU backend frame for frame against the cpu backend.
// Skips without a GPU.
#include <gtest/gtest.h>

#include <map>
#include <opencv2/core.hpp>
#include <random>
#include <string>
#include <tuple>
#include <vector>

#include "color_key_support.h"
#include "depthmask/backend.h"
#include "depthmask/frame.h"
#include "depthmask/kernels/color_key.h"
#include "depthmask/live_runner.h"
#include "depthmask/platform.h"
#include "gpu_test_support.h"
#include "test_support.h"

namespace dm = depthmask;

namespace {

struct NamedKey {
  const char* name;
  dm::ColorKey key;
};

std::vector<NamedKey> keys() {
  dm::ColorKey green;  // green-screen removal
  green.h_min = 35, green.h_max = 85, green.s_min = 60, green.v_min = 40, green.keep_inside = false;
  dm::ColorKey red;  // wraps through 0
  red.h_min = 165, red.h_max = 12, red.s_min = 30, red.v_max = 240;
  return {{"green_outside", green}, {"red_wrap_inside", red}};
}

cv::Mat random_color(int rows, int cols, std::mt19937& rng) {
  cv::Mat c(rows, cols, CV_8UC3);
  cv::randu(c, cv::Scalar::all(0), cv::Scalar::all(256));
  // Some greys and saturated primaries, where H and S are decided by the edge cases.
  std::uniform_int_distribution<int> pick(0, 9);
  for (int y = 0; y < rows; ++y)
    for (int x = 0; x < cols; ++x) {
      const int k = pick(rng);
      cv::Vec3b& p = c.at<cv::Vec3b>(y, x);
      if (k == 0)
        p = cv::Vec3b(p[0], p[0], p[0]);
      else if (k == 1)
        p = cv::Vec3b(0, 0, p[2]);
    }
  return c;
}

cv::Mat random_mask(int rows, int cols, int type, std::mt19937& rng) {
  cv::Mat m(rows, cols, type);
  std::uniform_int_distribution<int> v(0, 3);
  for (int y = 0; y < rows; ++y)
    for (int x = 0; x < cols; ++x) {
      if (type == CV_8UC1)
        m.at<uint8_t>(y, x) = static_cast<uint8_t>(v(rng));
      else
        m.at<uint16_t>(y, x) = static_cast<uint16_t>(v(rng) * 20000);
    }
  return m;
}

cv::Mat random_depth(int rows, int cols) {
  cv::Mat d(rows, cols, CV_16UC1);
  cv::randu(d, cv::Scalar(0), cv::Scalar(9000));  // OpenCV's own fixed-seed generator
  return d;
}

// The key kernel on device images (pitched ROIs when `roi`) against color_key_cpu.
class ColorKeyKernelParity : public ::testing::TestWithParam<std::tuple<cv::Size, int /*mask type*/, bool /*roi*/>> {};

TEST_P(ColorKeyKernelParity, KernelEqualsCpuLoop) {
  DM_REQUIRE_GPU();
#if DEPTHMASK_HAVE_CUDA
  const auto [size, mtype, roi] = GetParam();
  std::mt19937 rng(static_cast<unsigned>(size.area() * 7 + mtype));
  const cv::Mat color = random_color(size.height, size.width, rng);
  const cv::Mat mask = random_mask(size.height, size.width, mtype, rng);
  const int ox = roi ? 3 : 0, oy = roi ? 2 : 0, pc = roi ? 5 : 0, pr = roi ? 1 : 0;
  dmtest::DeviceImage d_color(color, ox, oy, pc, pr), d_mask(mask, ox, oy, pc, pr);
  dmtest::DeviceImage d_out(size, 1, ox, oy, pc, pr);
  ASSERT_EQ(d_out.status(), cudaSuccess);
  ASSERT_EQ(cudaDeviceSynchronize(), cudaSuccess);
  dmtest::TestStream stream;
  ASSERT_EQ(stream.status(), cudaSuccess);
  dm::MaskParams p;
  p.threshold = mtype == CV_8UC1 ? 1 : 20000;  // keep mask values 2 and 3
  for (const NamedKey& k : keys()) {
    SCOPED_TRACE(k.name);
    cv::Mat gold(size, CV_8UC1, cv::Scalar(77));
    dm::ColorKeyJob job;
    job.mask_type = mtype == CV_8UC1 ? dm::MaskType::U8 : dm::MaskType::U16;
    job.rows = size.height, job.cols = size.width;
    job.mask = {mask.data, mask.step[0]};
    job.color = {color.data, color.step[0]};
    job.out = {gold.data, gold.step[0]};
    dm::color_key_cpu(job, p, k.key);
    job.mask = {d_mask.roi(), d_mask.pitch()};
    job.color = {reinterpret_cast<const uint8_t*>(d_color.roi()), d_color.pitch()};
    job.out = {reinterpret_cast<uint8_t*>(d_out.roi()), d_out.pitch()};
    dm::launch_color_key(job, p, k.key, stream.get());
    ASSERT_EQ(cudaStreamSynchronize(stream.get()), cudaSuccess);
    cv::Mat got(size, CV_8UC1);
    ASSERT_EQ(d_out.download(got), cudaSuccess);
    EXPECT_EQ(cv::countNonZero(gold != got), 0);
    EXPECT_EQ(d_out.padding_changes(), 0);
  }
#endif
}

std::string kernel_parity_name(const ::testing::TestParamInfo<ColorKeyKernelParity::ParamType>& info) {
  const cv::Size size = std::get<0>(info.param);
  return std::to_string(size.width) + "x" + std::to_string(size.height) +
         (std::get<1>(info.param) == CV_8UC1 ? "_m8" : "_m16") + (std::get<2>(info.param) ? "_roi" : "");
}

INSTANTIATE_TEST_SUITE_P(Sizes, ColorKeyKernelParity,
                         ::testing::Combine(::testing::Values(cv::Size(1, 1), cv::Size(13, 1), cv::Size(1, 13),
                                                              cv::Size(31, 33), cv::Size(33, 31), cv::Size(640, 480),
                                                              cv::Size(639, 481)),
                                            ::testing::Values(CV_8UC1, CV_16UC1), ::testing::Bool()),
                         kernel_parity_name);

std::string backend_name(const ::testing::TestParamInfo<dm::BackendKind>& i) {
  return std::string(dm::to_string(i.param));
}

// FrameSlot with a key on each GPU backend against the cpu backend: the colour through the backend's
// buffers, the key pass, then masking (plain and eroded, 8- and 16-bit masks, ROI inputs).
class ColorKeyBackendParity : public ::testing::TestWithParam<dm::BackendKind> {};

TEST_P(ColorKeyBackendParity, FrameSlotOutputEqualsCpuBackend) {
  DM_REQUIRE_GPU();
  auto cpu = dmtest::cpu_gold_backend();
  auto gpu = dmtest::backend_of(GetParam());
  dm::FrameSlot gold_slot(*cpu), slot(*gpu);
  std::mt19937 rng(99);
  for (const NamedKey& k : keys()) {
    gold_slot.set_color_key(k.key);
    slot.set_color_key(k.key);
    for (const cv::Size size :
         {cv::Size(639, 481), cv::Size(1, 1), cv::Size(33, 31), cv::Size(13, 1), cv::Size(1, 13)}) {
      for (const int mtype : {CV_8UC1, CV_16UC1}) {
        for (const int erode : {0, 2}) {
          SCOPED_TRACE(std::string(k.name) + " " + std::to_string(size.width) + "x" + std::to_string(size.height) +
                       (mtype == CV_8UC1 ? " m8" : " m16") + " erode " + std::to_string(erode));
          const cv::Mat full_c = random_color(size.height + 3, size.width + 5, rng);
          const cv::Mat color = full_c(cv::Rect(4, 1, size.width, size.height));  // an ROI: not continuous
          const cv::Mat depth = random_depth(size.height, size.width);
          const cv::Mat mask = random_mask(size.height, size.width, mtype, rng);
          dm::MaskParams p;
          dm::set_depth_range(p, 0.001, 0.2, 8.0);
          p.erode = erode;
          p.invalid = -1.0f;
          gold_slot.set(depth, mask, color);
          gold_slot.run_mask(p);
          slot.set(depth, mask, color);
          slot.run_mask(p);
          EXPECT_TRUE(dmtest::same_pixels(gold_slot.out(), slot.out()));
        }
      }
    }
  }
  // No allocation per frame once the largest frame has been seen: the same sizes again.
  const uint64_t before = gpu->stats().allocations;
  for (int i = 0; i < 3; ++i) {
    const cv::Mat color = random_color(481, 639, rng), depth = random_depth(481, 639),
                  mask = random_mask(481, 639, CV_8UC1, rng);
    slot.set(depth, mask, color);
    slot.run_mask(dm::MaskParams{});
  }
  EXPECT_EQ(gpu->stats().allocations, before);
}

INSTANTIATE_TEST_SUITE_P(GpuBackends, ColorKeyBackendParity,
                         ::testing::Values(dm::BackendKind::Copy, dm::BackendKind::ZeroCopy, dm::BackendKind::Managed),
                         backend_name);

// run_live with the key on each GPU backend: frame for frame the cpu backend's outputs, with the
// mask stream and without (the key alone), at odd sizes.
class ColorKeyLiveGpu : public ::testing::TestWithParam<dm::BackendKind> {};

class Keep : public dm::LiveObserver {
 public:
  std::map<uint64_t, cv::Mat> outputs;
  void on_frame(const dm::CapturedFrame& meta, const dm::FrameSlot& slot, uint64_t) override {
    outputs.emplace(meta.sequence, slot.out().clone());
  }
};

std::map<uint64_t, cv::Mat> run_on(dm::MemoryBackend& backend, const dm::Config& c, cv::Size size, bool masks) {
  dmtest::ColorFakeSource src(size.width, size.height, 8);
  src.no_mask = !masks;
  Keep keep;
  const dm::LiveSummary s = dm::run_live(c, backend, src, {}, nullptr, &keep);
  EXPECT_EQ(s.processed, 8u);
  EXPECT_EQ(s.failed, 0u);
  return keep.outputs;
}

TEST_P(ColorKeyLiveGpu, MatchesTheCpuBackendFrameForFrame) {
  DM_REQUIRE_GPU();
  auto cpu = dmtest::cpu_backend();
  auto gpu = dmtest::backend_of(GetParam());
  dm::Config c;
  c.depth.max = 9.0;
  c.live.overflow = dm::Overflow::Block;
  c.live.buffers = 3;
  c.live.stats_interval = 0;
  dm::LiveMaskConfig::ColorKey k;
  k.h[0] = 150, k.h[1] = 30, k.s[0] = 40;  // wraps through 0
  c.live.mask.color_key = k;
  for (const cv::Size size : {cv::Size(33, 31), cv::Size(639, 481)}) {
    for (const bool masks : {true, false}) {
      const auto gold = run_on(*cpu, c, size, masks);
      const auto got = run_on(*gpu, c, size, masks);
      ASSERT_EQ(gold.size(), got.size());
      for (const auto& [seq, out] : got) {
        EXPECT_TRUE(dmtest::SameBits(gold.at(seq), out))
            << size << " frame " << seq << (masks ? " with masks" : " key alone");
        // The cpu gold itself is the cvtColor reference applied to the plain output (see the unit tests).
        const cv::Mat keep = dmtest::key_reference(dmtest::fake_color(seq, size.width, size.height), k);
        EXPECT_EQ(cv::countNonZero((keep == 0) & (out != 0)), 0) << size << " frame " << seq;
      }
    }
  }
}

INSTANTIATE_TEST_SUITE_P(GpuBackends, ColorKeyLiveGpu,
                         ::testing::Values(dm::BackendKind::Copy, dm::BackendKind::ZeroCopy, dm::BackendKind::Managed),
                         backend_name);

}  // namespace
