// cpu: plain host memory, masked by the CPU loop. No GPU, CI, fallback.
#include <cstdlib>
#include <string>

#include "backends.h"
#include "depthmask/errors.h"

namespace depthmask::detail {

namespace {

class CpuBackend final : public MemoryBackend {
 public:
  CpuBackend() : MemoryBackend(BackendKind::Cpu) {}
  bool device_executes() const override { return false; }
  bool shares_memory() const override { return true; }
  std::string describe() const override { return "cpu: host memory, the CPU loop (oneTBB)"; }

 private:
  // 64-byte alignment: cache lines, and what vector loads like.
  static constexpr size_t kAlign = 64;
  Block do_allocate(size_t bytes) override {
    void* p = std::aligned_alloc(kAlign, (bytes + kAlign - 1) / kAlign * kAlign);
    if (p == nullptr)
      throw ResourceError("backend 'cpu': out of memory: cannot allocate " + std::to_string(bytes) +
                          " bytes of host memory for a frame buffer");
    return Block{p, nullptr, bytes};
  }
  void do_deallocate(Block b) noexcept override { std::free(b.host); }
};

}  // namespace

std::unique_ptr<MemoryBackend> make_cpu_backend() { return std::make_unique<CpuBackend>(); }

}  // namespace depthmask::detail
