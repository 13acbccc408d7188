// GPU results equal CPU results exactly: the CPU loop is the gold. Awkward sizes (1x1, 13x1, 1x13,
// 31x33, 33x31, 640x480, 639x481), 16-bit and float depth (with NaN, inf, negatives and zeros), 8- and
// 16-bit masks, every mask rule and invalid value, and ROI / pitched inputs. Skips without a GPU.
#include <gtest/gtest.h>

#include <limits>
#include <opencv2/core.hpp>
#include <random>
#include <tuple>

#include "depthmask/backend.h"
#include "depthmask/frame.h"
#include "depthmask/kernels/mask_kernel.h"
#include "gpu_test_support.h"
#include "test_support.h"

namespace dm = depthmask;
using dmtest::same_pixels;

namespace {

struct Rule {
  const char* name;
  dm::MaskParams params;
};

std::vector<Rule> rules() {
  std::vector<Rule> r;
  dm::MaskParams p;
  dm::set_depth_range(p, 0.001, 0.3, 9.0);
  r.push_back({"threshold0_invalid0", p});
  dm::MaskParams t = p;
  t.threshold = 2;
  t.invalid = std::numeric_limits<float>::quiet_NaN();
  r.push_back({"threshold2_invalidNaN", t});
  dm::MaskParams l = p;
  l.label_count = 3;
  l.labels[0] = 1, l.labels[1] = 4, l.labels[2] = 60000;
  l.invalid = -1.0f;
  r.push_back({"labels_invalidMinus1", l});
  dm::MaskParams inv = p;
  inv.invert = true;
  dm::set_depth_range(inv, 0.0001, 0.3, 6.0);  // APC's 0.1 mm units
  r.push_back({"invert_scale1e-4", inv});
  return r;
}

// Random depth with the awkward values a real sensor or a bad file gives.
cv::Mat random_depth(int rows, int cols, int type, std::mt19937& rng) {
  cv::Mat d(rows, cols, type);
  std::uniform_int_distribution<int> u16(0, 12000), pick(0, 19);
  std::uniform_real_distribution<float> f(-1.0f, 12.0f);
  const float specials[] = {0.0f, -0.0f, std::numeric_limits<float>::quiet_NaN(), std::numeric_limits<float>::infinity(),
                            -std::numeric_limits<float>::infinity(), 0.3f, 9.0f, std::numeric_limits<float>::denorm_min()};
  for (int y = 0; y < rows; ++y)
    for (int x = 0; x < cols; ++x) {
      if (type == CV_16UC1) {
        const int k = pick(rng);
        d.at<uint16_t>(y, x) = static_cast<uint16_t>(k == 0 ? 0 : k == 1 ? 65535 : k == 2 ? 300 : k == 3 ? 9000 : u16(rng));
      } else {
        const int k = pick(rng);
        d.at<float>(y, x) = k < 8 ? specials[k] : f(rng);
      }
    }
  return d;
}

cv::Mat random_mask(int rows, int cols, int type, std::mt19937& rng) {
  cv::Mat m(rows, cols, type);
  std::uniform_int_distribution<int> small(0, 5), big(0, 65535), pick(0, 9);
  for (int y = 0; y < rows; ++y)
    for (int x = 0; x < cols; ++x) {
      const int v = (type == CV_16UC1 && pick(rng) == 0) ? (pick(rng) < 5 ? 60000 : big(rng)) : small(rng);
      if (type == CV_8UC1) m.at<uint8_t>(y, x) = static_cast<uint8_t>(v);
      else m.at<uint16_t>(y, x) = static_cast<uint16_t>(v);
    }
  return m;
}

using ParityParam = dmtest::MaskParityParam;

class KernelParity : public ::testing::TestWithParam<ParityParam> {};

}  // namespace

