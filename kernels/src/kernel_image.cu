// probe_kernel_image: which SASS/PTX of this library the driver picks for the current device.
#include <cuda_runtime_api.h>

#include "depthmask/kernels/kernel_image.h"

namespace depthmask {

namespace {
// Never launched: its attributes tell which of the fatbinary's images the driver would load, and
// cudaErrorNoKernelImageForDevice when there is none, exactly as for the masking kernels beside it.
__global__ void image_probe_kernel(int* p) {
  if (p != nullptr) *p = 0;
}
}  // namespace

KernelImageProbe probe_kernel_image() noexcept {
  KernelImageProbe info;
  cudaFuncAttributes a{};
  const cudaError_t e = cudaFuncGetAttributes(&a, image_probe_kernel);
  if (e != cudaSuccess) {
    (void)cudaGetLastError();
    try {
      info.error = cudaGetErrorName(e);
    } catch (...) {  // std::string's allocation: noexcept promises no throw
    }
    return info;
  }
  info.loaded = true;
  info.binary_version = a.binaryVersion;
  info.ptx_version = a.ptxVersion;
  return info;
}

}  // namespace depthmask
