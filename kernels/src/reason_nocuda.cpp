// Stand-in for reason_kernel.cu in CPU-only builds (no nvcc).
#include "depthmask/kernels/errors.h"
#include "depthmask/kernels/reason.h"

namespace depthmask {

void launch_reason(const ReasonJob&, const ReasonParams&, CUstream_st*) {
  throw PlatformError(
      "this depthmask was built without CUDA (no nvcc at build time): the GPU reason pass is "
      "unavailable; use backend kind 'cpu' or rebuild with -DDEPTHMASK_CUDA=ON");
}

}  // namespace depthmask
