// Micro-benchmarks of the masking pass.
//
// CPU: mask_cpu (one thread, and all threads) against OpenCV's masked copy (`depth.copyTo(out, mask8)`,
// the yardstick for the CPU loop) per frame size and depth type.
// GPU: every kernel variant on device-resident frames (and on mapped host memory, the zero-copy
// backend's case), rotating over enough frames that the working set is at least 4x the L2 cache, timed
// with CUDA events; a device-to-device cudaMemcpyAsync over the same working set as the ceiling; and
// one batched launch of 16 640x480 frames against 16 single launches.
// Bytes processed = depth read + mask read + float out written. Masks keep ~40% of the pixels in runs,
// as segmentation masks do (an all-zero mask would let the hardware skip depth loads).
//
//   depthmask_microbench --benchmark_filter='^(CpuMask|CopyTo)/'   (CPU)
//   depthmask_microbench --benchmark_filter='^Gpu'                 (GPU)
#include <benchmark/benchmark.h>
#include <tbb/global_control.h>

#include <algorithm>
#include <cstdint>
#include <limits>
#include <memory>
#include <opencv2/core.hpp>
#include <random>
#include <string>
#include <vector>

#if DEPTHMASK_HAVE_CUDA
#include <cuda_runtime_api.h>
#endif

#include "depthmask/kernels/mask_kernel.h"
#include "depthmask/kernels/mask_variants.h"

namespace dm = depthmask;

