// zero_copy: mapped pinned host memory (cudaHostAlloc(cudaHostAllocMapped)); the kernel reads and
// writes it through the pointer cudaHostGetDevicePointer gives. On integrated GPUs (Jetson) this is
// the same DRAM, so nothing is copied; on discrete GPUs the kernel's loads cross the bus once, which
// for a single pass can beat staged copies (DESIGN.md's H200 figures).
#include "depthmask/errors.h"
#include "detail/backends.h"
#include "detail/cuda_stream.h"

namespace depthmask::detail {

namespace {

class ZeroCopyBackend final : public MemoryBackend {
 public:
  explicit ZeroCopyBackend(const DeviceInfo& dev) : MemoryBackend(BackendKind::ZeroCopy), dev_(dev), stream_(dev.index) {
    DM_EXPECT(dev.can_map_host_memory, PlatformError,
              "backend 'zero_copy' needs mapped host memory, but " << dev.name << " (device " << dev.index
                                                                   << ") reports canMapHostMemory = 0; use 'copy'");
  }
  bool device_executes() const override { return true; }
  bool shares_memory() const override { return true; }
  CUstream_st* stream() const override { return stream_.get(); }
  void synchronize() override { stream_.synchronize(); }
  void make_current() override { use_device(dev_.index); }
  std::string health() override { return device_health(dev_.index); }
  std::string describe() const override {
    return "zero_copy: mapped pinned host memory on " + dev_.name + " (device " + std::to_string(dev_.index) + ")";
  }

 private:
  Block do_allocate(size_t bytes) override {
    use_device(dev_.index);
    Block b;
    DM_CUDA(cudaHostAlloc(&b.host, bytes, cudaHostAllocMapped));
    const cudaError_t e = cudaHostGetDevicePointer(&b.device, b.host, 0);
    if (e != cudaSuccess) {
      DM_CUDA_NOTHROW(cudaFreeHost(b.host));
      DM_CUDA(e);
    }
    return b;
  }
  void do_deallocate(Block b) noexcept override { DM_CUDA_NOTHROW(cudaFreeHost(b.host)); }

  DeviceInfo dev_;
  CudaStream stream_;
};

}  // namespace

std::unique_ptr<MemoryBackend> make_zero_copy_backend(const DeviceInfo& dev) {
  return std::make_unique<ZeroCopyBackend>(dev);
}

}  // namespace depthmask::detail
