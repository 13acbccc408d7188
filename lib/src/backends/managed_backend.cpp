// managed: cudaMallocManaged; the driver migrates pages. Prefetched where the device supports
// concurrent managed access. Never asks for more than the device has free: over-subscribing managed
// memory can stall the whole GPU, so a request that does not fit is refused up front.
#include <cuda_runtime_api.h>

#include "depthmask/errors.h"
#include "detail/backends.h"
#include "detail/cuda_stream.h"

namespace depthmask::detail {

namespace {

class ManagedBackend final : public MemoryBackend {
 public:
  explicit ManagedBackend(const DeviceInfo& dev) : MemoryBackend(BackendKind::Managed), dev_(dev) {
    DM_EXPECT(dev.managed_memory, PlatformError,
              "backend 'managed' needs unified memory, but " << dev.name << " (device " << dev.index
                                                             << ") reports managedMemory = 0; use 'copy'");
    use_device(dev.index);
    stream_ = CudaStream();
  }
  bool device_executes() const override { return true; }
  bool shares_memory() const override { return true; }
  CUstream_st* stream() const override { return stream_.get(); }
  void synchronize() override { stream_.synchronize(); }
  std::string describe() const override {
    return std::string("managed: unified memory on ") + dev_.name + " (device " + std::to_string(dev_.index) + ", " +
           (dev_.concurrent_managed_access ? "prefetching" : "no concurrent access: no prefetch") + ")";
  }

 private:
  Block do_allocate(size_t bytes) override {
    size_t free_b = 0, total_b = 0;
    DM_CUDA(cudaMemGetInfo(&free_b, &total_b));
    DM_EXPECT(bytes <= free_b / 2, PlatformError,
              "backend 'managed': refusing to allocate " << bytes << " bytes of managed memory with only " << free_b
                                                         << " bytes free on " << dev_.name
                                                         << " (at most half of the free memory is used)");
    Block b;
    DM_CUDA(cudaMallocManaged(&b.host, bytes, cudaMemAttachGlobal));
    b.device = b.host;
    return b;
  }
  void do_deallocate(Block b) noexcept override { DM_CUDA_NOTHROW(cudaFree(b.host)); }

  void prefetch(const Block& b, bool to_device) {
    if (!dev_.concurrent_managed_access) return;  // pre-Pascal / Tegra before Thor: no prefetch
#if CUDART_VERSION >= 13000
    cudaMemLocation loc{};
    loc.type = to_device ? cudaMemLocationTypeDevice : cudaMemLocationTypeHost;
    loc.id = to_device ? dev_.index : 0;
    DM_CUDA(cudaMemPrefetchAsync(b.host, b.bytes, loc, 0, stream_.get()));
#else
    DM_CUDA(cudaMemPrefetchAsync(b.host, b.bytes, to_device ? dev_.index : cudaCpuDeviceId, stream_.get()));
#endif
  }
  void do_prefetch_device(const Block& b) override { prefetch(b, true); }
  void do_prefetch_host(const Block& b) override { prefetch(b, false); }

  DeviceInfo dev_;
  CudaStream stream_;
};

}  // namespace

std::unique_ptr<MemoryBackend> make_managed_backend(const DeviceInfo& dev) {
  return std::make_unique<ManagedBackend>(dev);
}

}  // namespace depthmask::detail
