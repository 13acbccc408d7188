// Stand-ins for register.cu in CPU-only builds (no nvcc): the GPU launchers report what is missing.
#include "depthmask/kernels/errors.h"
#include "depthmask/kernels/register.h"

namespace depthmask {

namespace {
[[noreturn]] void no_cuda(const char* what) {
  throw PlatformError(std::string("this depthmask was built without CUDA (no nvcc at build time): GPU ") + what +
                      " is unavailable; use backend kind 'cpu' or rebuild with -DDEPTHMASK_CUDA=ON");
}
}  // namespace

void launch_resample(const RegisterJob&, const ResampleMap&, const DepthDecode&, CUstream_st*) {
  no_cuda("depth resampling");
}

void launch_reproject(const RegisterJob&, const ReprojectParams&, const DepthDecode&, CUstream_st*) {
  no_cuda("depth reprojection");
}

}  // namespace depthmask
