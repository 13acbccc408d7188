// copy: device buffers (cudaMalloc) + pinned host staging (detail/pinned_host.h); async H2D/D2H on
// the backend's stream. Best on discrete GPUs, where the kernel then reads HBM instead of the bus.
// Large frames go in row bands whose uploads, kernels and downloads overlap (backends/copy_bands.h).

#include "backends.h"
#include "copy_bands.h"
#include "depthmask/errors.h"
#include "gpu_backend.h"
#include "pinned_host.h"

namespace depthmask::detail {

namespace {

class CopyBackend final : public GpuBackend {
 public:
  explicit CopyBackend(const DeviceInfo& dev)
      : GpuBackend(BackendKind::Copy, dev), register_host_(host_register_supported(dev.index)) {}
  bool shares_memory() const override { return false; }
  std::unique_ptr<MaskSchedule> make_mask_schedule() override { return std::make_unique<CopyBands>(*this); }
  std::string describe() const override { return "copy: device buffers + pinned staging on " + on_device(); }

 private:
  Block do_allocate(size_t bytes) override {
    use_device(dev_.index);
    Block b;
    const PinnedHost host = pinned_host_alloc(bytes, false, register_host_);
    b.host = host.ptr;
    b.host_registered = host.registered;
    const cudaError_t e = cudaMalloc(&b.device, bytes);
    if (e != cudaSuccess) {
      pinned_host_free(host);
      if (e == cudaErrorMemoryAllocation) {
        // Not sticky: this frame fails, the device (and the batch) go on, as with backend.memory_limit_mb.
        (void)cudaGetLastError();
        size_t free_b = 0, total_b = 0;
        const bool known = cudaMemGetInfo(&free_b, &total_b) == cudaSuccess;
        (void)cudaGetLastError();
        throw ResourceError(
            "backend 'copy': out of memory: cannot allocate " + std::to_string(bytes) +
            " bytes for a frame buffer on " + on_device() + " (cudaMalloc: cudaErrorMemoryAllocation" +
            (known ? "; " + std::to_string(free_b) + " of " + std::to_string(total_b) + " bytes free)" : ")"));
      }
      DM_CUDA(e);
    }
    return b;
  }
  void do_deallocate(Block b) noexcept override {
    DM_CUDA_NOTHROW(cudaFree(b.device));
    pinned_host_free(PinnedHost{b.host, b.host_registered});
  }
  void do_to_device(const Block& b, size_t offset, size_t bytes, CUstream_st* s) override {
    DM_CUDA(cudaMemcpyAsync(static_cast<char*>(b.device) + offset, static_cast<const char*>(b.host) + offset, bytes,
                            cudaMemcpyHostToDevice, s));
  }
  void do_to_host(const Block& b, size_t offset, size_t bytes, CUstream_st* s) override {
    DM_CUDA(cudaMemcpyAsync(static_cast<char*>(b.host) + offset, static_cast<const char*>(b.device) + offset, bytes,
                            cudaMemcpyDeviceToHost, s));
  }

  bool register_host_;
};

}  // namespace

std::unique_ptr<MemoryBackend> make_copy_backend(const DeviceInfo& dev) { return std::make_unique<CopyBackend>(dev); }

}  // namespace depthmask::detail
