// The C++ facade (masker.h) on every GPU backend: host frames, device frames (pitched ROIs on a
// non-blocking stream), device stacks with one launch per 32 frames, threads — all bit-identical to
// the cpu backend. Skips with the reason without a GPU.
#include <gtest/gtest.h>

#include <opencv2/core.hpp>

#include <atomic>
#include <thread>
#include <vector>

#include "depthmask/masker.h"
#include "gpu_test_support.h"
#include "test_support.h"

namespace dm = depthmask;

namespace {

const char* kYaml = "depth: {scale: 0.001, max: 3}\nmask: {labels: [1, 2], erode: 1}\n";

void random_frame(int rows, int cols, int seed, int depth_type, cv::Mat& depth, cv::Mat& mask) {
  cv::RNG rng(static_cast<uint64_t>(seed) + 7);
  depth.create(rows, cols, depth_type);
  mask.create(rows, cols, CV_8UC1);
  if (depth_type == CV_16UC1)
    rng.fill(depth, cv::RNG::UNIFORM, 0, 4000);
  else
    rng.fill(depth, cv::RNG::UNIFORM, -0.5, 4.0);
  rng.fill(mask, cv::RNG::UNIFORM, 0, 3);
}

class MaskerGpu : public ::testing::TestWithParam<dm::BackendKind> {
 protected:
  void SetUp() override {
    DM_REQUIRE_GPU();
    gpu_.emplace(dm::Masker::from_yaml(kYaml, {"backend.kind=" + std::string(dm::to_string(GetParam()))}));
    cpu_.emplace(dm::Masker::from_yaml(kYaml, {"backend.kind=cpu"}));
    ASSERT_EQ(gpu_->backend(), GetParam());
    ASSERT_EQ(gpu_->device(), 0);
  }
  std::optional<dm::Masker> gpu_, cpu_;
};

std::string name_of(const ::testing::TestParamInfo<dm::BackendKind>& i) { return std::string(dm::to_string(i.param)); }

#if DEPTHMASK_HAVE_CUDA
dm::ImageRef device_ref(const dmtest::DeviceImage& im, cv::Size size, dm::PixelType t) {
  dm::ImageRef r;
  r.data = im.roi();
  r.memory = dm::MemoryKind::Device;
  r.device = 0;
  r.type = t;
  r.rows = size.height;
  r.cols = size.width;
  r.row_stride = static_cast<int64_t>(im.pitch());
  r.col_stride = static_cast<int64_t>(dm::pixel_bytes(t));
  return r;
}
#endif

}  // namespace

TEST_P(MaskerGpu, HostFramesEqualTheCpuBackend) {
  for (const int type : {CV_16UC1, CV_32FC1})
    for (const cv::Size size : {cv::Size(1, 1), cv::Size(13, 1), cv::Size(31, 33), cv::Size(640, 480)}) {
      cv::Mat depth, mask;
      random_frame(size.height, size.width, size.area() + type, type, depth, mask);
      EXPECT_TRUE(dmtest::same_pixels(cpu_->mask(depth, mask), gpu_->mask(depth, mask))) << size << " type " << type;
    }
}

#if DEPTHMASK_HAVE_CUDA
TEST_P(MaskerGpu, DeviceFramesOnANonDefaultStreamEqualTheCpuBackend) {
  const cv::Size size(97, 61);
  cv::Mat depth, mask;
  random_frame(size.height, size.width, 3, CV_16UC1, depth, mask);
  const dmtest::DeviceImage d(depth, 3, 2, 5, 1), k(mask, 1, 4, 3, 2);
  const dmtest::DeviceImage o(size, sizeof(float), 2, 1, 4, 3);
  ASSERT_EQ(cudaDeviceSynchronize(), cudaSuccess);
  const dmtest::TestStream stream;
  ASSERT_EQ(stream.status(), cudaSuccess);
  gpu_->mask(device_ref(d, size, dm::PixelType::U16), device_ref(k, size, dm::PixelType::U8),
             device_ref(o, size, dm::PixelType::F32), nullptr, stream.get());
  ASSERT_EQ(cudaStreamSynchronize(stream.get()), cudaSuccess);
  cv::Mat got(size, CV_32FC1);
  ASSERT_EQ(o.download(got), cudaSuccess);
  EXPECT_TRUE(dmtest::same_pixels(cpu_->mask(depth, mask), got));
  EXPECT_EQ(o.padding_changes(), 0);
}

