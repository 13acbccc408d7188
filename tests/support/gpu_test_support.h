// Helpers for the GPU parity tests: the exact comparison with the CPU gold, the CPU masking gold,
// and (with CUDA) pitched ROI device images with a 0x5A fill around the ROI and an owned
// non-blocking stream.
//
// Ordering: the device images' fill (cudaMemset2D) and uploads (cudaMemcpy2D) run on the legacy
// default stream, which does not order with a non-blocking stream (and a pageable copy may return
// before its DMA lands). Call cudaDeviceSynchronize() after them before launching on a
// non-blocking stream; the constructor that uploads a cv::Mat does so itself.
#pragma once

#include <gtest/gtest.h>

#include <algorithm>
#include <atomic>
#include <cmath>
#include <cstddef>
#include <cstdint>
#include <cstring>
#include <opencv2/core.hpp>
#include <string>
#include <thread>
#include <tuple>
#include <utility>
#include <vector>

#if DEPTHMASK_HAVE_CUDA
#include <cuda_runtime_api.h>
#endif

#include "depthmask/kernels/mask_kernel.h"

namespace dmtest {

// Exact equality of two CV_32FC1 images; two NaNs are equal (their payloads may differ).
inline ::testing::AssertionResult same_pixels(const cv::Mat& gold, const cv::Mat& got) {
  if (gold.size() != got.size() || gold.type() != got.type())
    return ::testing::AssertionFailure() << "size/type differ";
  for (int y = 0; y < gold.rows; ++y)
    for (int x = 0; x < gold.cols; ++x) {
      const float a = gold.at<float>(y, x), b = got.at<float>(y, x);
      if (std::isnan(a) && std::isnan(b)) continue;
      if (std::memcmp(&a, &b, sizeof a) != 0)
        return ::testing::AssertionFailure() << "pixel (" << x << ", " << y << "): cpu " << a << " gpu " << b;
    }
  return ::testing::AssertionSuccess();
}

// `threads` threads, each making `calls` calls of masker.mask_into() over the inputs in turn: how many
// results differed from `serial` (bit for bit) and how many calls threw. One Masker, shared.
template <class MaskerT>
std::pair<int, int> masker_thread_mismatches(MaskerT& masker, const std::vector<cv::Mat>& depths,
                                             const std::vector<cv::Mat>& masks, const std::vector<cv::Mat>& serial,
                                             int threads = 8, int calls = 1000) {
  std::atomic<int> mismatches{0}, errors{0};
  std::vector<std::thread> pool;
  for (int t = 0; t < threads; ++t)
    pool.emplace_back([&, t] {
      cv::Mat out;
      for (int call = 0; call < calls; ++call) {
        const size_t i = static_cast<size_t>(t + call) % depths.size();
        try {
          masker.mask_into(depths[i], masks[i], out);
          if (!same_pixels(serial[i], out)) ++mismatches;
        } catch (...) {
          ++errors;
        }
      }
    });
  for (auto& th : pool) th.join();
  return {mismatches.load(), errors.load()};
}

// The CPU loop's masked depth (the gold) for host `depth` and `mask` (their steps respected); the
// output starts as 777 so a pixel the loop skips shows.
inline cv::Mat mask_cpu_gold(const cv::Mat& depth, const cv::Mat& mask, const depthmask::MaskParams& p) {
  cv::Mat out(depth.size(), CV_32FC1, cv::Scalar(777.0f));
  depthmask::MaskJob job;
  job.depth = {depth.data, depth.step[0]};
  job.depth_type = depth.type() == CV_16UC1 ? depthmask::DepthType::U16 : depthmask::DepthType::F32;
  job.mask = {mask.data, mask.step[0]};
  job.mask_type = mask.type() == CV_8UC1 ? depthmask::MaskType::U8 : depthmask::MaskType::U16;
  job.out = {out.ptr<float>(), out.step[0]}, job.rows = depth.rows, job.cols = depth.cols;
  depthmask::mask_cpu(job, p);
  return out;
}

#if DEPTHMASK_HAVE_CUDA
#define DM_CUDA_OK(call) ASSERT_EQ((call), cudaSuccess) << #call << ": " << cudaGetErrorString(cudaGetLastError())

// A pitched device image whose ROI (`size` pixels of `elem` bytes) starts at (ox, oy) of a larger
// allocation filled with 0x5A: the row step is neither the width nor the allocation's natural pitch,
// and writes outside the ROI show.
class DeviceImage {
 public:
  // `step` 0: cudaMallocPitch's pitch (rows 512-byte aligned). Otherwise that row step in bytes
  // (at least the allocated width), so rows can start at any element boundary (odd steps).
  DeviceImage(cv::Size size, size_t elem, int ox, int oy, int pad_cols, int pad_rows, size_t step = 0)
      : size_(size),
        elem_(elem),
        ox_(ox),
        oy_(oy),
        width_bytes_(static_cast<size_t>(size.width + ox + pad_cols) * elem),
        height_(size.height + oy + pad_rows) {
    if (step == 0) {
      status_ = cudaMallocPitch(&base_, &pitch_, width_bytes_, static_cast<size_t>(height_));
    } else {
      width_bytes_ = pitch_ = std::max(step, width_bytes_);
      status_ = cudaMalloc(&base_, pitch_ * static_cast<size_t>(height_));
    }
    // The whole pitch is filled (read_row reads it all; compute-sanitizer initcheck would see the rest).
    if (status_ == cudaSuccess) status_ = cudaMemset2D(base_, pitch_, 0x5A, pitch_, static_cast<size_t>(height_));
  }
  // The same holding `src` in its ROI, and waited for (see the ordering note at the top).
  DeviceImage(const cv::Mat& src, int ox, int oy, int pad_cols, int pad_rows, size_t step = 0)
      : DeviceImage(src.size(), src.elemSize(), ox, oy, pad_cols, pad_rows, step) {
    EXPECT_EQ(status_, cudaSuccess);
    EXPECT_EQ(upload(src), cudaSuccess);
    EXPECT_EQ(cudaDeviceSynchronize(), cudaSuccess);
  }
  ~DeviceImage() {
    if (base_) (void)cudaFree(base_);
  }
  DeviceImage(const DeviceImage&) = delete;
  DeviceImage& operator=(const DeviceImage&) = delete;