namespace {

const cv::Size kSizes[] = {{640, 480}, {1280, 720}, {1920, 1080}, {3840, 2160}};

std::string size_name(cv::Size s) { return std::to_string(s.width) + "x" + std::to_string(s.height); }
const char* depth_name(int type) { return type == CV_16UC1 ? "u16" : "f32"; }

dm::MaskParams bench_params() {
  dm::MaskParams p;
  dm::set_depth_range(p, 0.001, 0.2, 10.0);
  return p;
}

// Depth: 0.3..9 m (u16 in mm, or float metres) with ~5% holes (0; NaN for float).
cv::Mat make_depth(cv::Size s, int type, unsigned seed) {
  std::mt19937 rng(seed);
  std::uniform_int_distribution<int> mm(300, 9000), hole(0, 19);
  cv::Mat d(s, type);
  for (int y = 0; y < s.height; ++y)
    for (int x = 0; x < s.width; ++x) {
      const int v = hole(rng) == 0 ? 0 : mm(rng);
      if (type == CV_16UC1)
        d.at<uint16_t>(y, x) = static_cast<uint16_t>(v);
      else
        d.at<float>(y, x) = v == 0 ? std::numeric_limits<float>::quiet_NaN() : static_cast<float>(v) * 0.001f;
    }
  return d;
}

// An 8-bit mask keeping ~40% of the pixels in runs of 4..60 (kept) and 6..90 (dropped) pixels.
cv::Mat make_mask(cv::Size s, unsigned seed) {
  std::mt19937 rng(seed);
  std::uniform_int_distribution<int> kept(4, 60), dropped(6, 90);
  cv::Mat m(s, CV_8UC1, cv::Scalar(0));
  for (int y = 0; y < s.height; ++y) {
    bool on = (y & 1) != 0;
    for (int x = 0; x < s.width;) {
      const int n = std::min(on ? kept(rng) : dropped(rng), s.width - x);
      if (on) std::fill_n(m.ptr<uint8_t>(y) + x, n, uint8_t{1});
      x += n;
      on = !on;
    }
  }
  return m;
}

int64_t frame_bytes(cv::Size s, size_t depth_elem, size_t mask_elem) {
  return static_cast<int64_t>(s.area()) * static_cast<int64_t>(depth_elem + mask_elem + sizeof(float));
}

dm::MaskJob host_job(const cv::Mat& depth, const cv::Mat& mask, cv::Mat& out) {
  dm::MaskJob job;
  job.depth = {depth.data, depth.step[0]};
  job.depth_type = depth.type() == CV_16UC1 ? dm::DepthType::U16 : dm::DepthType::F32;
  job.mask = {mask.data, mask.step[0]}, job.mask_type = dm::MaskType::U8;
  job.out = {out.ptr<float>(), out.step[0]}, job.rows = depth.rows, job.cols = depth.cols;
  return job;
}

// ---- CPU ----

// threads: 1 (tbb::global_control) or 0 (all of the machine's).
void cpu_mask(benchmark::State& state, cv::Size size, int depth_type, int threads) {
  std::unique_ptr<tbb::global_control> limit;
  if (threads > 0) limit = std::make_unique<tbb::global_control>(tbb::global_control::max_allowed_parallelism, threads);
  const cv::Mat depth = make_depth(size, depth_type, 1), mask = make_mask(size, 2);
  cv::Mat out(size, CV_32FC1);
  const dm::MaskJob job = host_job(depth, mask, out);
  const dm::MaskParams p = bench_params();
  for (auto _ : state) {
    dm::mask_cpu(job, p);
    benchmark::DoNotOptimize(out.data);
    benchmark::ClobberMemory();
  }
  state.SetBytesProcessed(state.iterations() * frame_bytes(size, depth.elemSize(), 1));
}

// OpenCV's masked copy of the same depth into a same-typed output (for float depth exactly the
// issue's yardstick; for u16 the same traffic shape with 2-byte output pixels).
void cv_copy_to(benchmark::State& state, cv::Size size, int depth_type, int threads) {
  const int saved = cv::getNumThreads();
  cv::setNumThreads(threads > 0 ? threads : -1);
  const cv::Mat depth = make_depth(size, depth_type, 1), mask = make_mask(size, 2);
  cv::Mat out(size, depth_type, cv::Scalar(0));
  for (auto _ : state) {
    depth.copyTo(out, mask);
    benchmark::DoNotOptimize(out.data);
    benchmark::ClobberMemory();
  }
  cv::setNumThreads(saved);
  state.SetBytesProcessed(state.iterations() * static_cast<int64_t>(size.area()) *
                          static_cast<int64_t>(2 * depth.elemSize() + 1));
}

// ---- GPU ----

#if DEPTHMASK_HAVE_CUDA
// Skips the benchmark (with the reason) unless a CUDA device is usable.
bool require_gpu(benchmark::State& state) {
  int n = 0;
  const cudaError_t e = cudaGetDeviceCount(&n);
  if (e != cudaSuccess || n == 0) {
    state.SkipWithError(
        (std::string("no CUDA device: ") + (e != cudaSuccess ? cudaGetErrorString(e) : "none found")).c_str());
    return false;
  }
  return true;
}

bool cuda_ok(benchmark::State& state, cudaError_t e, const char* what) {
  if (e == cudaSuccess) return true;
  state.SkipWithError((std::string(what) + ": " + cudaGetErrorString(e)).c_str());
  return false;
}

// A rotating set of frames, each one block [depth | mask | out] (rows packed, 256-byte aligned
// planes), in device memory or mapped pinned host memory, enough of them that the set is at least
// 4x the L2 cache (and a multiple of `group` frames).
class FrameSet {
 public:
  FrameSet(cv::Size size, int depth_type, bool mapped, int group = 1) : size_(size), mapped_(mapped) {
    int dev = 0, l2 = 0;
    status_ = cudaGetDevice(&dev);
    if (status_ == cudaSuccess) status_ = cudaDeviceGetAttribute(&l2, cudaDevAttrL2CacheSize, dev);
    if (status_ != cudaSuccess) return;
    depth_elem_ = depth_type == CV_16UC1 ? 2 : 4;
    const size_t px = static_cast<size_t>(size.area());
    depth_bytes_ = round_up(px * depth_elem_), mask_bytes_ = round_up(px), out_bytes_ = round_up(px * sizeof(float));
    block_ = depth_bytes_ + mask_bytes_ + out_bytes_;
    size_t n = (4 * static_cast<size_t>(l2) + block_ - 1) / block_ + 1;
    n = (n + static_cast<size_t>(group) - 1) / static_cast<size_t>(group) * static_cast<size_t>(group);
    count_ = static_cast<int>(n);
    status_ = mapped ? cudaHostAlloc(&base_, block_ * n, cudaHostAllocMapped) : cudaMalloc(&base_, block_ * n);
    if (status_ == cudaSuccess && mapped) status_ = cudaHostGetDevicePointer(&dev_base_, base_, 0);
    if (status_ == cudaSuccess && !mapped) dev_base_ = base_;
    if (status_ != cudaSuccess) return;
    const cv::Mat depth = make_depth(size, depth_type, 1), mask = make_mask(size, 2);
    for (int i = 0; i < count_ && status_ == cudaSuccess; ++i) {
      char* b = block(i);  // the device-side address (mapped memory: the same bytes through UVA)
      status_ = cudaMemcpy(b, depth.data, px * depth_elem_, cudaMemcpyDefault);
      if (status_ == cudaSuccess) status_ = cudaMemcpy(b + depth_bytes_, mask.data, px, cudaMemcpyDefault);
      if (status_ == cudaSuccess) status_ = cudaMemset(b + depth_bytes_ + mask_bytes_, 0, px * sizeof(float));
    }
    if (status_ == cudaSuccess) status_ = cudaDeviceSynchronize();
  }
  ~FrameSet() {
    if (base_) (void)(mapped_ ? cudaFreeHost(base_) : cudaFree(base_));
  }
  FrameSet(const FrameSet&) = delete;
  FrameSet& operator=(const FrameSet&) = delete;

