// Stand-in for color_key_kernel.cu in CPU-only builds (no nvcc).
#include "depthmask/kernels/color_key.h"
#include "depthmask/kernels/errors.h"

namespace depthmask {

void launch_color_key(const ColorKeyJob&, const MaskParams&, const ColorKey&, CUstream_st*) {
  throw PlatformError(
      "this depthmask was built without CUDA (no nvcc at build time): the GPU colour key is "
      "unavailable; use backend kind 'cpu' or rebuild with -DDEPTHMASK_CUDA=ON");
}

}  // namespace depthmask
