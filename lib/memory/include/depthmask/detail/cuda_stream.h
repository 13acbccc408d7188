// Move-only owners of CUDA objects. Destructors never throw.
#pragma once

#include <cuda_runtime_api.h>

#include <string>
#include <utility>

#include "depthmask/detail/cuda_check.h"

namespace depthmask::detail {

// Makes `device` current for the calling thread.
inline void use_device(int device) { DM_CUDA(cudaSetDevice(device)); }

// Empty while `device` is usable; otherwise the sticky error that makes every later call fail.
inline std::string device_health(int device) {
  if (cudaSetDevice(device) != cudaSuccess) return "cannot select CUDA device " + std::to_string(device);
  const cudaError_t e = cudaDeviceSynchronize();
  if (e == cudaSuccess) return {};
  (void)cudaGetLastError();
  return std::string("CUDA device ") + std::to_string(device) +
         " is in an unrecoverable state: " + cudaGetErrorName(e) + " (" + cudaGetErrorString(e) + ")";
}

class CudaStream {
 public:
  // A non-blocking stream on `device` (made current for the calling thread first, so the stream and
  // the context belong to that device and not to whatever was current).
  explicit CudaStream(int device) {
    use_device(device);
    DM_CUDA(cudaStreamCreateWithFlags(&s_, cudaStreamNonBlocking));
  }
  CudaStream(CudaStream&& o) noexcept : s_(std::exchange(o.s_, nullptr)) {}
  CudaStream& operator=(CudaStream&& o) noexcept {
    if (this != &o) {
      reset();
      s_ = std::exchange(o.s_, nullptr);
    }
    return *this;
  }
  CudaStream(const CudaStream&) = delete;
  CudaStream& operator=(const CudaStream&) = delete;
  ~CudaStream() { reset(); }

  cudaStream_t get() const { return s_; }
  void synchronize() const { DM_CUDA(cudaStreamSynchronize(s_)); }

 private:
  void reset() noexcept {
    if (s_ != nullptr) DM_CUDA_NOTHROW(cudaStreamDestroy(s_));
    s_ = nullptr;
  }
  cudaStream_t s_ = nullptr;
};

}  // namespace depthmask::detail
