// GPU results equal CPU results exactly for the depth encodings and mask kinds: APC decoding, extra
// invalid raw values, threshold_fraction (per-type integer thresholds), and erode 1..4 (and the
// largest, 16) with the fused shared-memory tile kernel. Awkward sizes (1x1, 13x1, 1x13, 31x33, 33x31,
// 640x480, 639x481), both depth and mask types, ROI / pitched inputs. The CPU loop is the gold.
// Skips without a GPU.
#include <gtest/gtest.h>

#include <limits>
#include <opencv2/core.hpp>
#include <random>
#include <string>
#include <tuple>
#include <vector>

#include "depthmask/backend.h"
#include "depthmask/frame.h"
#include "depthmask/kernels/mask_kernel.h"
#include "gpu_test_support.h"
#include "test_support.h"

namespace dm = depthmask;
using dmtest::same_pixels;

namespace {

uint16_t apc_encode(uint16_t v) { return static_cast<uint16_t>(((uint32_t{v} << 3) | (uint32_t{v} >> 13)) & 0xFFFFu); }

struct KindRule {
  std::string name;
  dm::MaskParams params;
};

std::vector<KindRule> kind_rules() {
  std::vector<KindRule> r;
  dm::MaskParams base;
  dm::set_depth_range(base, 0.001, 0.3, 9.0);

  dm::MaskParams apc;
  dm::set_depth_range(apc, 0.0001, 0.2, 1.5);
  apc.apc_encoding = true;
  r.push_back({"apc", apc});
  dm::MaskParams apc_inv = apc;
  apc_inv.invalid_raw_count = 3;
  apc_inv.invalid_raw[0] = 65535, apc_inv.invalid_raw[1] = 44000, apc_inv.invalid_raw[2] = 7;
  apc_inv.invalid = std::numeric_limits<float>::quiet_NaN();
  r.push_back({"apc_invalid_values_nan", apc_inv});
  dm::MaskParams plain_inv = base;
  plain_inv.invalid_raw_count = 2;
  plain_inv.invalid_raw[0] = 65535, plain_inv.invalid_raw[1] = 1000;
  plain_inv.invalid = -1.0f;
  r.push_back({"invalid_values", plain_inv});
  dm::MaskParams frac = base;
  dm::set_threshold_fraction(frac, 0.30941);
  frac.invalid = -1.0f;
  r.push_back({"fraction", frac});
  dm::MaskParams frac_inv = frac;
  frac_inv.invert = true;
  r.push_back({"fraction_invert", frac_inv});
  for (int n = 1; n <= 4; ++n) {
    dm::MaskParams e = base;
    e.erode = n;
    r.push_back({"erode" + std::to_string(n), e});
  }
  dm::MaskParams e_labels = base;
  e_labels.erode = 2;
  e_labels.label_count = 2;
  e_labels.labels[0] = 1, e_labels.labels[1] = 60000;
  r.push_back({"erode2_labels", e_labels});
  dm::MaskParams e_frac = frac_inv;
  e_frac.erode = 3;
  r.push_back({"erode3_fraction_invert", e_frac});
  dm::MaskParams e_apc = apc_inv;
  e_apc.erode = 4;
  r.push_back({"erode4_apc_invalid_values", e_apc});
  dm::MaskParams e_max = base;
  e_max.erode = dm::kMaxErode;
  e_max.invert = true;
  r.push_back({"erode16_invert", e_max});
  return r;
}

// 16-bit words over the whole range (APC words look random) with the markers and boundary values
// the rules test; float depth with the special values of a bad file.
cv::Mat random_depth(int rows, int cols, int type, std::mt19937& rng) {
  cv::Mat d(rows, cols, type);
  std::uniform_int_distribution<int> word(0, 65535), near(1500, 16000), pick(0, 19);
  std::uniform_real_distribution<float> f(-1.0f, 12.0f);
  const uint16_t specials[] = {0, 65535, 44000, 7, 1000, apc_encode(2000), apc_encode(15000), apc_encode(15001)};
  const float fspecials[] = {
      0.0f, -0.0f, std::numeric_limits<float>::quiet_NaN(), std::numeric_limits<float>::infinity(), 0.3f, 9.0f};
  for (int y = 0; y < rows; ++y)
    for (int x = 0; x < cols; ++x) {
      const int k = pick(rng);
      if (type == CV_16UC1)
        d.at<uint16_t>(y, x) = k < 8    ? specials[k]
                               : k < 13 ? apc_encode(static_cast<uint16_t>(near(rng)))
                                        : static_cast<uint16_t>(k < 16 ? near(rng) : word(rng));
      else
        d.at<float>(y, x) = k < 6 ? fspecials[k] : f(rng);
    }
  return d;
}

// Blocky masks (regions of 1..9 pixels) so erode keeps some pixels and drops others, plus single
// pixel noise; both types hold values on both sides of the 0.30941 fraction threshold (78 | 79 for
// 8-bit, 20277 | 20278 for 16-bit).
cv::Mat random_mask(int rows, int cols, int type, std::mt19937& rng) {
  cv::Mat m(rows, cols, type);
  std::uniform_int_distribution<int> cell(1, 9), pick(0, 99);
  const uint32_t v8[] = {0, 1, 2, 200, 255, 79, 78};
  const uint32_t v16[] = {0, 1, 20277, 20278, 60000, 65535, 40000};
  const int cw = cell(rng), ch = cell(rng);
  std::vector<int> grid(static_cast<size_t>((rows / ch + 1) * (cols / cw + 1)));
  for (auto& g : grid) g = pick(rng) < 80 ? 4 : pick(rng) % 7;  // mostly kept by every rule (255 / 65535)
  for (int y = 0; y < rows; ++y)
    for (int x = 0; x < cols; ++x) {
      int k = grid[static_cast<size_t>((y / ch) * (cols / cw + 1) + x / cw)];
      if (pick(rng) < 2) k = pick(rng) % 7;
      if (type == CV_8UC1)
        m.at<uint8_t>(y, x) = static_cast<uint8_t>(v8[k]);
      else
        m.at<uint16_t>(y, x) = static_cast<uint16_t>(v16[k]);
    }
  return m;
}

using KindParam = dmtest::MaskParityParam;

class MaskKindsParity : public ::testing::TestWithParam<KindParam> {};

}  // namespace

