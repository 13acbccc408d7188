// Stand-in for gpu_bench_cuda.cpp in CPU-only builds: the GPU sections say why they did not run.
#include "gpu_bench.h"

namespace depthmask::bench::detail {

GpuResults measure_gpu(const BenchOptions&, const PlatformInfo&, const std::vector<SizeImages>&, const MaskParams&,
                       const ProgressFn&) {
  GpuResults res;
  res.skipped = "this depthmask was built without CUDA (no nvcc at build time)";
  return res;
}

}  // namespace depthmask::bench::detail
