#include "pinned_host.h"

#include <cuda_runtime_api.h>
#include <sys/mman.h>
#include <tbb/blocked_range.h>
#include <tbb/parallel_for.h>
#include <tbb/task_arena.h>

#include <cstdlib>
#include <string>

#include "depthmask/detail/cuda_check.h"

namespace depthmask::detail {

namespace {
constexpr size_t kHugePage = size_t{2} << 20;
constexpr size_t kPage = 4096;
}  // namespace

bool host_register_supported(int device) {
  int v = 0;
  if (cudaDeviceGetAttribute(&v, cudaDevAttrHostRegisterSupported, device) != cudaSuccess) {
    (void)cudaGetLastError();
    return false;
  }
  return v != 0;
}

PinnedHost pinned_host_alloc(size_t bytes, bool mapped, bool use_register) {
  PinnedHost p;
  if (!use_register || bytes < kRegisterFromBytes) {
    DM_CUDA(cudaHostAlloc(&p.ptr, bytes, mapped ? cudaHostAllocMapped : cudaHostAllocDefault));
    return p;
  }
  // Whole pages, so that no two registered blocks share one (registering a page twice fails).
  const bool large = bytes >= kParallelTouchFromBytes;
  const size_t align = large ? kHugePage : kPage;
  const size_t rounded = (bytes + align - 1) / align * align;
  void* mem = std::aligned_alloc(align, rounded);
  if (mem == nullptr)
    throw ResourceError("out of memory: cannot allocate " + std::to_string(rounded) +
                        " bytes of host memory to page-lock for a " + std::to_string(bytes) + "-byte buffer");
  // First touch (the kernel's zeroing of each page); one byte per page is enough.
  const auto touch = [mem](size_t begin, size_t end) {
    for (size_t i = begin; i < end; i += kPage) static_cast<volatile char*>(mem)[i] = 0;
  };
  if (large) {
#ifdef MADV_HUGEPAGE
    (void)madvise(mem, rounded, MADV_HUGEPAGE);  // a hint: fewer pages to fault in and to pin
#endif
    // On several threads. Isolated: while this thread waits for the touch it takes no unrelated task
    // (another frame's decode or GPU wait) that would hold up the allocation.
    tbb::this_task_arena::isolate([&] {
      tbb::parallel_for(tbb::blocked_range<size_t>(0, rounded, kHugePage),
                        [&](const tbb::blocked_range<size_t>& r) { touch(r.begin(), r.end()); });
    });
  } else {
    touch(0, rounded);
  }
  const cudaError_t e = cudaHostRegister(mem, rounded, mapped ? cudaHostRegisterMapped : cudaHostRegisterDefault);
  if (e != cudaSuccess) {
    std::free(mem);
    DM_CUDA(e);
  }
  p.ptr = mem;
  p.registered = true;
  return p;
}

void pinned_host_free(const PinnedHost& p) noexcept {
  if (p.ptr == nullptr) return;
  if (p.registered) {
    DM_CUDA_NOTHROW(cudaHostUnregister(p.ptr));
    std::free(p.ptr);
  } else {
    DM_CUDA_NOTHROW(cudaFreeHost(p.ptr));
  }
}

}  // namespace depthmask::detail
