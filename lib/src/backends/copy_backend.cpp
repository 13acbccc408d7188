// copy: device buffers (cudaMalloc) + pinned host staging (cudaHostAlloc); async H2D/D2H on the
// backend's stream. Best on discrete GPUs, where the kernel then reads HBM instead of the bus.
#include <spdlog/spdlog.h>

#include "detail/backends.h"
#include "detail/cuda_stream.h"

namespace depthmask::detail {

namespace {

class CopyBackend final : public MemoryBackend {
 public:
  explicit CopyBackend(const DeviceInfo& dev) : MemoryBackend(BackendKind::Copy), dev_(dev), stream_(dev.index) {
  }
  bool device_executes() const override { return true; }
  bool shares_memory() const override { return false; }
  CUstream_st* stream() const override { return stream_.get(); }
  void synchronize() override { stream_.synchronize(); }
  void make_current() override { use_device(dev_.index); }
  std::string health() override { return device_health(dev_.index); }
  std::string describe() const override {
    return "copy: device buffers + pinned staging on " + dev_.name + " (device " + std::to_string(dev_.index) + ")";
  }

 private:
  Block do_allocate(size_t bytes) override {
    use_device(dev_.index);
    Block b;
    DM_CUDA(cudaHostAlloc(&b.host, bytes, cudaHostAllocDefault));
    const cudaError_t e = cudaMalloc(&b.device, bytes);
    if (e != cudaSuccess) {
      DM_CUDA_NOTHROW(cudaFreeHost(b.host));
      DM_CUDA(e);
    }
    return b;
  }
  void do_deallocate(Block b) noexcept override {
    DM_CUDA_NOTHROW(cudaFree(b.device));
    DM_CUDA_NOTHROW(cudaFreeHost(b.host));
  }
  void do_to_device(const Block& b, size_t bytes) override {
    DM_CUDA(cudaMemcpyAsync(b.device, b.host, bytes, cudaMemcpyHostToDevice, stream_.get()));
  }
  void do_to_host(const Block& b, size_t bytes) override {
    DM_CUDA(cudaMemcpyAsync(b.host, b.device, bytes, cudaMemcpyDeviceToHost, stream_.get()));
  }

  DeviceInfo dev_;
  CudaStream stream_;
};

}  // namespace

std::unique_ptr<MemoryBackend> make_copy_backend(const DeviceInfo& dev) { return std::make_unique<CopyBackend>(dev); }

}  // namespace depthmask::detail
