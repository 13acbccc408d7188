// Stand-in for mask_kernel.cu in CPU-only builds (no nvcc): the GPU launcher reports what is missing.
#include "depthmask/kernels/errors.h"
#include "depthmask/kernels/mask_kernel.h"
#include "depthmask/kernels/mask_variants.h"

namespace depthmask {

bool have_cuda_kernels() noexcept { return false; }

namespace {
[[noreturn]] void no_cuda() {
  throw PlatformError(
      "this depthmask was built without CUDA (no nvcc at build time): GPU masking is unavailable; "
      "use backend kind 'cpu' or rebuild with -DDEPTHMASK_CUDA=ON");
}
}  // namespace

void launch_mask(const MaskJob&, const MaskParams&, CUstream_st*) { no_cuda(); }
std::vector<MaskKernelVariant> mask_kernel_variants() { return {}; }
MaskKernelVariant default_mask_kernel_variant() { return {}; }
std::vector<MaskKernelVariant> mapped_mask_kernel_variants() { return {}; }
MaskKernelVariant mapped_mask_kernel_variant() { return {}; }
void launch_mask_variant(const MaskJob&, const MaskParams&, const MaskKernelVariant&, CUstream_st*) { no_cuda(); }
void launch_mask_batch(const MaskJob*, int, const MaskParams&, CUstream_st*, const MaskKernelVariant&) { no_cuda(); }

}  // namespace depthmask