  cudaError_t status() const { return status_; }
  size_t pitch() const { return pitch_; }
  char* base() const { return static_cast<char*>(base_); }
  char* roi() const { return base() + static_cast<size_t>(oy_) * pitch_ + static_cast<size_t>(ox_) * elem_; }

  cudaError_t upload(const cv::Mat& m) const {
    return cudaMemcpy2D(roi(), pitch_, m.data, m.step[0], static_cast<size_t>(size_.width) * elem_,
                        static_cast<size_t>(size_.height), cudaMemcpyHostToDevice);
  }
  cudaError_t download(cv::Mat& m) const {
    return cudaMemcpy2D(m.data, m.step[0], roi(), pitch_, static_cast<size_t>(size_.width) * elem_,
                        static_cast<size_t>(size_.height), cudaMemcpyDeviceToHost);
  }
  // Row `y` of the allocation, all `pitch()` bytes of it.
  cudaError_t read_row(int y, std::vector<uint8_t>& row) const {
    row.resize(pitch_);
    return cudaMemcpy(row.data(), base() + static_cast<size_t>(y) * pitch_, pitch_, cudaMemcpyDeviceToHost);
  }
  // How many bytes of the allocated width lie outside the ROI.
  size_t padding_bytes() const {
    return width_bytes_ * static_cast<size_t>(height_) -
           static_cast<size_t>(size_.width) * elem_ * static_cast<size_t>(size_.height);
  }
  // Counts the bytes outside the ROI that no longer hold the 0x5A fill; -1 when the copy fails.
  long long padding_changes() const {
    std::vector<unsigned char> all(pitch_ * static_cast<size_t>(height_));
    if (cudaMemcpy(all.data(), base_, all.size(), cudaMemcpyDeviceToHost) != cudaSuccess) return -1;
    long long n = 0;
    const size_t x0 = static_cast<size_t>(ox_) * elem_, x1 = x0 + static_cast<size_t>(size_.width) * elem_;
    for (int y = 0; y < height_; ++y)
      for (size_t b = 0; b < width_bytes_; ++b) {
        const bool inside = y >= oy_ && y < oy_ + size_.height && b >= x0 && b < x1;
        if (!inside && all[static_cast<size_t>(y) * pitch_ + b] != 0x5A) ++n;
      }
    return n;
  }

 private:
  cv::Size size_;
  size_t elem_;
  int ox_, oy_;
  size_t width_bytes_;
  int height_;
  void* base_ = nullptr;
  size_t pitch_ = 0;
  cudaError_t status_ = cudaErrorUnknown;
};

// An owned non-blocking stream: the launchers must use the one they are given. Work queued on the
// legacy default stream is not ordered with it (see the ordering note at the top).
class TestStream {
 public:
  TestStream() { status_ = cudaStreamCreateWithFlags(&s_, cudaStreamNonBlocking); }
  ~TestStream() {
    if (s_) (void)cudaStreamDestroy(s_);
  }
  TestStream(const TestStream&) = delete;
  TestStream& operator=(const TestStream&) = delete;
  cudaStream_t get() const { return s_; }
  cudaError_t status() const { return status_; }

 private:
  cudaStream_t s_ = nullptr;
  cudaError_t status_ = cudaErrorUnknown;
};
#endif

// The parity grid of the mask kernels: image size, depth type, mask type, ROI input or not, over the
// awkward sizes (OpenCV's CUDA tests use the same ones).
using MaskParityParam = std::tuple<cv::Size, int /*depth type*/, int /*mask type*/, bool /*roi*/>;

inline auto mask_parity_grid() {
  return ::testing::Combine(::testing::Values(cv::Size(1, 1), cv::Size(13, 1), cv::Size(1, 13), cv::Size(31, 33),
                                              cv::Size(33, 31), cv::Size(640, 480), cv::Size(639, 481)),
                            ::testing::Values(CV_16UC1, CV_32FC1), ::testing::Values(CV_8UC1, CV_16UC1),
                            ::testing::Bool());
}

inline std::string mask_parity_name(const ::testing::TestParamInfo<MaskParityParam>& i) {
  const auto [size, dtype, mtype, roi] = i.param;
  return std::to_string(size.width) + "x" + std::to_string(size.height) + (dtype == CV_16UC1 ? "_d16" : "_f32") +
         (mtype == CV_8UC1 ? "_m8" : "_m16") + (roi ? "_roi" : "");
}

}  // namespace dmtest