  cudaError_t status() const { return status_; }
  int count() const { return count_; }
  size_t block_bytes() const { return block_; }
  char* block(int i) const { return static_cast<char*>(dev_base_) + block_ * static_cast<size_t>(i); }
  int64_t bytes_per_frame() const { return frame_bytes(size_, depth_elem_, 1); }
  dm::MaskJob job(int i) const {
    dm::MaskJob j;
    char* b = block(i);
    j.depth = {b, static_cast<size_t>(size_.width) * depth_elem_};
    j.depth_type = depth_elem_ == 2 ? dm::DepthType::U16 : dm::DepthType::F32;
    j.mask = {b + depth_bytes_, static_cast<size_t>(size_.width)}, j.mask_type = dm::MaskType::U8;
    j.out = {reinterpret_cast<float*>(b + depth_bytes_ + mask_bytes_), static_cast<size_t>(size_.width) * 4};
    j.rows = size_.height, j.cols = size_.width;
    return j;
  }

 private:
  static size_t round_up(size_t b) { return (b + 255) / 256 * 256; }
  cv::Size size_;
  bool mapped_;
  size_t depth_elem_ = 4, depth_bytes_ = 0, mask_bytes_ = 0, out_bytes_ = 0, block_ = 0;
  int count_ = 0;
  void* base_ = nullptr;
  void* dev_base_ = nullptr;
  cudaError_t status_ = cudaErrorUnknown;
};

// Events and a stream for one benchmark; each iteration enqueues `work` once and is timed by events.
class GpuTimer {
 public:
  GpuTimer() {
    status_ = cudaStreamCreateWithFlags(&stream_, cudaStreamNonBlocking);
    if (status_ == cudaSuccess) status_ = cudaEventCreate(&start_);
    if (status_ == cudaSuccess) status_ = cudaEventCreate(&stop_);
  }
  ~GpuTimer() {
    if (start_) (void)cudaEventDestroy(start_);
    if (stop_) (void)cudaEventDestroy(stop_);
    if (stream_) (void)cudaStreamDestroy(stream_);
  }
  GpuTimer(const GpuTimer&) = delete;
  GpuTimer& operator=(const GpuTimer&) = delete;
  cudaError_t status() const { return status_; }
  cudaStream_t stream() const { return stream_; }

  // Runs the benchmark loop: one untimed warm-up call, then work() between two events per iteration.
  template <class Work>
  void run(benchmark::State& state, Work&& work) {
    work();
    if (!cuda_ok(state, cudaStreamSynchronize(stream_), "warm-up")) return;
    for (auto _ : state) {
      (void)cudaEventRecord(start_, stream_);
      work();
      (void)cudaEventRecord(stop_, stream_);
      if (!cuda_ok(state, cudaEventSynchronize(stop_), "kernel")) break;
      float ms = 0.0f;
      (void)cudaEventElapsedTime(&ms, start_, stop_);
      state.SetIterationTime(static_cast<double>(ms) * 1e-3);
    }
  }