TEST_P(MaskKindsParity, GpuEqualsCpuExactly) {
  DM_REQUIRE_GPU();
#if DEPTHMASK_HAVE_CUDA
  const auto [size, dtype, mtype, roi] = GetParam();
  std::mt19937 rng(static_cast<unsigned>(size.width * 7919 + size.height * 104729 + dtype * 31 + mtype + roi + 5));
  const int ox = roi ? 3 : 0, oy = roi ? 2 : 0;
  const cv::Mat depth_full = random_depth(size.height + oy + 5, size.width + ox + 7, dtype, rng);
  // The mask's surroundings are all zero: a kernel whose halo read past the ROI would erode the ROI's
  // edge pixels, which the gold keeps (outside the image counts as passing).
  cv::Mat mask_full(size.height + oy + 5, size.width + ox + 7, mtype, cv::Scalar(0));
  const cv::Rect r(ox, oy, size.width, size.height);
  random_mask(size.height, size.width, mtype, rng).copyTo(mask_full(r));
  const cv::Mat depth = roi ? depth_full(r) : depth_full(r).clone();
  const cv::Mat mask = roi ? mask_full(r) : mask_full(r).clone();

  for (const KindRule& rule : kind_rules()) {
    SCOPED_TRACE(rule.name);
    const cv::Mat gold = dmtest::mask_cpu_gold(depth, mask, rule.params);
    // The 0x5A fill around the device ROIs (a mask value that passes most tests) must not leak into
    // results: the erode kernel's halo must never read outside the ROI.
    const dmtest::DeviceImage d(depth, roi ? 5 : 0, roi ? 1 : 0, roi ? 9 : 0, roi ? 2 : 0);
    // The device mask's ROI sits inside zeros too (not the 0x5A fill), for the same reason: the ROI
    // starts at (1, 4) of a zero image 17 columns and 3 rows larger around it.
    cv::Mat mask_host = mask;
    if (roi) {
      mask_host = cv::Mat(size.height + 4 + 3, size.width + 1 + 17, mtype, cv::Scalar(0));
      mask.copyTo(mask_host(cv::Rect(1, 4, size.width, size.height)));
    }
    const dmtest::DeviceImage m(mask_host, 0, 0, 0, 0);
    const char* mask_roi = roi ? m.roi() + 4 * m.pitch() + mask.elemSize() : m.roi();
    const dmtest::DeviceImage o(cv::Mat(size, CV_32FC1, cv::Scalar(0)), roi ? 2 : 0, roi ? 3 : 0, roi ? 3 : 0,
                                roi ? 1 : 0);
    dm::MaskJob job;
    job.depth = {d.roi(), d.pitch()};
    job.depth_type = dtype == CV_16UC1 ? dm::DepthType::U16 : dm::DepthType::F32;
    job.mask = {mask_roi, m.pitch()};
    job.mask_type = mtype == CV_8UC1 ? dm::MaskType::U8 : dm::MaskType::U16;
    job.out = {reinterpret_cast<float*>(o.roi()), o.pitch()};
    job.rows = size.height, job.cols = size.width;
    dm::launch_mask(job, rule.params, nullptr);
    ASSERT_EQ(cudaDeviceSynchronize(), cudaSuccess);
    cv::Mat got(size, CV_32FC1);
    ASSERT_EQ(o.download(got), cudaSuccess);
    EXPECT_TRUE(same_pixels(gold, got));
    if (roi) {
      // Nothing outside the output ROI was written: the rows above and below and the padding beside
      // it still hold the 0x5A fill.
      const size_t es = sizeof(float);
      std::vector<uint8_t> row;
      for (const int y : {2, 3, 3 + size.height - 1, 3 + size.height}) {
        ASSERT_EQ(o.read_row(y, row), cudaSuccess);
        const bool inside = y >= 3 && y < 3 + size.height;
        for (size_t b = 0; b < (inside ? 2 * es : (2 + size.width + 3) * es); ++b) {
          ASSERT_EQ(row[b], 0x5A) << "row " << y << " byte " << b;
        }
        if (inside) {
          for (size_t b = (2 + size.width) * es; b < (2 + size.width + 3) * es; ++b) {
            ASSERT_EQ(row[b], 0x5A) << "row " << y << " right padding byte " << b;
          }
        }
      }
    }
  }
#endif
}

