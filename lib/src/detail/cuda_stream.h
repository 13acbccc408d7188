// Move-only owners of CUDA objects. Destructors never throw.
#pragma once

#include <cuda_runtime_api.h>

#include <utility>

#include "depthmask/detail/cuda_check.h"

namespace depthmask::detail {

class CudaStream {
 public:
  CudaStream() { DM_CUDA(cudaStreamCreateWithFlags(&s_, cudaStreamNonBlocking)); }
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

// Makes `device` current for the calling thread.
inline void use_device(int device) { DM_CUDA(cudaSetDevice(device)); }

}  // namespace depthmask::detail
