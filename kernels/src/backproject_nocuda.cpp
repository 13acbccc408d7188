// Stand-in for backproject_kernel.cu in CPU-only builds (no nvcc).
#include "depthmask/kernels/backproject.h"
#include "depthmask/kernels/errors.h"

namespace depthmask {

void launch_backproject(const BackprojectJob&, CUstream_st*) {
  throw PlatformError(
      "this depthmask was built without CUDA (no nvcc at build time): GPU backprojection is "
      "unavailable; use backend kind 'cpu' or rebuild with -DDEPTHMASK_CUDA=ON");
}

}  // namespace depthmask
