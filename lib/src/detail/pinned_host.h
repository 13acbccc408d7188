// Page-locked host memory for the CUDA backends, allocated quickly. cudaHostAlloc faults in, zeroes
// and pins every page on the calling thread: 2.7 GB/s on the H200's host, so a run's pool of 4K frame
// slots (about 1 GB) took 0.55-0.7 s to start. Large blocks are instead taken from the C heap with
// 2 MB alignment (transparent huge pages where the kernel offers them), first touched by several
// threads at once, and then page-locked with cudaHostRegister, which only pins pages already present:
// about 0.1 s for the same 1 GB (docs/PERFORMANCE.md). Small blocks, and devices that cannot register
// host memory, keep cudaHostAlloc. CUDA builds only.
#pragma once

#include <cstddef>

namespace depthmask::detail {

struct PinnedHost {
  void* ptr = nullptr;
  bool registered = false;  // heap + cudaHostRegister (else cudaHostAlloc)
};

// Blocks of at least this many bytes are registered (when the device supports it).
inline constexpr size_t kRegisterFromBytes = size_t{4} << 20;

// Whether `device` can page-lock existing host memory (cudaDevAttrHostRegisterSupported).
bool host_register_supported(int device);

// `bytes` (> 0) of page-locked memory, also mapped into the device's address space when `mapped`.
// `use_register`: take the heap + cudaHostRegister path for large blocks. Throws CudaError (or
// std::bad_alloc) with the size asked for.
PinnedHost pinned_host_alloc(size_t bytes, bool mapped, bool use_register);
void pinned_host_free(const PinnedHost& p) noexcept;

}  // namespace depthmask::detail