TEST_P(KernelParity, GpuEqualsCpuExactly) {
  DM_REQUIRE_GPU();
#if DEPTHMASK_HAVE_CUDA
  const auto [size, dtype, mtype, roi] = GetParam();
  std::mt19937 rng(static_cast<unsigned>(size.width * 7919 + size.height * 104729 + dtype * 31 + mtype + roi));
  // Host inputs are ROIs of larger images when `roi`: the CPU reads them with their step too.
  const int ox = roi ? 3 : 0, oy = roi ? 2 : 0;
  cv::Mat depth_full = random_depth(size.height + oy + 5, size.width + ox + 7, dtype, rng);
  cv::Mat mask_full = random_mask(size.height + oy + 5, size.width + ox + 7, mtype, rng);
  const cv::Rect r(ox, oy, size.width, size.height);
  const cv::Mat depth = roi ? depth_full(r) : depth_full(r).clone();
  const cv::Mat mask = roi ? mask_full(r) : mask_full(r).clone();

  for (const Rule& rule : rules()) {
    SCOPED_TRACE(rule.name);
    const cv::Mat gold = dmtest::mask_cpu_gold(depth, mask, rule.params);
    const dmtest::DeviceImage d(depth, roi ? 5 : 0, roi ? 1 : 0, roi ? 9 : 0, 0);
    const dmtest::DeviceImage m(mask, roi ? 1 : 0, roi ? 4 : 0, roi ? 17 : 0, 0);
    const dmtest::DeviceImage o(cv::Mat(size, CV_32FC1, cv::Scalar(0)), roi ? 2 : 0, roi ? 3 : 0, roi ? 3 : 0, 0);
    dm::MaskJob job;
    job.depth = d.roi(), job.depth_step = d.pitch();
    job.depth_type = dtype == CV_16UC1 ? dm::DepthType::U16 : dm::DepthType::F32;
    job.mask = m.roi(), job.mask_step = m.pitch();
    job.mask_type = mtype == CV_8UC1 ? dm::MaskType::U8 : dm::MaskType::U16;
    job.out = reinterpret_cast<float*>(o.roi()), job.out_step = o.pitch();
    job.rows = size.height, job.cols = size.width;
    dm::launch_mask(job, rule.params, nullptr);
    ASSERT_EQ(cudaDeviceSynchronize(), cudaSuccess);
    cv::Mat got(size, CV_32FC1);
    ASSERT_EQ(o.download(got), cudaSuccess);
    EXPECT_TRUE(same_pixels(gold, got));
    if (roi) {
      // Nothing outside the ROI was written: the padding around it still holds the 0x5A fill.
      const size_t es = sizeof(float);
      std::vector<uint8_t> row;
      ASSERT_EQ(o.read_row(3, row), cudaSuccess);
      for (size_t b = 0; b < 2 * es; ++b) EXPECT_EQ(row[b], 0x5A) << "left padding byte " << b;
      for (size_t b = (2 + size.width) * es; b < (2 + size.width + 3) * es; ++b) EXPECT_EQ(row[b], 0x5A) << "right padding byte " << b;
    }
  }
#endif
}

INSTANTIATE_TEST_SUITE_P(Sizes, KernelParity, dmtest::mask_parity_grid(), dmtest::mask_parity_name);

// Every GPU backend, end to end through FrameSlot (its transfers and heads), against the cpu backend.
class BackendParity : public ::testing::TestWithParam<dm::BackendKind> {};

TEST_P(BackendParity, FrameSlotOutputEqualsCpuBackend) {
  DM_REQUIRE_GPU();
  auto cpu = dm::make_backend(dm::BackendChoice{dm::BackendKind::Cpu, 0, "gold", false}, dmtest::platform());
  const auto choice = dm::choose_backend(dm::BackendConfig{GetParam(), 0}, dmtest::platform());
  auto gpu = dm::make_backend(choice, dmtest::platform());
  dm::FrameSlot gold_slot(*cpu), slot(*gpu);
  std::mt19937 rng(42);
  // Sizes in an order that grows and shrinks the slot's buffers, so transfers of part of a buffer are covered.
  for (const cv::Size size : {cv::Size(639, 481), cv::Size(1, 1), cv::Size(13, 1), cv::Size(1, 13), cv::Size(31, 33),
                              cv::Size(640, 480), cv::Size(33, 31)}) {
    for (const auto& [dtype, mtype] : {std::pair{CV_16UC1, CV_8UC1}, std::pair{CV_16UC1, CV_16UC1},
                                      std::pair{CV_32FC1, CV_8UC1}, std::pair{CV_32FC1, CV_16UC1}}) {
      const cv::Mat full_d = random_depth(size.height + 4, size.width + 4, dtype, rng);
      const cv::Mat full_m = random_mask(size.height + 4, size.width + 4, mtype, rng);
      const cv::Mat depth = full_d(cv::Rect(2, 1, size.width, size.height));  // ROI input
      const cv::Mat mask = full_m(cv::Rect(1, 3, size.width, size.height));
      for (const Rule& rule : rules()) {
        SCOPED_TRACE(std::string(rule.name) + " " + std::to_string(size.width) + "x" + std::to_string(size.height));
        gold_slot.set(depth, mask);
        gold_slot.run_mask(rule.params);
        slot.set(depth, mask);
        slot.run_mask(rule.params);
        EXPECT_TRUE(same_pixels(gold_slot.out(), slot.out()));
      }
    }
  }
}

INSTANTIATE_TEST_SUITE_P(GpuBackends, BackendParity,
                         ::testing::Values(dm::BackendKind::Copy, dm::BackendKind::ZeroCopy, dm::BackendKind::Managed),
                         [](const ::testing::TestParamInfo<dm::BackendKind>& i) { return std::string(dm::to_string(i.param)); });
