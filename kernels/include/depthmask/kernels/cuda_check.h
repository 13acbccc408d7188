// The CUDA check of every layer: DM_CUDA(call) throws with the call text, file:line and the CUDA
// error name and string. Included only by translation units that talk to the CUDA runtime. The
// library adds a no-throw variant for destructors (depthmask/detail/cuda_check.h), which logs.
#pragma once

#include <cuda_runtime_api.h>

#include <sstream>
#include <string>

#include "depthmask/kernels/errors.h"

namespace depthmask::detail {

inline std::string cuda_error_text(cudaError_t e, const char* call, const char* file, int line) {
  std::ostringstream os;
  os << "CUDA call '" << call << "' failed at " << file << ":" << line << ": " << cudaGetErrorName(e) << " ("
     << cudaGetErrorString(e) << ")";
  return os.str();
}

// Out of memory is a ResourceError like every other out-of-memory condition; any other failure is a
// CudaError carrying the code.
[[noreturn]] inline void throw_cuda_error(cudaError_t e, const char* call, const char* file, int line) {
  (void)cudaGetLastError();  // clear a non-sticky error so the next call starts clean
  if (e == cudaErrorMemoryAllocation) throw ResourceError(cuda_error_text(e, call, file, line));
  throw CudaError(cuda_error_text(e, call, file, line), static_cast<int>(e));
}

}  // namespace depthmask::detail

// DM_CUDA(call): throws depthmask::ResourceError when the call ran out of memory, depthmask::CudaError
// otherwise.
#define DM_CUDA(call)                                                               \
  do {                                                                              \
    const cudaError_t dm_cuda_e_ = (call);                                          \
    if (dm_cuda_e_ != cudaSuccess) {                                                \
      ::depthmask::detail::throw_cuda_error(dm_cuda_e_, #call, __FILE__, __LINE__); \
    }                                                                               \
  } while (0)