 private:
  cudaStream_t stream_ = nullptr;
  cudaEvent_t start_ = nullptr, stop_ = nullptr;
  cudaError_t status_ = cudaErrorUnknown;
};

// One iteration = one pass over the whole frame set (each frame once), so every iteration streams
// at least 4x L2 and per-launch timing granularity does not matter.
void gpu_mask(benchmark::State& state, dm::MaskKernelVariant variant, cv::Size size, int depth_type, bool mapped) {
  if (!require_gpu(state)) return;
  const FrameSet frames(size, depth_type, mapped);
  GpuTimer timer;
  if (!cuda_ok(state, frames.status(), "frame set") || !cuda_ok(state, timer.status(), "stream/events")) return;
  const dm::MaskParams p = bench_params();
  timer.run(state, [&] {
    for (int i = 0; i < frames.count(); ++i) dm::launch_mask_variant(frames.job(i), p, variant, timer.stream());
  });
  state.SetBytesProcessed(state.iterations() * frames.count() * frames.bytes_per_frame());
  state.SetItemsProcessed(state.iterations() * frames.count());
  state.counters["frames_in_set"] = frames.count();
}

// The ceiling: a device-to-device copy moving the same bytes (half of each frame's block read, the
// other half written).
void gpu_copy(benchmark::State& state, cv::Size size, int depth_type) {
  if (!require_gpu(state)) return;
  const FrameSet frames(size, depth_type, false);
  GpuTimer timer;
  if (!cuda_ok(state, frames.status(), "frame set") || !cuda_ok(state, timer.status(), "stream/events")) return;
  const size_t half = static_cast<size_t>(frames.bytes_per_frame()) / 2;
  timer.run(state, [&] {
    for (int i = 0; i < frames.count(); ++i)
      (void)cudaMemcpyAsync(frames.block(i) + frames.block_bytes() - half, frames.block(i), half,
                            cudaMemcpyDeviceToDevice, timer.stream());
  });
  state.SetBytesProcessed(state.iterations() * frames.count() * static_cast<int64_t>(2 * half));
  state.SetItemsProcessed(state.iterations() * frames.count());
}

// 16 640x480 frames per iteration: one batched launch, or 16 single launches (default variant).
constexpr int kBatch = 16;
void gpu_batch(benchmark::State& state, int depth_type, bool batched) {
  if (!require_gpu(state)) return;
  const FrameSet frames(cv::Size(640, 480), depth_type, false, kBatch);
  GpuTimer timer;
  if (!cuda_ok(state, frames.status(), "frame set") || !cuda_ok(state, timer.status(), "stream/events")) return;
  const dm::MaskParams p = bench_params();
  int next = 0;
  timer.run(state, [&] {
    dm::MaskJob jobs[kBatch];
    for (int i = 0; i < kBatch; ++i) jobs[i] = frames.job(next + i);
    next = (next + kBatch) % frames.count();
    if (batched)
      dm::launch_mask_batch(jobs, kBatch, p, timer.stream());
    else
      for (const dm::MaskJob& j : jobs) dm::launch_mask(j, p, timer.stream());
  });
  state.SetBytesProcessed(state.iterations() * kBatch * frames.bytes_per_frame());
  state.SetItemsProcessed(state.iterations() * kBatch);
}
#else
void no_cuda(benchmark::State& state) { state.SkipWithError("no CUDA device: this build has no CUDA"); }
#endif

// Registers every benchmark before benchmark_main runs them.
[[maybe_unused]] const bool registered = [] {
  for (const cv::Size s : kSizes)
    for (const int dt : {CV_16UC1, CV_32FC1}) {
      const std::string tail = std::string("/") + depth_name(dt) + "/" + size_name(s) + "/";
      for (const int threads : {1, 0}) {
        const std::string t = threads == 1 ? "threads:1" : "threads:all";
        benchmark::RegisterBenchmark(("CpuMask" + tail + t).c_str(), cpu_mask, s, dt, threads)
            ->Unit(benchmark::kMicrosecond);
        benchmark::RegisterBenchmark(("CopyTo" + tail + t).c_str(), cv_copy_to, s, dt, threads)
            ->Unit(benchmark::kMicrosecond);
      }
#if DEPTHMASK_HAVE_CUDA
      for (const bool mapped : {false, true})
        for (const dm::MaskKernelVariant& v : mapped ? dm::mapped_mask_kernel_variants() : dm::mask_kernel_variants()) {
          std::string vn = dm::to_string(v);
          std::replace(vn.begin(), vn.end(), ' ', '_');
          benchmark::RegisterBenchmark(("GpuMask/" + vn + tail + (mapped ? "mapped" : "device")).c_str(), gpu_mask, v,
                                       s, dt, mapped)
              ->UseManualTime()
              ->Unit(benchmark::kMicrosecond);
        }
      benchmark::RegisterBenchmark(("GpuCopyD2D" + tail + "device").c_str(), gpu_copy, s, dt)
          ->UseManualTime()
          ->Unit(benchmark::kMicrosecond);
#endif
    }
#if DEPTHMASK_HAVE_CUDA
  for (const int dt : {CV_16UC1, CV_32FC1}) {
    const std::string tail = std::string("/") + depth_name(dt) + "/640x480/x16";
    benchmark::RegisterBenchmark(("GpuBatch/batched" + tail).c_str(), gpu_batch, dt, true)
        ->UseManualTime()
        ->Unit(benchmark::kMicrosecond);
    benchmark::RegisterBenchmark(("GpuBatch/single" + tail).c_str(), gpu_batch, dt, false)
        ->UseManualTime()
        ->Unit(benchmark::kMicrosecond);
  }
#else
  benchmark::RegisterBenchmark("GpuMask/no_cuda", no_cuda);
#endif
  return true;
}();

}  // namespace