INSTANTIATE_TEST_SUITE_P(Sizes, MaskKindsParity, dmtest::mask_parity_grid(), dmtest::mask_parity_name);

// Every GPU backend through FrameSlot (its transfers, and the per-instance pattern of one depth upload
// with several masks) against the cpu backend.
class MaskKindsBackendParity : public ::testing::TestWithParam<dm::BackendKind> {};

TEST_P(MaskKindsBackendParity, FrameSlotOutputEqualsCpuBackend) {
  DM_REQUIRE_GPU();
  auto cpu = dmtest::cpu_gold_backend();
  auto gpu = dmtest::backend_of(GetParam());
  dm::FrameSlot gold_slot(*cpu), slot(*gpu);
  std::mt19937 rng(4242);
  for (const cv::Size size :
       {cv::Size(639, 481), cv::Size(1, 1), cv::Size(33, 31), cv::Size(13, 1), cv::Size(640, 480)}) {
    for (const auto& [dtype, mtype] :
         {std::pair{CV_16UC1, CV_8UC1}, std::pair{CV_16UC1, CV_16UC1}, std::pair{CV_32FC1, CV_8UC1}}) {
      const cv::Mat full_d = random_depth(size.height + 4, size.width + 4, dtype, rng);
      const cv::Mat depth = full_d(cv::Rect(2, 1, size.width, size.height));
      for (const KindRule& rule : kind_rules()) {
        SCOPED_TRACE(rule.name + " " + std::to_string(size.width) + "x" + std::to_string(size.height));
        // Two masks over the same depth, as mask.per_instance does.
        for (int instance = 0; instance < 2; ++instance) {
          const cv::Mat mask = random_mask(size.height, size.width, mtype, rng);
          gold_slot.set(depth, mask);
          gold_slot.run_mask(rule.params);
          slot.set(depth, mask);
          slot.run_mask(rule.params);
          EXPECT_TRUE(same_pixels(gold_slot.out(), slot.out()));
        }
      }
    }
  }
}

INSTANTIATE_TEST_SUITE_P(GpuBackends, MaskKindsBackendParity,
                         ::testing::Values(dm::BackendKind::Copy, dm::BackendKind::ZeroCopy, dm::BackendKind::Managed),
                         [](const ::testing::TestParamInfo<dm::BackendKind>& i) {
                           return std::string(dm::to_string(i.param));
                         });
