// GPU results equal CPU results exactly: the CPU loop is the gold. Awkward sizes (1x1, 13x1, 1x13,
// 31x33, 33x31, 640x480, 639x481; 1920x1080 for the variants), 16-bit and float depth (with NaN, inf,
// negatives and zeros), 8- and 16-bit masks, every mask rule and invalid value, and ROI / pitched
// inputs. Every kernel variant of mask_variants.h and the batched launch are checked the same way,
// over row layouts that put each row's start at every 16-byte phase. Skips without a GPU.
#include <gtest/gtest.h>

#include <algorithm>
#include <limits>
#include <memory>
#include <opencv2/core.hpp>
#include <random>
#include <string>
#include <tuple>
#include <vector>

#include "depthmask/backend.h"
#include "depthmask/frame.h"
#include "depthmask/kernels/mask_kernel.h"
#include "depthmask/kernels/mask_variants.h"
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
  dm::MaskParams apc = p;  // the CPU loop's general path: APC words, an extra invalid marker, a fraction
  apc.apc_encoding = true;
  apc.invalid_raw_count = 1;
  apc.invalid_raw[0] = 65535;
  dm::set_threshold_fraction(apc, 0.5);
  r.push_back({"apc_marker_fraction", apc});
  return r;
}

// Random depth with the awkward values a real sensor or a bad file gives.
cv::Mat random_depth(int rows, int cols, int type, std::mt19937& rng) {
  cv::Mat d(rows, cols, type);
  std::uniform_int_distribution<int> u16(0, 12000), pick(0, 19);
  std::uniform_real_distribution<float> f(-1.0f, 12.0f);
  const float specials[] = {0.0f,
                            -0.0f,
                            std::numeric_limits<float>::quiet_NaN(),
                            std::numeric_limits<float>::infinity(),
                            -std::numeric_limits<float>::infinity(),
                            0.3f,
                            9.0f,
                            std::numeric_limits<float>::denorm_min()};
  for (int y = 0; y < rows; ++y)
    for (int x = 0; x < cols; ++x) {
      if (type == CV_16UC1) {
        const int k = pick(rng);
        d.at<uint16_t>(y, x) = static_cast<uint16_t>(k == 0   ? 0
                                                     : k == 1 ? 65535
                                                     : k == 2 ? 300
                                                     : k == 3 ? 9000
                                                              : u16(rng));
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
      // Diagonal bands of zeros, 8 pixels wide: whole chunks that the kept-only walks skip (and, with
      // `invert`, whole chunks kept), beside chunks that mix kept and dropped pixels.
      if ((x / 8 + y) % 3 == 0) {
        if (type == CV_8UC1)
          m.at<uint8_t>(y, x) = 0;
        else
          m.at<uint16_t>(y, x) = 0;
        continue;
      }
      const int v = (type == CV_16UC1 && pick(rng) == 0) ? (pick(rng) < 5 ? 60000 : big(rng)) : small(rng);
      if (type == CV_8UC1)
        m.at<uint8_t>(y, x) = static_cast<uint8_t>(v);
      else
        m.at<uint16_t>(y, x) = static_cast<uint16_t>(v);
    }
  return m;
}

#if DEPTHMASK_HAVE_CUDA
// The job of device images d, m (ROIs, their pitches) writing into o.
dm::MaskJob device_job(const dmtest::DeviceImage& d, int dtype, const dmtest::DeviceImage& m, int mtype,
                       const dmtest::DeviceImage& o, cv::Size size) {
  dm::MaskJob job;
  job.depth = {d.roi(), d.pitch()};
  job.depth_type = dtype == CV_16UC1 ? dm::DepthType::U16 : dm::DepthType::F32;
  job.mask = {m.roi(), m.pitch()};
  job.mask_type = mtype == CV_8UC1 ? dm::MaskType::U8 : dm::MaskType::U16;
  job.out = {reinterpret_cast<float*>(o.roi()), o.pitch()};
  job.rows = size.height, job.cols = size.width;
  return job;
}
#endif

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
    dm::launch_mask(device_job(d, dtype, m, mtype, o, size), rule.params, nullptr);
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
      for (size_t b = (2 + size.width) * es; b < (2 + size.width + 3) * es; ++b)
        EXPECT_EQ(row[b], 0x5A) << "right padding byte " << b;
    }
  }
