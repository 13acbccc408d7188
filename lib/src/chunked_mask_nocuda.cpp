// CPU-only builds: no copy backend, so nothing is ever split into bands.
#include "depthmask/errors.h"
#include "detail/chunked_mask.h"

namespace depthmask::detail {

struct ChunkedMask::Impl {};

int ChunkedMask::bands_for(size_t) { return 1; }
ChunkedMask::ChunkedMask(MemoryBackend&) {
  throw PlatformError("band-split copies need CUDA, but this depthmask was built without it");
}
ChunkedMask::~ChunkedMask() = default;
void ChunkedMask::enqueue(const MaskJob&, const MaskParams&, Buffer&, Buffer&, Buffer&, int, CUstream_st*) {}

}  // namespace depthmask::detail
