// What the three CUDA backends share: their device, their own stream, streams for frame slots,
// synchronisation and the health check. CUDA builds only.
#pragma once

#include <string>

#include "depthmask/backend.h"
#include "detail/cuda_stream.h"

namespace depthmask::detail {

class GpuBackend : public MemoryBackend {
 public:
  bool device_executes() const override { return true; }
  CUstream_st* stream() const override { return stream_.get(); }
  StreamHandle create_stream() override {
    auto s = std::make_shared<CudaStream>(dev_.index);
    // The handle points at the stream and owns the CudaStream that destroys it.
    return StreamHandle(s, s->get());
  }
  void synchronize(CUstream_st* s) override { DM_CUDA(cudaStreamSynchronize(s != nullptr ? s : stream_.get())); }
  // An event with cudaEventBlockingSync: waiting on it sleeps whatever the device's schedule flags.
  void synchronize_blocking(CUstream_st* s) override {
    cudaEvent_t e = nullptr;
    DM_CUDA(cudaEventCreateWithFlags(&e, cudaEventBlockingSync | cudaEventDisableTiming));
    const cudaError_t recorded = cudaEventRecord(e, s != nullptr ? s : stream_.get());
    const cudaError_t waited = recorded == cudaSuccess ? cudaEventSynchronize(e) : recorded;
    DM_CUDA_NOTHROW(cudaEventDestroy(e));
    DM_CUDA(waited);
  }
  void make_current() override { use_device(dev_.index); }
  std::string health() override { return device_health(dev_.index); }

 protected:
  GpuBackend(BackendKind kind, const DeviceInfo& dev) : MemoryBackend(kind), dev_(dev), stream_(dev.index) {}
  std::string on_device() const { return dev_.name + " (device " + std::to_string(dev_.index) + ")"; }

  DeviceInfo dev_;
  CudaStream stream_;
};

}  // namespace depthmask::detail
