// CPU-only builds: the GPU backends exist as names only and say why they cannot be made.
#include "backends.h"
#include "depthmask/errors.h"

namespace depthmask::detail {

namespace {
[[noreturn]] void no_cuda(const char* kind) {
  throw PlatformError(
      std::string("backend '") + kind +
      "' needs CUDA, but this depthmask was built without it (no nvcc at build time); use backend.kind: cpu");
}
}  // namespace

std::unique_ptr<MemoryBackend> make_copy_backend(const DeviceInfo&) { no_cuda("copy"); }
std::unique_ptr<MemoryBackend> make_zero_copy_backend(const DeviceInfo&) { no_cuda("zero_copy"); }
std::unique_ptr<MemoryBackend> make_managed_backend(const DeviceInfo&) { no_cuda("managed"); }

}  // namespace depthmask::detail
