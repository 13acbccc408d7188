// The launch shape every depthmask kernel shares: a block of 32 x BlockRows threads covers a 32x32
// tile, each thread walking 32 / BlockRows rows of its column (BlockRows 8 by default: each thread
// walks 4 rows). Warps read whole 32-element row segments (coalesced). Device code only (.cu files).
//
// Two walks over a tile:
//   for_tile_pixels: one pixel per thread and row (a tile is 32x32 pixels);
//   for_tile_chunks: one chunk of V consecutive pixels per thread and row (a tile is 32 chunks, i.e.
//                    32*V pixels, wide and 32 rows high), so a warp covers 32*V consecutive pixels of
//                    one row and each of its vector accesses is one contiguous warp-wide segment.
#pragma once

#include <cuda_runtime.h>

#include <stdexcept>

#include "depthmask/kernels/errors.h"

namespace depthmask::tiling {

constexpr int kTile = 32;
constexpr int kBlockRows = 8;

template <int BlockRows = kBlockRows>
inline dim3 block() {
  static_assert(BlockRows > 0 && kTile % BlockRows == 0, "block rows must divide the tile");
  return dim3(kTile, BlockRows);
}
inline dim3 grid(int rows, int cols) { return dim3((cols + kTile - 1) / kTile, (rows + kTile - 1) / kTile); }

// gridDim.y is limited to 65535 tiles.
inline void check_rows(const char* what, int rows) {
  DM_EXPECT(rows <= 65535 * kTile, std::invalid_argument,
            what << ": " << rows << " rows exceed the kernels' grid limit of " << 65535 * kTile);
}

// Calls f(x, y) for this thread's pixels of its block's tile inside a rows x cols image.
template <int BlockRows = kBlockRows, class F>
__device__ __forceinline__ void for_tile_pixels(int rows, int cols, F&& f) {
  const int x = static_cast<int>(blockIdx.x) * kTile + static_cast<int>(threadIdx.x);
  if (x >= cols) return;
  const int y0 = static_cast<int>(blockIdx.y) * kTile + static_cast<int>(threadIdx.y);
#pragma unroll
  for (int k = 0; k < kTile; k += BlockRows) {
    const int y = y0 + k;
    if (y < rows) f(x, y);
  }
}

// The vector walk's grid. A row's chunks start `shift` (0..V-1) pixels before column 0 (see
// for_tile_chunks), so a row of `cols` pixels spans at most ceil((cols + V - 1) / V) chunks.
template <int V>
inline dim3 chunk_grid(int rows, int cols) {
  const int chunks = (cols + 2 * V - 2) / V;
  return dim3((chunks + kTile - 1) / kTile, (rows + kTile - 1) / kTile);
}

// One chunk of row y (see for_tile_chunks): vectorised when it lies wholly inside an aligned row,
// pixel by pixel otherwise.
template <int V, class Head, class Load, class Store, class One>
__device__ __forceinline__ void chunk_or_pixels(int y, int c, int cols, Head& head, Load& load, Store& store,
                                                One& one) {
  const int h = head(y);
  const int x0 = c * V - (h > 0 ? V - h : 0);
  if (h >= 0 && x0 >= 0 && x0 + V <= cols) {
    store(x0, y, load(x0, y));
  } else {
#pragma unroll
    for (int i = 0; i < V; ++i) {
      const int x = x0 + i;
      if (x >= 0 && x < cols) one(x, y);
    }
  }
}

// The vector walk over this thread's rows of its block's tile (a tile is 32 chunks of V pixels wide).
// Rows may start anywhere (ROIs, odd widths, odd steps), so the alignment is decided per row:
// head(y) returns how many pixels (0..V-1) precede the row's first pixel at which every plane is
// V-pixel aligned, or -1 when the planes cannot be aligned together. Chunks are laid out from that
// pixel, so chunk c covers pixels [c*V - shift, c*V - shift + V) with shift = (V - head) % V.
// A chunk wholly inside an aligned row is read by load(x0, y) (x0 is then V-pixel aligned in every
// plane) and written by store(x0, y, loaded); the head, the tail and every chunk of a row that cannot
// be aligned go pixel by pixel to one(x, y). Rows are done one after the other: issuing all of a
// thread's loads first (more bytes in flight per thread) measured slower on the H200, for device
// memory (fewer resident blocks) and far slower for mapped host memory (docs/PERFORMANCE.md).
template <int BlockRows, int V, class Head, class Load, class Store, class One>
__device__ __forceinline__ void for_tile_chunks(int rows, int cols, Head&& head, Load&& load, Store&& store,
                                                One&& one) {
  const int c = static_cast<int>(blockIdx.x) * kTile + static_cast<int>(threadIdx.x);
  if (c * V - (V - 1) >= cols) return;  // past the last pixel whatever the shift
  const int y0 = static_cast<int>(blockIdx.y) * kTile + static_cast<int>(threadIdx.y);
#pragma unroll
  for (int k = 0; k < kTile; k += BlockRows) {
    const int y = y0 + k;
    if (y >= rows) break;
    chunk_or_pixels<V>(y, c, cols, head, load, store, one);
  }
}

// The row walk: a block of kRowThreads threads covers kRowThreads chunks of V pixels of one row, and
// consecutive blocks cover consecutive chunks, then rows — the order of the bytes in memory, as a
// copy walks them. Fewer rows (so fewer pages) are in flight at once than with 32-row tiles, which
// matters when the planes are host memory mapped over the bus. Same chunk layout and callbacks as
// for_tile_chunks.
constexpr int kRowThreads = 256;
constexpr int kMaxGridRows = 65535;  // gridDim.y; taller images loop

inline dim3 row_block() { return dim3(kRowThreads, 1); }
// K chunks per thread: a block covers K * kRowThreads chunks of a row.
template <int V, int K = 1>
inline dim3 row_grid(int rows, int cols) {
  const int chunks = (cols + 2 * V - 2) / V;
  return dim3((chunks + kRowThreads * K - 1) / (kRowThreads * K), rows < kMaxGridRows ? rows : kMaxGridRows);
}

// Each thread takes K chunks of the row, kRowThreads chunks apart (so every warp access stays one
// contiguous segment). With K > 1 the loads of all K chunks are issued before the first store when
// all of them lie inside the aligned row (more bytes in flight per thread, fewer blocks to schedule);
// otherwise each chunk goes through chunk_or_pixels on its own.
template <int V, int K = 1, class Head, class Load, class Store, class One>
__device__ __forceinline__ void for_row_chunks(int rows, int cols, Head&& head, Load&& load, Store&& store, One&& one) {
  const int c0 = static_cast<int>(blockIdx.x) * kRowThreads * K + static_cast<int>(threadIdx.x);
  if (c0 * V - (V - 1) >= cols) return;
  for (int y = static_cast<int>(blockIdx.y); y < rows; y += static_cast<int>(gridDim.y)) {
    if constexpr (K > 1) {
      const int h = head(y);
      const int first = c0 * V - (h > 0 ? V - h : 0);          // first pixel of chunk c0
      const int last = first + (K - 1) * kRowThreads * V + V;  // one past chunk c0 + (K-1) * kRowThreads
      if (h >= 0 && first >= 0 && last <= cols) {
        decltype(load(first, y)) loaded[K];
#pragma unroll
        for (int k = 0; k < K; ++k) loaded[k] = load(first + k * kRowThreads * V, y);
#pragma unroll
        for (int k = 0; k < K; ++k) store(first + k * kRowThreads * V, y, loaded[k]);
        continue;
      }
    }
#pragma unroll
    for (int k = 0; k < K; ++k) {
      const int c = c0 + k * kRowThreads;
      if (c * V - (V - 1) < cols) chunk_or_pixels<V>(y, c, cols, head, load, store, one);
    }
  }
}

}  // namespace depthmask::tiling
