// Page-locked host memory for the CUDA backends, allocated quickly. cudaHostAlloc faults in, zeroes
// and pins every page on the calling thread inside the driver, and calls from several threads wait for
// each other; pinning pages already present is cheap. So blocks of kRegisterFromBytes and more are
// taken from the C heap, touched by the allocating thread and page-locked with cudaHostRegister; blocks
// of kParallelTouchFromBytes and more are 2 MB aligned and touched by several threads. Tiny blocks, and
// devices that cannot register host memory, keep cudaHostAlloc. Measurements:
// docs/PERFORMANCE.md#code-notes. CUDA builds only.
#pragma once

#include <cstddef>

namespace depthmask::detail {

struct PinnedHost {
  void* ptr = nullptr;
  bool registered = false;  // heap + cudaHostRegister (else cudaHostAlloc)
};

// Blocks of at least this many bytes are registered (when the device supports it) ...
inline constexpr size_t kRegisterFromBytes = size_t{64} << 10;
// ... and from this size on first touched by several threads, in 2 MB pages.
inline constexpr size_t kParallelTouchFromBytes = size_t{4} << 20;

// Whether `device` can page-lock existing host memory (cudaDevAttrHostRegisterSupported).
bool host_register_supported(int device);

// `bytes` (> 0) of page-locked memory, also mapped into the device's address space when `mapped`.
// `use_register`: take the heap + cudaHostRegister path for large blocks. Throws ResourceError
// when the memory cannot be had (the heap or the driver out of memory), CudaError otherwise, with
// the size asked for.
PinnedHost pinned_host_alloc(size_t bytes, bool mapped, bool use_register);
void pinned_host_free(const PinnedHost& p) noexcept;

}  // namespace depthmask::detail
