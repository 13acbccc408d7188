// The C++ facade (masker.h) on the cpu backend: results equal the batch's rule, views (stacks, row
// strides, broadcast masks), every bad view refused with InputError, threads, run() with progress and
// cancel. The GPU backends' side is tests/gpu/test_masker_gpu.cpp.
#include "depthmask/masker.h"

#include <gtest/gtest.h>

#include <opencv2/core.hpp>

#include <cstring>
#include <vector>

#include "depthmask/bench/scratch_dir.h"
#include "depthmask/depthmask.h"
#include "depthmask/frame.h"
#include "depthmask/open_backend.h"
#include "depthmask/synth.h"
#include "gpu_test_support.h"

namespace dm = depthmask;

namespace {

dm::Masker cpu_masker(const std::string& yaml = "depth: {scale: 0.001, max: 3}\nmask: {threshold: 0}\n") {
  return dm::Masker::from_yaml(yaml, {"backend.kind=cpu"});
}

// A frame with every kind of pixel: zeros, in and out of range, mask on and off.
void random_frame(int rows, int cols, int seed, cv::Mat& depth, cv::Mat& mask) {
  cv::RNG rng(static_cast<uint64_t>(seed) + 1);
  depth.create(rows, cols, CV_16UC1);
  mask.create(rows, cols, CV_8UC1);
  rng.fill(depth, cv::RNG::UNIFORM, 0, 4000);
  rng.fill(mask, cv::RNG::UNIFORM, 0, 3);
}

dm::ImageRef stack_ref(cv::Mat& m, int frames, int rows, int cols, dm::PixelType t) {
  dm::ImageRef r;
  r.data = m.data;
  r.type = t;
  r.frames = frames;
  r.rows = rows;
  r.cols = cols;
  r.row_stride = static_cast<int64_t>(m.step[0]);
  r.frame_stride = r.row_stride * rows;
  r.col_stride = static_cast<int64_t>(dm::pixel_bytes(t));
  return r;
}

}  // namespace

// One table (lib/api/src/image_kinds.h) names and sizes the pixel types and memory kinds for the facade
// and the C ABI; the words and sizes are the ones messages have always used.
TEST(Masker, PixelTypesAndMemoryKindsFromOneTable) {
  EXPECT_EQ(dm::pixel_bytes(dm::PixelType::U8), 1u);
  EXPECT_EQ(dm::pixel_bytes(dm::PixelType::U16), 2u);
  EXPECT_EQ(dm::pixel_bytes(dm::PixelType::F32), 4u);
  EXPECT_EQ(dm::pixel_bytes(dm::PixelType::Bool), 1u);
  EXPECT_EQ(dm::to_string(dm::PixelType::U16), "uint16");
  EXPECT_EQ(dm::to_string(dm::PixelType::Bool), "bool");
  EXPECT_EQ(dm::to_string(dm::MemoryKind::Host), "host memory");
  EXPECT_EQ(dm::to_string(dm::MemoryKind::Device), "CUDA device memory");
  EXPECT_EQ(dm::to_string(dm::MemoryKind::Mapped), "mapped host memory");
  EXPECT_EQ(dm::ImageRef::of(cv::Mat(2, 3, CV_8UC1)).type, dm::PixelType::U8) << "a CV_8U Mat is uint8, not bool";
  EXPECT_EQ(dm::ImageRef::of(cv::Mat(2, 3, CV_16UC1)).type, dm::PixelType::U16);
  EXPECT_EQ(dm::ImageRef::of(cv::Mat(2, 3, CV_32FC1)).type, dm::PixelType::F32);
  EXPECT_EQ(dm::ImageRef::of(cv::Mat(2, 3, CV_8UC3)).channels, 3);
  EXPECT_THROW((void)dm::ImageRef::of(cv::Mat(2, 3, CV_64FC1)), dm::InputError);
}

TEST(Masker, EqualsTheBatchRuleOnTheCpuBackend) {
  dm::Masker m = cpu_masker();
  EXPECT_EQ(m.backend(), dm::BackendKind::Cpu);
  EXPECT_FALSE(m.reason().empty());
  EXPECT_EQ(m.device(), -1);
  cv::Mat depth, mask;
  random_frame(37, 53, 1, depth, mask);
  const cv::Mat gold = dmtest::mask_cpu_gold(depth, mask, dm::mask_params(m.config()));
  const cv::Mat got = m.mask(depth, mask);
  EXPECT_TRUE(dmtest::same_pixels(gold, got));
  // The slot path (what GPU backends take for host frames) gives the same.
  const dm::OpenedBackend cpu = dm::open_backend(m.config());
  dm::FrameSlot slot(*cpu.backend);
  slot.set(depth, mask);
  slot.run_mask(dm::mask_params(m.config()));
  EXPECT_TRUE(dmtest::same_pixels(gold, slot.out()));
}

