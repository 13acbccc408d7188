// The masking kernel: one fused pass over 32x32 tiles (raw depth + mask in, float metres out).
#include <cuda_runtime.h>

#include "depthmask/detail/cuda_check.h"
#include "depthmask/kernels/mask_kernel.h"
#include "depthmask/kernels/mask_variants.h"
#include "tiling.cuh"

namespace depthmask {

namespace {

// The shared 32x8-threads-per-32x32-tile shape (tiling.cuh). Issue #4 measures the alternatives
// (32x32 threads, vector loads); this is the plain baseline.
using tiling::kBlockRows;
using tiling::kTile;

template <class DepthT, class MaskT>
__global__ void is_mask(ImageView<const DepthT> depth, ImageView<const MaskT> mask, ImageView<float> out,
                        MaskParams p) {
  tiling::for_tile_pixels(out.rows, out.cols,
                          [&](int x, int y) { out.row(y)[x] = mask_pixel(depth.row(y)[x], mask.row(y)[x], p); });
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
  const int w = kTile + 2 * n;             // plane rows and columns in use
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

template <class DepthT, class MaskT>
void launch_typed(const MaskJob& job, const MaskParams& p, cudaStream_t stream) {
  const ImageView<const DepthT> depth{static_cast<const DepthT*>(job.depth), job.depth_step, job.rows, job.cols};
  const ImageView<const MaskT> mask{static_cast<const MaskT*>(job.mask), job.mask_step, job.rows, job.cols};
  const ImageView<float> out{job.out, job.out_step, job.rows, job.cols};
  const dim3 grid = tiling::grid(job.rows, job.cols);
  if (p.erode > 0) is_mask_eroded<DepthT, MaskT><<<grid, tiling::block(), 0, stream>>>(depth, mask, out, p);
  else is_mask<DepthT, MaskT><<<grid, tiling::block(), 0, stream>>>(depth, mask, out, p);
  DM_CUDA(cudaGetLastError());
}

}  // namespace

bool have_cuda_kernels() noexcept { return true; }

void launch_mask(const MaskJob& job, const MaskParams& params, CUstream_st* stream) {
  validate(job);
  validate(params);
  if (job.rows == 0 || job.cols == 0) return;
  tiling::check_rows("mask job", job.rows);
  const bool d16 = job.depth_type == DepthType::U16;
  const bool m8 = job.mask_type == MaskType::U8;
  if (d16 && m8) launch_typed<uint16_t, uint8_t>(job, params, stream);
  else if (d16) launch_typed<uint16_t, uint16_t>(job, params, stream);
  else if (m8) launch_typed<float, uint8_t>(job, params, stream);
  else launch_typed<float, uint16_t>(job, params, stream);
}

// Placeholder until the vectorised variants land (issue #4): one variant, the current kernel.
std::vector<MaskKernelVariant> mask_kernel_variants() { return {MaskKernelVariant{MaskBlockShape::Threads32x8, false}}; }
MaskKernelVariant default_mask_kernel_variant() { return mask_kernel_variants().front(); }
std::string to_string(const MaskKernelVariant& v) {
  return std::string(v.shape == MaskBlockShape::Threads32x8 ? "32x8" : "32x32") + (v.vectorized ? " vec" : " scalar");
}
void launch_mask_variant(const MaskJob& job, const MaskParams& params, const MaskKernelVariant&, CUstream_st* stream) {
  launch_mask(job, params, stream);
}
void launch_mask_batch(const MaskJob* jobs, int count, const MaskParams& params, CUstream_st* stream) {
  DM_EXPECT(count >= 0 && count <= kMaxBatchedJobs, std::invalid_argument, "launch_mask_batch: " << count << " jobs");
  for (int i = 0; i < count; ++i) launch_mask(jobs[i], params, stream);
}

}  // namespace depthmask
