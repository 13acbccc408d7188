// What the bench's measuring sources share: the test images and the GPU part, which
// gpu_bench_cuda.cpp implements with the CUDA runtime and gpu_bench_nocuda.cpp reports unavailable.
#pragma once

#include <opencv2/core.hpp>

#include <string>
#include <vector>

#include "depthmask/bench/bench.h"
#include "depthmask/kernels/mask_kernel.h"
#include "depthmask/platform.h"

namespace depthmask::bench::detail {

// One size's real-looking input (the synthetic renderer: objects on a table, a wall behind; the mask
// has labels on the objects and zeros elsewhere), in both depth types the targets name.
struct SizeImages {
  FrameSize size;
  cv::Mat depth_f32;  // CV_32FC1 metres, 0 where the sensor has no measurement
  cv::Mat depth_u16;  // CV_16UC1 millimetres
  cv::Mat mask;       // CV_8UC1 labels
  std::string frame;  // empty: synthetic; else the recorded frame's mask file name
  const cv::Mat& depth(bool f32) const { return f32 ? depth_f32 : depth_u16; }
};

// A job over host Mats (continuous or not): what mask_cpu needs.
MaskJob host_job(const cv::Mat& depth, const cv::Mat& mask, cv::Mat& out);
// mask_cpu's output for (depth, mask): the gold the kernel rows are checked against.
cv::Mat reference_output(const cv::Mat& depth, const cv::Mat& mask, const MaskParams& params);

struct GpuResults {
  std::string skipped;  // non-empty: nothing ran, and why
  size_t l2_bytes = 0;
  std::vector<Ceiling> ceilings;
  std::vector<KernelRow> kernel;
  std::vector<std::pair<std::string, std::string>> failures;  // what, why (a backend or ceiling that failed)
};

// The ceilings and the kernel-only rows of the GPU backends in o.backends, on device o.device.
GpuResults measure_gpu(const BenchOptions& o, const PlatformInfo& platform, const std::vector<SizeImages>& images,
                       const MaskParams& params, const ProgressFn& progress);

}  // namespace depthmask::bench::detail
