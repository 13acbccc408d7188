#include "depthmask/detail/cuda_check.h"
#include "depthmask/detail/log.h"

namespace depthmask::detail {

bool cuda_check_nothrow(cudaError_t e, const char* call, const char* file, int line) noexcept {
  if (e == cudaSuccess) return true;
  (void)cudaGetLastError();
  if (e != cudaErrorCudartUnloading) {
    try {
      detail::log().error("{}", cuda_error_text(e, call, file, line));
    } catch (...) {
    }
  }
  return false;
}

}  // namespace depthmask::detail
