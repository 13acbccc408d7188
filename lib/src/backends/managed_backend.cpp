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
  explicit ManagedBackend(const DeviceInfo& dev) : MemoryBackend(BackendKind::Managed), dev_(dev), stream_(dev.index) {
    DM_EXPECT(dev.managed_memory, PlatformError,
              "backend 'managed' needs unified memory, but " << dev.name << " (device " << dev.index
                                                             << ") reports managedMemory = 0; use 'copy'");
  }
  bool device_executes() const override { return true; }
  bool shares_memory() const override { return true; }
  CUstream_st* stream() const override { return stream_.get(); }
  void synchronize() override { stream_.synchronize(); }
  void make_current() override { use_device(dev_.index); }
  std::string health() override { return device_health(dev_.index); }
  std::string describe() const override {
    return std::string("managed: unified memory on ") + dev_.name + " (device " + std::to_string(dev_.index) + ", " +
           (dev_.concurrent_managed_access ? "prefetching" : "no concurrent access: no prefetch") + ")";
  }

 private:
  Block do_allocate(size_t bytes) override {
    use_device(dev_.index);
    if (budget_ == 0) {
      // Fixed at the first allocation: managed pages not yet resident do not show in cudaMemGetInfo,
      // so the budget is a share of what was free before this backend took anything.
      size_t free_b = 0, total_b = 0;
      DM_CUDA(cudaMemGetInfo(&free_b, &total_b));
      budget_ = free_b / 2;
    }
    DM_EXPECT(allocated_ + bytes <= budget_, ResourceError,
              "backend 'managed': refusing to allocate " << bytes << " bytes of managed memory: " << allocated_
                                                         << " of a budget of " << budget_ << " bytes (half of the memory free on "
                                                         << dev_.name << " at start) are in use");
    Block b;
    DM_CUDA(cudaMallocManaged(&b.host, bytes, cudaMemAttachGlobal));
    b.device = b.host;
    allocated_ += bytes;
    return b;
  }
  void do_deallocate(Block b) noexcept override {
    DM_CUDA_NOTHROW(cudaFree(b.host));
    allocated_ -= b.bytes;
  }

  void prefetch(const Block& b, size_t bytes, bool to_device) {
    if (!dev_.concurrent_managed_access) return;  // pre-Pascal / Tegra before Thor: no prefetch
#if CUDART_VERSION >= 13000
    cudaMemLocation loc{};
    loc.type = to_device ? cudaMemLocationTypeDevice : cudaMemLocationTypeHost;
    loc.id = to_device ? dev_.index : 0;
    DM_CUDA(cudaMemPrefetchAsync(b.host, bytes, loc, 0, stream_.get()));
#else
    DM_CUDA(cudaMemPrefetchAsync(b.host, bytes, to_device ? dev_.index : cudaCpuDeviceId, stream_.get()));
#endif
  }
  void do_prefetch_device(const Block& b, size_t bytes) override { prefetch(b, bytes, true); }
  void do_prefetch_host(const Block& b, size_t bytes) override { prefetch(b, bytes, false); }

  DeviceInfo dev_;
  CudaStream stream_;
  size_t budget_ = 0;
  size_t allocated_ = 0;
};

}  // namespace

std::unique_ptr<MemoryBackend> make_managed_backend(const DeviceInfo& dev) {
  return std::make_unique<ManagedBackend>(dev);
}

}  // namespace depthmask::detail
