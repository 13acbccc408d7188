// The masking kernel: one fused pass over 32x32 tiles (raw depth + mask in, float metres out), in the
// variants of mask_variants.h (32x8 or 32x32 threads per tile, scalar or four pixels per access), and
// its batched launch (several same-sized frames, blockIdx.z picks one).
#include <cuda_runtime.h>

#include <cstdint>
#include <type_traits>
#include <vector>

#include "depthmask/kernels/cuda_check.h"
#include "depthmask/kernels/mask_kernel.h"
#include "depthmask/kernels/mask_variants.h"
#include "tiling.cuh"

namespace depthmask {

namespace {

// The variant launch_mask() uses, set from measurements on the target GPU (`depthmask_microbench
// --benchmark_filter=GpuMask`): row256x2 is the fastest batched at >= 1080p (docs/PERFORMANCE.md#the-kernel).
constexpr MaskKernelVariant kDefaultVariant{MaskBlockShape::Rows256x2, true};
// Every variant this build carries; the default is listed first by mask_kernel_variants().
constexpr MaskKernelVariant kAllVariants[] = {
    {MaskBlockShape::Threads32x8, true},   {MaskBlockShape::Threads32x8, false}, {MaskBlockShape::Threads32x32, true},
    {MaskBlockShape::Threads32x32, false}, {MaskBlockShape::Rows256, true},      {MaskBlockShape::Rows256x2, true}};
// The variant for frames in mapped host memory (zero_copy), where every byte read crosses the bus:
// the depth is read only where the mask keeps a pixel (kept_only); 32x8 vec kept-only measured fastest
// (`depthmask bench`, docs/PERFORMANCE.md#code-notes).
constexpr MaskKernelVariant kMappedVariant{MaskBlockShape::Threads32x8, true, true};
constexpr MaskKernelVariant kMappedScalar{MaskBlockShape::Threads32x8, false, true};

using tiling::kBlockRows;
using tiling::kTile;

__host__ __device__ constexpr int block_rows(MaskBlockShape s) {
  return s == MaskBlockShape::Threads32x32 ? kTile : kBlockRows;
}
__host__ __device__ constexpr bool row_walk(MaskBlockShape s) {
  return s == MaskBlockShape::Rows256 || s == MaskBlockShape::Rows256x2;
}
// Chunks per thread of a row walk.
__host__ __device__ constexpr int row_chunks(MaskBlockShape s) { return s == MaskBlockShape::Rows256x2 ? 2 : 1; }
__host__ __device__ constexpr int threads_per_block(MaskBlockShape s) {
  return row_walk(s) ? tiling::kRowThreads : kTile * block_rows(s);
}

// Pixels per chunk of the vectorised tile walks, for every pixel type: 4 floats out is one 16-byte
// store, so every warp-wide store of the largest stream is one contiguous 512-byte segment. Depth
// reads 16 bytes (float) or 8 bytes (u16) per thread, the mask 4 (u8) or 8 (u16), each contiguous
// across the warp.
constexpr int kVec = 4;
// (8 pixels of 16-bit depth per thread measured slower: docs/PERFORMANCE.md#the-kernel.)

// N consecutive elements from a pointer aligned to N elements, in 16-byte (or smaller) loads. The
// bytes are copied as they are (NaN payloads included). Every byte is read once and every output
// byte written once, so the accesses are streaming ones (__ldcs/__stcs: evict first), which leave
// the cache to the other planes' lines still in flight (+1-2 points of D2D: docs/PERFORMANCE.md#the-kernel).
template <int N, class T>
__device__ __forceinline__ void load_n(const T* p, T (&v)[N]) {
  constexpr int kBytes = N * static_cast<int>(sizeof(T));
  static_assert(kBytes == 4 || kBytes == 8 || kBytes == 16 || kBytes == 32, "chunk of 4, 8, 16 or 32 bytes");
  if constexpr (kBytes == 32) {
    const uint4 a = __ldcs(reinterpret_cast<const uint4*>(p)), b = __ldcs(reinterpret_cast<const uint4*>(p) + 1);
    memcpy(v, &a, 16);
    memcpy(reinterpret_cast<char*>(v) + 16, &b, 16);
  } else if constexpr (kBytes == 16) {
    const uint4 a = __ldcs(reinterpret_cast<const uint4*>(p));
    memcpy(v, &a, 16);
  } else if constexpr (kBytes == 8) {
    const uint2 a = __ldcs(reinterpret_cast<const uint2*>(p));
    memcpy(v, &a, 8);
  } else {
    const uint32_t a = __ldcs(reinterpret_cast<const unsigned int*>(p));
    memcpy(v, &a, 4);
  }
}

// Where a plane's row stands within its N-element alignment: the plane is aligned for load_n<N>
// (and float4 stores) at pixel x exactly when (phase + x) % N == 0. Pointers are element-aligned
// (validate).
template <int N, class T>
__device__ __forceinline__ int phase(const T* p) {
  return static_cast<int>((reinterpret_cast<uintptr_t>(p) / sizeof(T)) % N);
}

// The plain (non-erode) pass over this block's part of the image; every pixel is mask_pixel() of
// mask_rule.h, scalar or four at a time. Shape: 32x8 threads per 32x32 tile (each thread walks 4
// rows), 32x32 (one row each), or the row walk (256 threads along one row, one or two chunks each).
// Common: the launch found is_common_case(p), and the pass runs on common_params(p) — the same rule
// with the label and marker loops folded away (12 points of D2D for 16-bit depth:
// docs/PERFORMANCE.md#the-kernel).
template <int N, class DepthT, class MaskT>
struct Chunk {
  DepthT d[N];
  MaskT m[N];
};

// KeptOnly (mapped host memory): the mask is read first and the depth only where the pixel (or one
// pixel of the chunk) is kept; a dropped pixel is `invalid` whatever its depth, so a chunk with
// nothing kept computes on zeros. Same rule, same bits, fewer bytes over the bus.
template <MaskBlockShape Shape, bool Vectorized, bool KeptOnly, class DepthT, class MaskT>
__device__ __forceinline__ void mask_part_with(const ImageView<const DepthT>& depth, const ImageView<const MaskT>& mask,
                                               const ImageView<float>& out, const MaskParams& p) {
  const auto one = [&](int x, int y) {
    if constexpr (KeptOnly) {
      const bool keep = mask_keeps(mask.row(y)[x], p);
      out.row(y)[x] = depth_pixel(keep ? depth.row(y)[x] : DepthT{0}, keep, p);
    } else {
      out.row(y)[x] = mask_pixel(depth.row(y)[x], mask.row(y)[x], p);
    }
  };
  if constexpr (!Vectorized) {
    tiling::for_tile_pixels<block_rows(Shape)>(out.rows, out.cols, one);
  } else {
    constexpr int N = kVec;
    // The three planes can be vectorised together when their rows share a phase; the head is the
    // pixels before the first aligned one. Otherwise (planes offset differently) the row is scalar.
    const auto head = [&](int y) {
      const int ph = phase<N>(out.row(y));
      return (phase<N>(depth.row(y)) == ph && phase<N>(mask.row(y)) == ph) ? (N - ph) % N : -1;
    };
    const auto load = [&](int x0, int y) {
      Chunk<N, DepthT, MaskT> c;
      if constexpr (KeptOnly) {
        load_n<N>(mask.row(y) + x0, c.m);
        bool any = false;
#pragma unroll
        for (int i = 0; i < N; ++i) any = any || mask_keeps(c.m[i], p);
        if (any) {
          load_n<N>(depth.row(y) + x0, c.d);
        } else {
#pragma unroll
          for (int i = 0; i < N; ++i) c.d[i] = DepthT{0};
        }
      } else {
        load_n<N>(depth.row(y) + x0, c.d);
        load_n<N>(mask.row(y) + x0, c.m);
      }
      return c;
    };
    const auto store = [&](int x0, int y, const Chunk<N, DepthT, MaskT>& c) {
#pragma unroll
      for (int i = 0; i < N; i += 4) {
        float4 o;
        o.x = mask_pixel(c.d[i], c.m[i], p);
        o.y = mask_pixel(c.d[i + 1], c.m[i + 1], p);
        o.z = mask_pixel(c.d[i + 2], c.m[i + 2], p);
        o.w = mask_pixel(c.d[i + 3], c.m[i + 3], p);
        __stcs(reinterpret_cast<float4*>(out.row(y) + x0 + i), o);
      }
    };
    if constexpr (row_walk(Shape))
      tiling::for_row_chunks<N, row_chunks(Shape)>(out.rows, out.cols, head, load, store, one);
    else
      tiling::for_tile_chunks<block_rows(Shape), N>(out.rows, out.cols, head, load, store, one);
  }
}

template <MaskBlockShape Shape, bool Vectorized, bool KeptOnly, bool Common, class DepthT, class MaskT>
__device__ __forceinline__ void mask_part(const ImageView<const DepthT>& depth, const ImageView<const MaskT>& mask,
                                          const ImageView<float>& out, const MaskParams& p) {
  if constexpr (Common)
    mask_part_with<Shape, Vectorized, KeptOnly>(depth, mask, out, common_params(p));
  else
    mask_part_with<Shape, Vectorized, KeptOnly>(depth, mask, out, p);
}

template <MaskBlockShape Shape, bool Vectorized, bool KeptOnly, bool Common, class DepthT, class MaskT>
__global__ void __launch_bounds__(threads_per_block(Shape))
    is_mask(ImageView<const DepthT> depth, ImageView<const MaskT> mask, ImageView<float> out, MaskParams p) {
  mask_part<Shape, Vectorized, KeptOnly, Common>(depth, mask, out, p);
}

// Up to kMaxBatchedJobs same-sized frames, passed by value as the kernel's parameter (about 1.5 KB,
// well inside the 4 KB parameter limit): blockIdx.z picks the frame.
struct BatchFrame {
  Plane<const void> depth;
  Plane<const void> mask;
  Plane<float> out;
};
struct MaskBatch {
  BatchFrame frames[kMaxBatchedJobs];
  int rows;
  int cols;
};

template <MaskBlockShape Shape, bool Vectorized, bool KeptOnly, bool Common, class DepthT, class MaskT>
__global__ void __launch_bounds__(threads_per_block(Shape)) is_mask_batch(MaskBatch b, MaskParams p) {
  const BatchFrame& f = b.frames[blockIdx.z];
  const ImageView<const DepthT> depth = f.depth.view<const DepthT>(b.rows, b.cols);
  const ImageView<const MaskT> mask = f.mask.view<const MaskT>(b.rows, b.cols);
  const ImageView<float> out = f.out.view(b.rows, b.cols);
  mask_part<Shape, Vectorized, KeptOnly, Common>(depth, mask, out, p);
}

// Erode, fused: the block's 32x32 output tile plus an n-pixel halo of mask-test results in shared
// memory (1 outside the image), a horizontal pass into a second shared plane, then each pixel ANDs its
// column of horizontal runs — erode_run from mask_rule.h for both passes, as the CPU loop does. The
// planes are sized for kMaxErode (64x64 + 64x32 bytes = 6 KB); n only changes how much is filled.
constexpr int kHalo = kTile + 2 * kMaxErode;

template <class DepthT, class MaskT>
__global__ void is_mask_eroded(ImageView<const DepthT> depth, ImageView<const MaskT> mask, ImageView<float> out,
                               MaskParams p) {
  __shared__ uint8_t tests[kHalo][kHalo];  // [plane row][plane column]
  __shared__ uint8_t hrun[kHalo][kTile];   // horizontal runs: [plane row][tile column]
  const int n = p.erode;
  const int w = kTile + 2 * n;                               // plane rows and columns in use
  const int gx0 = static_cast<int>(blockIdx.x) * kTile - n;  // image position of plane (0, 0)
  const int gy0 = static_cast<int>(blockIdx.y) * kTile - n;
  const int tid = threadIdx.y * kTile + threadIdx.x;
  constexpr int kThreads = kTile * kBlockRows;

  // Every thread takes part in the loads and both barriers; only the final store is bounds-checked.
  for (int i = tid; i < w * w; i += kThreads) {
    const int r = i / w, c = i - r * w;
    const int gx = gx0 + c, gy = gy0 + r;
    const bool inside = gx >= 0 && gy >= 0 && gx < mask.cols && gy < mask.rows;
    tests[r][c] = inside ? (mask_keeps(mask.row(gy)[gx], p) ? 1 : 0) : 1;
  }
  __syncthreads();
  for (int i = tid; i < w * kTile; i += kThreads) {
    const int r = i / kTile, c = i - r * kTile;
    hrun[r][c] = erode_run(&tests[r][c], n, 1);  // plane columns c .. c+2n: image columns x-n .. x+n
  }
  __syncthreads();

  const int x = blockIdx.x * kTile + threadIdx.x;
  if (x >= out.cols) return;
#pragma unroll
  for (int k = 0; k < kTile; k += kBlockRows) {
    const int ty = threadIdx.y + k;
    const int y = blockIdx.y * kTile + ty;
    // Plane rows ty .. ty+2n are image rows y-n .. y+n.
    if (y < out.rows) out.row(y)[x] = depth_pixel(depth.row(y)[x], erode_run(&hrun[ty][threadIdx.x], n, kTile) != 0, p);
  }
}

// Calls f(DepthT{}, MaskT{}) with the job's pixel types.
template <class F>
void with_types(DepthType depth_type, MaskType mask_type, F&& f) {
  const bool d16 = depth_type == DepthType::U16;
  const bool m8 = mask_type == MaskType::U8;
  if (d16 && m8)
    f(uint16_t{}, uint8_t{});
  else if (d16)
    f(uint16_t{}, uint16_t{});
  else if (m8)
    f(float{}, uint8_t{});
  else
    f(float{}, uint16_t{});
}

// Calls f(shape tag, std::bool_constant<Vectorized>{}, std::bool_constant<KeptOnly>{}) for `v` (the
// row walk is vectorised only; kept-only reads exist for the 32x8 shapes, the mapped-memory ones).
template <MaskBlockShape S>
using ShapeTag = std::integral_constant<MaskBlockShape, S>;
template <class F>
void with_variant(const MaskKernelVariant& v, F&& f) {
  DM_EXPECT(!v.kept_only || v.shape == MaskBlockShape::Threads32x8, std::invalid_argument,
            "mask kernel: kept-only reads exist for the 32x8 shapes only, not " << to_string(v));
  using Yes = std::true_type;
  using No = std::false_type;
  switch (v.shape) {
    case MaskBlockShape::Threads32x8: {
      constexpr ShapeTag<MaskBlockShape::Threads32x8> s{};
      if (v.vectorized)
        v.kept_only ? f(s, Yes{}, Yes{}) : f(s, Yes{}, No{});
      else
        v.kept_only ? f(s, No{}, Yes{}) : f(s, No{}, No{});
      return;
    }
    case MaskBlockShape::Threads32x32:
      if (v.vectorized)
        f(ShapeTag<MaskBlockShape::Threads32x32>{}, Yes{}, No{});
      else
        f(ShapeTag<MaskBlockShape::Threads32x32>{}, No{}, No{});
      return;
    case MaskBlockShape::Rows256:
      f(ShapeTag<MaskBlockShape::Rows256>{}, Yes{}, No{});
      return;
    case MaskBlockShape::Rows256x2:
      f(ShapeTag<MaskBlockShape::Rows256x2>{}, Yes{}, No{});
      return;
  }
  throw std::invalid_argument("mask kernel: unknown block shape");
}

// Calls f(std::bool_constant<is_common_case(p)>{}).
template <class F>
void with_common(const MaskParams& p, F&& f) {
  if (is_common_case(p))
    f(std::true_type{});
  else
    f(std::false_type{});
}

template <MaskBlockShape Shape, bool Vectorized>
dim3 grid_for(int rows, int cols) {
  if constexpr (row_walk(Shape))
    return tiling::row_grid<kVec, row_chunks(Shape)>(rows, cols);
  else if constexpr (Vectorized)
    return tiling::chunk_grid<kVec>(rows, cols);
  else
    return tiling::grid(rows, cols);
}

template <MaskBlockShape Shape>
dim3 block_for() {
  if constexpr (row_walk(Shape))
    return tiling::row_block();
  else
    return tiling::block<block_rows(Shape)>();
}

// The launch for one validated, non-empty job.
void launch_one(const MaskJob& job, const MaskParams& p, const MaskKernelVariant& variant, cudaStream_t stream) {
  with_types(job.depth_type, job.mask_type, [&](auto depth_tag, auto mask_tag) {
    using DepthT = decltype(depth_tag);
    using MaskT = decltype(mask_tag);
    const ImageView<const DepthT> depth = job.depth.view<const DepthT>(job.rows, job.cols);
    const ImageView<const MaskT> mask = job.mask.view<const MaskT>(job.rows, job.cols);
    const ImageView<float> out = job.out.view(job.rows, job.cols);
    if (p.erode > 0) {  // every variant erodes with the one shared-memory kernel (32x8 threads)
      is_mask_eroded<DepthT, MaskT>
          <<<tiling::grid(job.rows, job.cols), tiling::block(), 0, stream>>>(depth, mask, out, p);
      return;
    }
    with_variant(variant, [&](auto shape_tag, auto vec_tag, auto kept_tag) {
      with_common(p, [&](auto common_tag) {
        constexpr MaskBlockShape kShape = decltype(shape_tag)::value;
        constexpr bool kVectorized = decltype(vec_tag)::value;
        is_mask<kShape, kVectorized, decltype(kept_tag)::value, decltype(common_tag)::value, DepthT, MaskT>
            <<<grid_for<kShape, kVectorized>(job.rows, job.cols), block_for<kShape>(), 0, stream>>>(depth, mask, out,
                                                                                                    p);
      });
    });
  });
  DM_CUDA(cudaGetLastError());
}

}  // namespace

bool have_cuda_kernels() noexcept { return true; }

std::vector<MaskKernelVariant> mask_kernel_variants() {
  std::vector<MaskKernelVariant> all{kDefaultVariant};
  for (const MaskKernelVariant& v : kAllVariants)
    if (v.shape != kDefaultVariant.shape || v.vectorized != kDefaultVariant.vectorized) all.push_back(v);
  return all;
}

MaskKernelVariant default_mask_kernel_variant() { return kDefaultVariant; }
std::vector<MaskKernelVariant> mapped_mask_kernel_variants() {
  std::vector<MaskKernelVariant> all = mask_kernel_variants();
  all.push_back(kMappedVariant);
  all.push_back(kMappedScalar);
  return all;
}
MaskKernelVariant mapped_mask_kernel_variant() { return kMappedVariant; }

void launch_mask_variant(const MaskJob& job, const MaskParams& params, const MaskKernelVariant& variant,
                         CUstream_st* stream) {
  validate(job);
  validate(params);
  if (job.rows == 0 || job.cols == 0) return;
  tiling::check_rows("mask job", job.rows);
  launch_one(job, params, variant, stream);
}

void launch_mask(const MaskJob& job, const MaskParams& params, CUstream_st* stream) {
  launch_mask_variant(job, params, kDefaultVariant, stream);
}

void launch_mask_batch(const MaskJob* jobs, int count, const MaskParams& params, CUstream_st* stream,
                       const MaskKernelVariant& variant) {
  DM_EXPECT(count >= 0 && count <= kMaxBatchedJobs, std::invalid_argument,
            "launch_mask_batch: " << count << " jobs (0.." << kMaxBatchedJobs << " per call)");
  if (count == 0) return;
  DM_EXPECT(jobs != nullptr, std::invalid_argument, "launch_mask_batch: jobs is null");
  validate(params);
  const MaskJob& first = jobs[0];
  // Everything is checked before anything is enqueued: a rejected batch launches nothing.
  for (int i = 0; i < count; ++i) {
    const MaskJob& j = jobs[i];
    validate(j);
    DM_EXPECT(j.rows == first.rows && j.cols == first.cols && j.depth_type == first.depth_type &&
                  j.mask_type == first.mask_type,
              std::invalid_argument,
              "launch_mask_batch: job " << i << " (" << j.cols << "x" << j.rows << ") differs from job 0 ("
                                        << first.cols << "x" << first.rows
                                        << ") in size or pixel types; a batch holds frames of one size and type");
  }
  if (first.rows == 0 || first.cols == 0) return;
  tiling::check_rows("mask batch", first.rows);
  if (params.erode > 0) {  // the erode kernel has no batched form: one launch per frame
    for (int i = 0; i < count; ++i) launch_one(jobs[i], params, variant, stream);
    return;
  }
  MaskBatch b{};
  for (int i = 0; i < count; ++i) b.frames[i] = BatchFrame{jobs[i].depth, jobs[i].mask, jobs[i].out};
  b.rows = first.rows, b.cols = first.cols;
  with_types(first.depth_type, first.mask_type, [&](auto depth_tag, auto mask_tag) {
    using DepthT = decltype(depth_tag);
    using MaskT = decltype(mask_tag);
    with_variant(variant, [&](auto shape_tag, auto vec_tag, auto kept_tag) {
      with_common(params, [&](auto common_tag) {
        constexpr MaskBlockShape kShape = decltype(shape_tag)::value;
        constexpr bool kVectorized = decltype(vec_tag)::value;
        dim3 grid = grid_for<kShape, kVectorized>(first.rows, first.cols);
        grid.z = static_cast<unsigned>(count);
        is_mask_batch<kShape, kVectorized, decltype(kept_tag)::value, decltype(common_tag)::value, DepthT, MaskT>
            <<<grid, block_for<kShape>(), 0, stream>>>(b, params);
      });
    });
  });
  DM_CUDA(cudaGetLastError());
}

}  // namespace depthmask
