// What the three CUDA backends share: their device, their own stream, streams for frame slots,
// synchronisation and the health check. CUDA builds only.
#pragma once

#include <mutex>
#include <string>
#include <vector>

#include "depthmask/backend.h"
#include "depthmask/detail/cuda_stream.h"

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
  // Events are reused (one per thread waiting at once), not created per frame.
  void synchronize_blocking(CUstream_st* s) override {
    cudaEvent_t e = take_event();
    const cudaError_t recorded = cudaEventRecord(e, s != nullptr ? s : stream_.get());
    const cudaError_t waited = recorded == cudaSuccess ? cudaEventSynchronize(e) : recorded;
    give_back_event(e);
    DM_CUDA(waited);
  }
  ~GpuBackend() override {
    for (cudaEvent_t e : events_) DM_CUDA_NOTHROW(cudaEventDestroy(e));
  }
  void make_current() override { use_device(dev_.index); }
  std::string health() override { return device_health(dev_.index); }

 protected:
  GpuBackend(BackendKind kind, const DeviceInfo& dev) : MemoryBackend(kind), dev_(dev), stream_(dev.index) {
    note_cuda_initialised();  // also when made from a fabricated probe (tests), without probe_platform()
  }
  std::string on_device() const { return dev_.name + " (device " + std::to_string(dev_.index) + ")"; }

  DeviceInfo dev_;
  CudaStream stream_;

 private:
  cudaEvent_t take_event() {
    {
      const std::lock_guard<std::mutex> lock(events_mutex_);
      if (!events_.empty()) {
        cudaEvent_t e = events_.back();
        events_.pop_back();
        return e;
      }
    }
    use_device(dev_.index);
    cudaEvent_t e = nullptr;
    DM_CUDA(cudaEventCreateWithFlags(&e, cudaEventBlockingSync | cudaEventDisableTiming));
    return e;
  }
  void give_back_event(cudaEvent_t e) {
    const std::lock_guard<std::mutex> lock(events_mutex_);
    events_.push_back(e);
  }

  std::mutex events_mutex_;
  std::vector<cudaEvent_t> events_;  // free blocking-sync events
};

}  // namespace depthmask::detail
