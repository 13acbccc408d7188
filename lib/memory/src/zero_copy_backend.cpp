// zero_copy: mapped pinned host memory (detail/pinned_host.h, mapped); the kernel reads and
// writes it through the pointer cudaHostGetDevicePointer gives. On integrated GPUs (Jetson) this is
// the same DRAM, so nothing is copied; on discrete GPUs the kernel's loads cross the bus once, which
// for a single pass can beat staged copies (DESIGN.md's H200 figures).
#include "backends.h"
#include "depthmask/errors.h"
#include "gpu_backend.h"
#include "pinned_host.h"

namespace depthmask::detail {

namespace {

class ZeroCopyBackend final : public GpuBackend {
 public:
  explicit ZeroCopyBackend(const DeviceInfo& dev)
      : GpuBackend(BackendKind::ZeroCopy, dev), register_host_(host_register_supported(dev.index)) {
    DM_EXPECT(dev.can_map_host_memory, PlatformError,
              "backend 'zero_copy' needs mapped host memory, but " << dev.name << " (device " << dev.index
                                                                   << ") reports canMapHostMemory = 0; use 'copy'");
  }
  bool shares_memory() const override { return true; }
  bool kernels_read_host_memory() const override { return true; }
  std::string describe() const override { return "zero_copy: mapped pinned host memory on " + on_device(); }

 private:
  Block do_allocate(size_t bytes) override {
    use_device(dev_.index);
    Block b;
    const PinnedHost host = pinned_host_alloc(bytes, true, register_host_);
    b.host = host.ptr;
    b.host_registered = host.registered;
    const cudaError_t e = cudaHostGetDevicePointer(&b.device, b.host, 0);
    if (e != cudaSuccess) {
      pinned_host_free(host);
      DM_CUDA(e);
    }
    return b;
  }
  void do_deallocate(Block b) noexcept override { pinned_host_free(PinnedHost{b.host, b.host_registered}); }

  bool register_host_;
};

}  // namespace

std::unique_ptr<MemoryBackend> make_zero_copy_backend(const DeviceInfo& dev) {
  return std::make_unique<ZeroCopyBackend>(dev);
}

}  // namespace depthmask::detail
