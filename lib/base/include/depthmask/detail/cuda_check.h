// CUDA error checks of the library: the kernels' DM_CUDA (depthmask/kernels/cuda_check.h) and a
// no-throw variant for destructors that logs. Included only by translation units that talk to the
// CUDA runtime.
#pragma once

#include "depthmask/kernels/cuda_check.h"

namespace depthmask::detail {

// Logs without throwing; for destructors. Returns false on failure. cudaErrorCudartUnloading at process
// exit is benign (the runtime is already gone) and is not reported.
bool cuda_check_nothrow(cudaError_t e, const char* call, const char* file, int line) noexcept;

}  // namespace depthmask::detail

// DM_CUDA_NOTHROW(call): for destructors; logs a failure and carries on.
#define DM_CUDA_NOTHROW(call)                                                         \
  do {                                                                                \
    (void)::depthmask::detail::cuda_check_nothrow((call), #call, __FILE__, __LINE__); \
  } while (0)
