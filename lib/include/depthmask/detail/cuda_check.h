// CUDA error checks. Included only by translation units that talk to the CUDA runtime.
#pragma once

#include <cuda_runtime_api.h>

#include <string>

#include "depthmask/errors.h"

namespace depthmask::detail {

inline std::string cuda_error_text(cudaError_t e, const char* call, const char* file, int line) {
  std::ostringstream os;
  os << "CUDA call '" << call << "' failed at " << file << ":" << line << ": " << cudaGetErrorName(e) << " ("
     << cudaGetErrorString(e) << ")";
  return os.str();
}

// Logs without throwing; for destructors. Returns false on failure. cudaErrorCudartUnloading at process
// exit is benign (the runtime is already gone) and is not reported.
bool cuda_check_nothrow(cudaError_t e, const char* call, const char* file, int line) noexcept;

}  // namespace depthmask::detail

// DM_CUDA(call): throws depthmask::CudaError with the call text, file:line and the CUDA error name.
#define DM_CUDA(call)                                                                                           \
  do {                                                                                                          \
    const cudaError_t dm_cuda_e_ = (call);                                                                      \
    if (dm_cuda_e_ != cudaSuccess) {                                                                            \
      (void)cudaGetLastError(); /* clear a non-sticky error so the next call starts clean */                    \
      throw ::depthmask::CudaError(::depthmask::detail::cuda_error_text(dm_cuda_e_, #call, __FILE__, __LINE__), \
                                   static_cast<int>(dm_cuda_e_));                                               \
    }                                                                                                           \
  } while (0)

// DM_CUDA_NOTHROW(call): for destructors; logs a failure and carries on.
#define DM_CUDA_NOTHROW(call)                                                         \
  do {                                                                                \
    (void)::depthmask::detail::cuda_check_nothrow((call), #call, __FILE__, __LINE__); \
  } while (0)
