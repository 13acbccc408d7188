// Stand-in for mask_kernel.cu in CPU-only builds (no nvcc): the GPU launcher reports what is missing.
#include "depthmask/errors.h"
#include "depthmask/kernels/mask_kernel.h"

namespace depthmask {

bool have_cuda_kernels() noexcept { return false; }

void launch_mask(const MaskJob&, const MaskParams&, CUstream_st*) {
  throw PlatformError("this depthmask was built without CUDA (no nvcc at build time): GPU masking is unavailable; "
                      "use backend kind 'cpu' or rebuild with -DDEPTHMASK_CUDA=ON");
}

}  // namespace depthmask