TEST_P(MaskerGpu, DeviceStacksEqualTheCpuBackendFrameByFrame) {
  const int n = 40, rows = 17, cols = 33;  // more frames than one batched launch takes (32)
  cv::Mat depths(n * rows, cols, CV_32FC1), masks(n * rows, cols, CV_8UC1);
  for (int i = 0; i < n; ++i) {
    cv::Mat d, k;
    random_frame(rows, cols, 100 + i, CV_32FC1, d, k);
    d.copyTo(depths.rowRange(i * rows, (i + 1) * rows));
    k.copyTo(masks.rowRange(i * rows, (i + 1) * rows));
  }
  const dmtest::DeviceImage d(depths, 0, 0, 0, 0), k(masks, 0, 0, 0, 0);
  const dmtest::DeviceImage o(cv::Size(cols, n * rows), sizeof(float), 0, 0, 0, 0);
  const dmtest::TestStream stream;
  auto stack = [&](const dmtest::DeviceImage& im, dm::PixelType t, int frames) {
    dm::ImageRef r = device_ref(im, cv::Size(cols, rows), t);
    r.frames = frames;
    r.frame_stride = static_cast<int64_t>(im.pitch()) * rows;
    return r;
  };
  for (const bool one_mask : {false, true}) {
    gpu_->mask(stack(d, dm::PixelType::F32, n), stack(k, dm::PixelType::U8, one_mask ? 1 : n),
               stack(o, dm::PixelType::F32, n), nullptr, stream.get());
    ASSERT_EQ(cudaStreamSynchronize(stream.get()), cudaSuccess);
    cv::Mat got(n * rows, cols, CV_32FC1);
    ASSERT_EQ(o.download(got), cudaSuccess);
    for (int i = 0; i < n; ++i) {
      const cv::Mat mi = masks.rowRange((one_mask ? 0 : i) * rows, ((one_mask ? 0 : i) + 1) * rows);
      EXPECT_TRUE(dmtest::same_pixels(cpu_->mask(depths.rowRange(i * rows, (i + 1) * rows), mi),
                                      got.rowRange(i * rows, (i + 1) * rows)))
          << "frame " << i << (one_mask ? " (one mask)" : "");
    }
  }
}

TEST_P(MaskerGpu, RefusesDeviceArraysOfAnotherDeviceOrThatNeedHostPasses) {
  const cv::Size size(8, 8);
  const dmtest::DeviceImage d(size, 2, 0, 0, 0, 0), k(size, 1, 0, 0, 0, 0), o(size, 4, 0, 0, 0, 0);
  dm::ImageRef dd = device_ref(d, size, dm::PixelType::U16), kk = device_ref(k, size, dm::PixelType::U8),
               oo = device_ref(o, size, dm::PixelType::F32);
  dm::ImageRef other = dd;
  other.device = 1;
  EXPECT_THROW(gpu_->mask(other, kk, oo), dm::InputError);
  dm::ImageRef small = kk;
  small.rows = 4;
  dm::ImageRef small_out = oo;
  small_out.rows = 4;
  dm::Masker registering = dm::Masker::from_yaml("registration: {mode: resample}\n",
                                                 {"backend.kind=" + std::string(dm::to_string(GetParam()))});
  EXPECT_THROW(registering.mask(dd, small, small_out), dm::ConfigError);
}

TEST_P(MaskerGpu, EightThreadsOfAThousandCallsEqualTheSerialResults) {
  if (GetParam() != dm::BackendKind::Copy) GTEST_SKIP() << "threads: the copy backend stands for the GPU backends";
  constexpr int kInputs = 4;
  std::vector<cv::Mat> depths(kInputs), masks(kInputs), serial(kInputs);
  for (int i = 0; i < kInputs; ++i) {
    random_frame(12 + i, 17 + 2 * i, 50 + i, CV_16UC1, depths[i], masks[i]);
    serial[i] = cpu_->mask(depths[i], masks[i]);
  }
  const auto [mismatches, errors] = dmtest::masker_thread_mismatches(*gpu_, depths, masks, serial);
  EXPECT_EQ(mismatches, 0);
  EXPECT_EQ(errors, 0);
}
#endif

INSTANTIATE_TEST_SUITE_P(Backends, MaskerGpu,
                         ::testing::Values(dm::BackendKind::Copy, dm::BackendKind::ZeroCopy, dm::BackendKind::Managed),
                         name_of);