TEST(Masker, WritesIntoTheCallersBufferInPlace) {
  dm::Masker m = cpu_masker();
  cv::Mat depth, mask;
  random_frame(20, 30, 2, depth, mask);
  cv::Mat big(40, 60, CV_32FC1, cv::Scalar(5.0f));
  cv::Mat out = big(cv::Rect(10, 5, 30, 20));  // a ROI: strided rows
  const uchar* before = out.data;
  m.mask_into(depth, mask, out);
  EXPECT_EQ(out.data, before);
  EXPECT_TRUE(dmtest::same_pixels(out, m.mask(depth, mask)));
  EXPECT_EQ(big.at<float>(0, 0), 5.0f);  // nothing outside the ROI written
}

TEST(Masker, MasksStacksWithOneMaskOrOnePerFrame) {
  dm::Masker m = cpu_masker();
  const int n = 3, rows = 9, cols = 11;
  cv::Mat depths(n * rows, cols, CV_16UC1), masks(n * rows, cols, CV_8UC1), outs(n * rows, cols, CV_32FC1);
  for (int i = 0; i < n; ++i) {
    cv::Mat d, k;
    random_frame(rows, cols, 10 + i, d, k);
    d.copyTo(depths.rowRange(i * rows, (i + 1) * rows));
    k.copyTo(masks.rowRange(i * rows, (i + 1) * rows));
  }
  m.mask(stack_ref(depths, n, rows, cols, dm::PixelType::U16), stack_ref(masks, n, rows, cols, dm::PixelType::U8),
         stack_ref(outs, n, rows, cols, dm::PixelType::F32));
  for (int i = 0; i < n; ++i) {
    const cv::Mat d = depths.rowRange(i * rows, (i + 1) * rows), k = masks.rowRange(i * rows, (i + 1) * rows);
    EXPECT_TRUE(dmtest::same_pixels(outs.rowRange(i * rows, (i + 1) * rows), m.mask(d, k))) << "frame " << i;
  }
  // One mask (frames 1) for the whole stack.
  dm::ImageRef one = stack_ref(masks, 1, rows, cols, dm::PixelType::U8);
  m.mask(stack_ref(depths, n, rows, cols, dm::PixelType::U16), one, stack_ref(outs, n, rows, cols, dm::PixelType::F32));
  for (int i = 0; i < n; ++i)
    EXPECT_TRUE(dmtest::same_pixels(outs.rowRange(i * rows, (i + 1) * rows),
                                    m.mask(depths.rowRange(i * rows, (i + 1) * rows), masks.rowRange(0, rows))));
}

TEST(Masker, BoolMasksReadAsEightBit) {
  dm::Masker m = cpu_masker();
  cv::Mat depth, mask;
  random_frame(8, 8, 3, depth, mask);
  cv::Mat ones = mask > 0;
  ones /= 255;  // 0 or 1, as NumPy's bool
  dm::ImageRef d = dm::ImageRef::of(depth), k = dm::ImageRef::of(ones);
  k.type = dm::PixelType::Bool;
  cv::Mat out(8, 8, CV_32FC1);
  m.mask(d, k, dm::ImageRef::of(out));
  EXPECT_TRUE(dmtest::same_pixels(out, m.mask(depth, ones)));
}

TEST(Masker, RefusesEveryBadViewWithAnInputError) {
  dm::Masker m = cpu_masker();
  cv::Mat depth, mask, out(6, 7, CV_32FC1);
  random_frame(6, 7, 4, depth, mask);
  const dm::ImageRef d = dm::ImageRef::of(depth), k = dm::ImageRef::of(mask), o = dm::ImageRef::of(out);
  auto refuses = [&](dm::ImageRef dd, dm::ImageRef kk, dm::ImageRef oo, const std::string& says) {
    try {
      m.mask(dd, kk, oo);
      ADD_FAILURE() << "accepted; expected: " << says;
    } catch (const dm::InputError& e) {
      EXPECT_NE(std::string(e.what()).find(says), std::string::npos) << e.what();
    }
  };
  dm::ImageRef bad = d;
  bad.type = dm::PixelType::U8;
  refuses(bad, k, o, "depth is uint8: expected uint16 or float32");
  bad = k;
  bad.type = dm::PixelType::F32;
  refuses(d, bad, o, "mask is float32");
  bad = o;
  bad.read_only = true;
  refuses(d, k, bad, "out is read-only");
  bad = d;
  bad.row_stride = -bad.row_stride;
  refuses(bad, k, o, "negative stride");
  bad = d;
  bad.col_stride = 4;
  refuses(bad, k, o, "pixels are 4 bytes apart");
  bad = d;
  bad.data = static_cast<unsigned char*>(bad.data) + 1;
  refuses(bad, k, o, "not a multiple of its 2-byte pixels");
  bad = d;
  bad.row_stride = 3;
  refuses(bad, k, o, "not multiples of its 2-byte pixels");
  bad = d;
  bad.rows = 5;
  refuses(bad, k, o, "expected the same size");
  bad = o;
  bad.cols = 6;
  refuses(d, k, bad, "out is 6 x 6");
  bad = d;
  bad.data = nullptr;
  refuses(bad, k, o, "null pointer");
  bad = k;
  bad.frames = 2;
  bad.frame_stride = 64;
  refuses(d, bad, o, "one mask per depth frame");
  bad = d;
  bad.memory = dm::MemoryKind::Device;
  refuses(bad, k, o, "all on the device");
}