#endif
}

INSTANTIATE_TEST_SUITE_P(Sizes, KernelParity, dmtest::mask_parity_grid(), dmtest::mask_parity_name);

// Every GPU backend, end to end through FrameSlot (its transfers and heads), against the cpu backend.
class BackendParity : public ::testing::TestWithParam<dm::BackendKind> {};

TEST_P(BackendParity, FrameSlotOutputEqualsCpuBackend) {
  DM_REQUIRE_GPU();
  auto cpu = dmtest::cpu_gold_backend();
  auto gpu = dmtest::backend_of(GetParam());
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

// The copy backend's row bands (uploads, kernels and downloads overlapping on two streams): any band
// count, more bands than rows included, equals the cpu backend; and so does a slot whose thread
// waits blocked (the batch pipeline's way) instead of spinning.
TEST(CopyBands, EveryBandCountAndWaitEqualsCpuBackend) {
  DM_REQUIRE_GPU();
  auto cpu = dmtest::cpu_gold_backend();
  auto gpu = dmtest::backend_of(dm::BackendKind::Copy);
  dm::FrameSlot gold_slot(*cpu), slot(*gpu);
  const std::vector<Rule> all_rules = rules();
  std::mt19937 rng(7);
  for (const cv::Size size : {cv::Size(1, 1), cv::Size(13, 1), cv::Size(1, 13), cv::Size(31, 33), cv::Size(639, 481)}) {
    for (const auto& [dtype, mtype] : {std::pair{CV_16UC1, CV_8UC1}, std::pair{CV_32FC1, CV_16UC1}}) {
      const cv::Mat depth = random_depth(size.height, size.width, dtype, rng);
      const cv::Mat mask = random_mask(size.height, size.width, mtype, rng);
      for (const int bands : {0, 1, 2, 3, 7, 16}) {
        for (const dm::Wait wait : {dm::Wait::Spin, dm::Wait::Block}) {
          const Rule& rule = all_rules[static_cast<size_t>(bands) % all_rules.size()];
          SCOPED_TRACE(std::string(rule.name) + " " + std::to_string(size.width) + "x" + std::to_string(size.height) +
                       " bands " + std::to_string(bands) + (wait == dm::Wait::Block ? " blocking" : " spinning"));
          gold_slot.set(depth, mask);
          gold_slot.run_mask(rule.params);
          slot.set_copy_bands(bands);
          slot.set_wait(wait);
          slot.set(depth, mask);
          slot.run_mask(rule.params);
          EXPECT_TRUE(same_pixels(gold_slot.out(), slot.out()));
        }
      }
    }
  }
}

INSTANTIATE_TEST_SUITE_P(GpuBackends, BackendParity,
                         ::testing::Values(dm::BackendKind::Copy, dm::BackendKind::ZeroCopy, dm::BackendKind::Managed),
                         [](const ::testing::TestParamInfo<dm::BackendKind>& i) {
                           return std::string(dm::to_string(i.param));
                         });

// ---- Every kernel variant, and the batched launch ----

namespace {

// How a plane's rows sit in device memory.
//   pitched:   cudaMallocPitch rows, ROI at (0, 0): every row 16-byte aligned.
//   packed:    step = cols * pixel size: with an odd width each row starts at another 16-byte phase.
//   roi_same:  one pixel offset (1..3) in every plane of a pitched image: the planes co-align after
//              a scalar head.
//   roi_mixed: different offsets per plane and odd steps (in pixels): rows whose planes cannot
//              co-align take the scalar path, others a head of another length per row.
enum class Layout { Pitched, Packed, RoiSame, RoiMixed };

const char* to_string(Layout l) {
  switch (l) {
    case Layout::Pitched:
      return "pitched";
    case Layout::Packed:
      return "packed";
    case Layout::RoiSame:
      return "roi_same";
    case Layout::RoiMixed:
      return "roi_mixed";
  }
  return "?";
}

#if DEPTHMASK_HAVE_CUDA
// `src` uploaded into a device image laid out as `l`; plane 0 depth, 1 mask, 2 output.
std::unique_ptr<dmtest::DeviceImage> device_image(const cv::Mat& src, Layout l, int plane) {
  const int w = src.cols;
  const size_t elem = src.elemSize();
  switch (l) {
    case Layout::Pitched:
      return std::make_unique<dmtest::DeviceImage>(src, 0, 0, 0, 0);
    case Layout::Packed:
      return std::make_unique<dmtest::DeviceImage>(src, 0, 0, 0, 1, static_cast<size_t>(w) * elem);
    case Layout::RoiSame: {
      const int k = 1 + w % 3;
      return std::make_unique<dmtest::DeviceImage>(src, k, 1, 2, 1);
    }
    case Layout::RoiMixed: {
      const int k = 1 + plane;
      const size_t step_px = static_cast<size_t>((w + k + 3) | 1) + 2 * static_cast<size_t>(plane);
      return std::make_unique<dmtest::DeviceImage>(src, k, plane, 3, 1, step_px * elem);
    }
  }
  return nullptr;
}
#endif

// The rules plus erode (every variant erodes with the one erode kernel; checked through each entry).
[[maybe_unused]] std::vector<Rule> rules_with_erode() {
  std::vector<Rule> r = rules();
  dm::MaskParams e = r.front().params;
  e.erode = 2;
  r.push_back({"erode2", e});
  return r;
}

// All eight variants (six for device memory, two kept-only ones for mapped memory), listed here (not
// from mask_kernel_variants()) so that the test names exist in every build; the test checks the build
// lists each one.
const dm::MaskKernelVariant kVariants[] = {
    {dm::MaskBlockShape::Threads32x8, true},       {dm::MaskBlockShape::Threads32x8, false},
    {dm::MaskBlockShape::Threads32x32, true},      {dm::MaskBlockShape::Threads32x32, false},
    {dm::MaskBlockShape::Rows256, true},           {dm::MaskBlockShape::Rows256x2, true},
    {dm::MaskBlockShape::Threads32x8, true, true}, {dm::MaskBlockShape::Threads32x8, false, true}};

std::string variant_name(const dm::MaskKernelVariant& v) {
  std::string n = dm::to_string(v);
  for (char& c : n)
    if (c == ' ' || c == '-') c = '_';
  return n;
}

[[maybe_unused]] cv::Mat sentinel(cv::Size size) { return cv::Mat(size, CV_32FC1, cv::Scalar(777.0f)); }

using VariantParam = std::tuple<dm::MaskKernelVariant, cv::Size, int /*depth*/, int /*mask*/, Layout>;
class VariantParity : public ::testing::TestWithParam<VariantParam> {};

std::string variant_parity_name(const ::testing::TestParamInfo<VariantParam>& i) {
  const auto& [v, size, dtype, mtype, layout] = i.param;
  return variant_name(v) + "_" + std::to_string(size.width) + "x" + std::to_string(size.height) +
         (dtype == CV_16UC1 ? "_d16" : "_f32") + (mtype == CV_8UC1 ? "_m8_" : "_m16_") + to_string(layout);
}

}  // namespace

TEST_P(VariantParity, GpuEqualsCpuExactly) {
  DM_REQUIRE_GPU();
#if DEPTHMASK_HAVE_CUDA
  const auto [variant, size, dtype, mtype, layout] = GetParam();
  const auto listed = variant.kept_only ? dm::mapped_mask_kernel_variants() : dm::mask_kernel_variants();
  ASSERT_TRUE(std::any_of(listed.begin(), listed.end(),
                          [&](const dm::MaskKernelVariant& v) {
                            return v.shape == variant.shape && v.vectorized == variant.vectorized &&
                                   v.kept_only == variant.kept_only;
                          }))
      << dm::to_string(variant) << " is not in the build's list";
  std::mt19937 rng(static_cast<unsigned>(size.width * 7919 + size.height * 104729 + dtype * 31 + mtype * 7 +
                                         static_cast<int>(layout)));
  const cv::Mat depth = random_depth(size.height, size.width, dtype, rng);
  const cv::Mat mask = random_mask(size.height, size.width, mtype, rng);
  const auto d = device_image(depth, layout, 0);
  const auto m = device_image(mask, layout, 1);
  const auto o = device_image(sentinel(size), layout, 2);
  ASSERT_EQ(d->status(), cudaSuccess);
  ASSERT_EQ(m->status(), cudaSuccess);
  ASSERT_EQ(o->status(), cudaSuccess);
  const dmtest::TestStream stream;
  ASSERT_EQ(stream.status(), cudaSuccess);
  const dm::MaskJob job = device_job(*d, dtype, *m, mtype, *o, size);
  for (const Rule& rule : rules_with_erode()) {
    SCOPED_TRACE(rule.name);
    const cv::Mat gold = dmtest::mask_cpu_gold(depth, mask, rule.params);
    ASSERT_EQ(o->upload(sentinel(size)), cudaSuccess);  // a pixel the kernel skips shows as 777
    ASSERT_EQ(cudaDeviceSynchronize(), cudaSuccess);
    dm::launch_mask_variant(job, rule.params, variant, stream.get());
    ASSERT_EQ(cudaStreamSynchronize(stream.get()), cudaSuccess);
    cv::Mat got(size, CV_32FC1);
    ASSERT_EQ(o->download(got), cudaSuccess);
    EXPECT_TRUE(same_pixels(gold, got));
    EXPECT_EQ(o->padding_changes(), 0) << "bytes written outside the output ROI";
  }
#endif
}

INSTANTIATE_TEST_SUITE_P(
    Variants, VariantParity,
    ::testing::Combine(::testing::ValuesIn(kVariants),
                       ::testing::Values(cv::Size(1, 1), cv::Size(13, 1), cv::Size(1, 13), cv::Size(31, 33),
                                         cv::Size(33, 31), cv::Size(640, 480), cv::Size(639, 481), cv::Size(1920, 1080),
                                         cv::Size(2085, 9),    // row256x2: a second block along the row
                                         cv::Size(5, 70000)),  // taller than a grid's 65535 rows of blocks
                       ::testing::Values(CV_16UC1, CV_32FC1), ::testing::Values(CV_8UC1, CV_16UC1),
                       ::testing::Values(Layout::Pitched, Layout::Packed, Layout::RoiSame, Layout::RoiMixed)),
    variant_parity_name);

namespace {
using BatchParam = std::tuple<int /*jobs*/, cv::Size, int /*depth*/, int /*mask*/>;
class BatchParity : public ::testing::TestWithParam<BatchParam> {};

std::string batch_parity_name(const ::testing::TestParamInfo<BatchParam>& i) {
  const auto& [count, size, dtype, mtype] = i.param;
  return "jobs" + std::to_string(count) + "_" + std::to_string(size.width) + "x" + std::to_string(size.height) +
         (dtype == CV_16UC1 ? "_d16" : "_f32") + (mtype == CV_8UC1 ? "_m8" : "_m16");
}
}  // namespace

// One launch_mask_batch equals mask_cpu on every frame; the frames' rows are laid out differently
// (job i uses layout i % 4), which one launch must handle per frame.
TEST_P(BatchParity, EveryFrameEqualsCpuExactly) {
  DM_REQUIRE_GPU();
#if DEPTHMASK_HAVE_CUDA
  const auto [count, size, dtype, mtype] = GetParam();
  std::mt19937 rng(static_cast<unsigned>(count * 13 + size.width + dtype * 31 + mtype));
  std::vector<cv::Mat> depths, masks;
  std::vector<std::unique_ptr<dmtest::DeviceImage>> ds, ms, os;
  std::vector<dm::MaskJob> jobs;
  for (int i = 0; i < count; ++i) {
    const Layout l = static_cast<Layout>(i % 4);
    depths.push_back(random_depth(size.height, size.width, dtype, rng));
    masks.push_back(random_mask(size.height, size.width, mtype, rng));
    ds.push_back(device_image(depths.back(), l, 0));
    ms.push_back(device_image(masks.back(), l, 1));
    os.push_back(device_image(sentinel(size), l, 2));
    jobs.push_back(device_job(*ds.back(), dtype, *ms.back(), mtype, *os.back(), size));
  }
  const dmtest::TestStream stream;
  ASSERT_EQ(stream.status(), cudaSuccess);
  for (const dm::MaskKernelVariant& variant : kVariants)
    for (const Rule& rule : rules_with_erode()) {
      SCOPED_TRACE(std::string(rule.name) + " " + dm::to_string(variant));
      for (const auto& o : os) ASSERT_EQ(o->upload(sentinel(size)), cudaSuccess);
      ASSERT_EQ(cudaDeviceSynchronize(), cudaSuccess);
      dm::launch_mask_batch(jobs.data(), count, rule.params, stream.get(), variant);
      ASSERT_EQ(cudaStreamSynchronize(stream.get()), cudaSuccess);
      for (int i = 0; i < count; ++i) {
        SCOPED_TRACE("frame " + std::to_string(i) + " (" + to_string(static_cast<Layout>(i % 4)) + ")");
        cv::Mat got(size, CV_32FC1);
        ASSERT_EQ(os[static_cast<size_t>(i)]->download(got), cudaSuccess);
        EXPECT_TRUE(same_pixels(
            dmtest::mask_cpu_gold(depths[static_cast<size_t>(i)], masks[static_cast<size_t>(i)], rule.params), got));
        EXPECT_EQ(os[static_cast<size_t>(i)]->padding_changes(), 0) << "bytes written outside the output ROI";
      }
    }
#endif
}

INSTANTIATE_TEST_SUITE_P(Batches, BatchParity,
                         ::testing::Combine(::testing::Values(1, 7, 32),
                                            ::testing::Values(cv::Size(33, 31), cv::Size(639, 481)),
                                            ::testing::Values(CV_16UC1, CV_32FC1),
                                            ::testing::Values(CV_8UC1, CV_16UC1)),
                         batch_parity_name);

// A batch is one size and one pixel-type pair, at most kMaxBatchedJobs: anything else is rejected
// before anything is enqueued (so this runs without a device, in any build with the CUDA kernels).
TEST(MaskBatch, RejectsMismatchedOrOversizedBatches) {
  if (!dm::have_cuda_kernels()) GTEST_SKIP() << "this build has no CUDA kernels";
  std::vector<float> buf(256 * 64);
  dm::MaskJob a;
  a.depth = {buf.data(), 256}, a.depth_type = dm::DepthType::F32;
  a.mask = {buf.data(), 256}, a.mask_type = dm::MaskType::U8;
  a.out = {buf.data(), 256}, a.rows = 31, a.cols = 33;
  const dm::MaskParams p;
  const auto rejects = [&](std::vector<dm::MaskJob> jobs, const char* what) {
    try {
      dm::launch_mask_batch(jobs.data(), static_cast<int>(jobs.size()), p, nullptr);
      ADD_FAILURE() << what << ": accepted";
    } catch (const std::invalid_argument& e) {
      EXPECT_NE(std::string(e.what()).find("launch_mask_batch"), std::string::npos) << what << ": " << e.what();
    }
  };
  dm::MaskJob wider = a, taller = a, u16 = a, m16 = a;
  wider.cols = 32, taller.rows = 32, u16.depth_type = dm::DepthType::U16, m16.mask_type = dm::MaskType::U16;
  rejects({a, wider}, "different width");
  rejects({a, a, taller}, "different height");
  rejects({a, u16}, "different depth type");
  rejects({a, m16}, "different mask type");
  rejects(std::vector<dm::MaskJob>(dm::kMaxBatchedJobs + 1, a), "too many jobs");
  EXPECT_THROW(dm::launch_mask_batch(&a, -1, p, nullptr), std::invalid_argument);
  EXPECT_THROW(dm::launch_mask_batch(nullptr, 2, p, nullptr), std::invalid_argument);
  dm::MaskJob bad = a;
  bad.out.data = nullptr;
  EXPECT_THROW(dm::launch_mask_batch(std::vector<dm::MaskJob>{a, bad}.data(), 2, p, nullptr), std::invalid_argument);
  EXPECT_NO_THROW(dm::launch_mask_batch(nullptr, 0, p, nullptr));  // nothing to do
}
