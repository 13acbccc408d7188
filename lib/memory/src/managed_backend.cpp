// managed: cudaMallocManaged; the driver migrates pages. Prefetched where the device supports
// concurrent managed access. Never asks for more than the device has free: over-subscribing managed
// memory can stall the whole GPU, so a request that does not fit is refused up front.
#include <cuda_runtime_api.h>

#include "backends.h"
#include "depthmask/errors.h"
#include "gpu_backend.h"

namespace depthmask::detail {

namespace {

class ManagedBackend final : public GpuBackend {
 public:
  explicit ManagedBackend(const DeviceInfo& dev) : GpuBackend(BackendKind::Managed, dev) {
    DM_EXPECT(dev.managed_memory, PlatformError,
              "backend 'managed' needs unified memory, but " << dev.name << " (device " << dev.index
                                                             << ") reports managedMemory = 0; use 'copy'");
  }
  bool shares_memory() const override { return true; }
  bool host_access_during_kernels() const override { return dev_.concurrent_managed_access; }
  std::string describe() const override {
    return "managed: unified memory on " + on_device() + ", " +
           (dev_.concurrent_managed_access ? "prefetching" : "no concurrent access: no prefetch");
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
              "backend 'managed': refusing to allocate "
                  << bytes << " bytes of managed memory: " << allocated_ << " of a budget of " << budget_
                  << " bytes (half of the memory free on " << dev_.name << " at start) are in use");
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

  void prefetch(const Block& b, size_t bytes, bool to_device, CUstream_st* s) {
    if (!dev_.concurrent_managed_access) return;  // pre-Pascal / Tegra before Thor: no prefetch
#if CUDART_VERSION >= 13000
    cudaMemLocation loc{};
    loc.type = to_device ? cudaMemLocationTypeDevice : cudaMemLocationTypeHost;
    loc.id = to_device ? dev_.index : 0;
    DM_CUDA(cudaMemPrefetchAsync(b.host, bytes, loc, 0, s));
#else
    DM_CUDA(cudaMemPrefetchAsync(b.host, bytes, to_device ? dev_.index : cudaCpuDeviceId, s));
#endif
  }
  void do_prefetch_device(const Block& b, size_t bytes, CUstream_st* s) override { prefetch(b, bytes, true, s); }
  void do_prefetch_host(const Block& b, size_t bytes, CUstream_st* s) override { prefetch(b, bytes, false, s); }

  size_t budget_ = 0;
  size_t allocated_ = 0;
};

}  // namespace

std::unique_ptr<MemoryBackend> make_managed_backend(const DeviceInfo& dev) {
  return std::make_unique<ManagedBackend>(dev);
}

}  // namespace depthmask::detail