TEST(Masker, DeviceArraysOnTheCpuBackendSayWhichBackendToUse) {
  dm::Masker m = cpu_masker();
  cv::Mat depth, mask, out(4, 4, CV_32FC1);
  random_frame(4, 4, 5, depth, mask);
  dm::ImageRef d = dm::ImageRef::of(depth), k = dm::ImageRef::of(mask), o = dm::ImageRef::of(out);
  for (dm::ImageRef* r : {&d, &k, &o}) r->memory = dm::MemoryKind::Device, r->device = 0;
  try {
    m.mask(d, k, o);
    FAIL() << "accepted device arrays on the cpu backend";
  } catch (const dm::ConfigError& e) {
    EXPECT_NE(std::string(e.what()).find("backend.kind copy"), std::string::npos) << e.what();
  }
}

TEST(Masker, EightThreadsOfAThousandCallsEqualTheSerialResults) {
  dm::Masker m = cpu_masker("depth: {scale: 0.001, max: 3}\nmask: {labels: [1], erode: 1}\n");
  constexpr int kInputs = 4;
  std::vector<cv::Mat> depths(kInputs), masks(kInputs), serial(kInputs);
  for (int i = 0; i < kInputs; ++i) {
    random_frame(24 + i, 31 + 2 * i, 20 + i, depths[i], masks[i]);
    serial[i] = m.mask(depths[i], masks[i]);
  }
  const auto [mismatches, errors] = dmtest::masker_thread_mismatches(m, depths, masks, serial);
  EXPECT_EQ(mismatches, 0);
  EXPECT_EQ(errors, 0);
}

TEST(Masker, RunsTheBatchWithProgressAndCancel) {
  depthmask::ScratchDir tmp("masker-run");
  dm::write_synthetic_dataset(tmp.path() / "in", 6, 32, 24);
  dm::Masker m = dm::Masker::from_file(tmp.path() / "in" / "depthmask.yaml", {"backend.kind=cpu"});
  std::vector<size_t> seen;
  dm::RunRequest r;
  r.output = tmp.path() / "out";
  r.progress = [&](size_t done, size_t total) {
    EXPECT_EQ(total, 6u);
    seen.push_back(done);
  };
  const dm::RunSummary s = m.run(r);
  EXPECT_EQ(s.ok, 6u);
  EXPECT_EQ(dm::exit_code(s), 0);
  EXPECT_EQ(seen.back(), 6u);
  EXPECT_TRUE(std::filesystem::exists(tmp.path() / "out" / "depthmask-manifest.json"));

  // A progress callback that throws stops the run and its exception comes back.
  struct Stop {};
  dm::RunRequest again = r;
  again.output = tmp.path() / "out2";
  again.progress = [](size_t, size_t) { throw Stop{}; };
  EXPECT_THROW(m.run(again), Stop);

  // cancel() with no run in progress stops the next run before its first frame.
  m.cancel();
  dm::RunRequest third = r;
  third.output = tmp.path() / "out3";
  third.progress = nullptr;
  const dm::RunSummary c = m.run(third);
  EXPECT_TRUE(c.interrupted);
  EXPECT_EQ(c.ok, 0u);
  // ... and only that one.
  third.output = tmp.path() / "out4";
  EXPECT_EQ(m.run(third).ok, 6u);
}

TEST(Masker, ConfigErrorsNameTheKey) {
  try {
    (void)dm::Masker::from_yaml("mask: {erode: 99}\n");
    FAIL() << "accepted erode 99";
  } catch (const dm::ConfigError& e) {
    EXPECT_NE(std::string(e.what()).find("mask.erode"), std::string::npos) << e.what();
  }
  EXPECT_THROW((void)dm::Masker::from_yaml("", {"depth.nope=1"}), dm::ConfigError);
}
