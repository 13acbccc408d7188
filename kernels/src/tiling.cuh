// The launch shape every depthmask kernel shares: a block of 32x8 threads covers a 32x32 tile, each
// thread walking 4 rows of its column. Warps read whole 32-pixel row segments (coalesced), and a
// quarter as many threads as pixels amortise the index arithmetic. Device code only (.cu files).
#pragma once

#include <cuda_runtime.h>

#include <stdexcept>

#include "depthmask/errors.h"

namespace depthmask::tiling {

constexpr int kTile = 32;
constexpr int kBlockRows = 8;

inline dim3 block() { return dim3(kTile, kBlockRows); }
inline dim3 grid(int rows, int cols) { return dim3((cols + kTile - 1) / kTile, (rows + kTile - 1) / kTile); }

// gridDim.y is limited to 65535 tiles.
inline void check_rows(const char* what, int rows) {
  DM_EXPECT(rows <= 65535 * kTile, std::invalid_argument,
            what << ": " << rows << " rows exceed the kernels' grid limit of " << 65535 * kTile);
}

// Calls f(x, y) for this thread's pixels of its block's tile inside a rows x cols image.
template <class F>
__device__ __forceinline__ void for_tile_pixels(int rows, int cols, F&& f) {
  const int x = static_cast<int>(blockIdx.x) * kTile + static_cast<int>(threadIdx.x);
  if (x >= cols) return;
  const int y0 = static_cast<int>(blockIdx.y) * kTile + static_cast<int>(threadIdx.y);
#pragma unroll
  for (int k = 0; k < kTile; k += kBlockRows) {
    const int y = y0 + k;
    if (y < rows) f(x, y);
  }
}

}  // namespace depthmask::tiling
