// The `reason` pass on the GPU: drop_reason() of reason.h per pixel over 32x32 tiles (32x8 threads).
// With erode, a first kernel writes each pixel's row window (row_window_keeps) into the scratch plane
// and the second ANDs the column of those, as the CPU loop does. Run only when the `reason` output is
// asked for; the masking kernels are not touched.
#include <cuda_runtime.h>

#include <cstdint>

#include "depthmask/kernels/cuda_check.h"
#include "depthmask/kernels/reason.h"
#include "tiling.cuh"

namespace depthmask {

namespace {

template <class MaskT>
__global__ void __launch_bounds__(tiling::kTile* tiling::kBlockRows)
    reason_rows(ImageView<const MaskT> mask, ImageView<uint8_t> rows_keep, MaskParams p) {
  tiling::for_tile_pixels(rows_keep.rows, rows_keep.cols,
                          [&](int x, int y) { rows_keep.row(y)[x] = row_window_keeps(mask, x, y, p); });
}

template <class DepthT, class MaskT>
__global__ void __launch_bounds__(tiling::kTile* tiling::kBlockRows)
    reason_codes(ImageView<const DepthT> depth, ImageView<const MaskT> mask, ImageView<const uint8_t> windows,
                 ImageView<uint8_t> out, ReasonParams p) {
  tiling::for_tile_pixels(out.rows, out.cols, [&](int x, int y) {
    const bool window = p.rule.erode == 0 || window_keeps(windows, x, y, p.rule.erode);
    out.row(y)[x] = drop_reason(depth, mask.row(y)[x], window, x, y, p);
  });
}

template <class DepthT, class MaskT>
void launch_typed(const ReasonJob& job, const ReasonParams& p, CUstream_st* stream) {
  const dim3 grid = tiling::grid(job.rows, job.cols), block = tiling::block();
  const auto depth = job.depth.view<const DepthT>(job.rows, job.cols);
  const auto mask = job.mask.view<const MaskT>(job.rows, job.cols);
  if (p.rule.erode > 0) {
    reason_rows<MaskT><<<grid, block, 0, stream>>>(mask, job.scratch.view(job.rows, job.cols), p.rule);
    DM_CUDA(cudaGetLastError());
  }
  reason_codes<DepthT, MaskT><<<grid, block, 0, stream>>>(
      depth, mask, job.scratch.view<const uint8_t>(job.rows, job.cols), job.out.view(job.rows, job.cols), p);
  DM_CUDA(cudaGetLastError());
}

template <class DepthT>
void launch_mask_type(const ReasonJob& job, const ReasonParams& p, CUstream_st* stream) {
  if (job.mask_type == MaskType::U8)
    launch_typed<DepthT, uint8_t>(job, p, stream);
  else
    launch_typed<DepthT, uint16_t>(job, p, stream);
}

}  // namespace

void launch_reason(const ReasonJob& job, const ReasonParams& params, CUstream_st* stream) {
  validate(job, params);
  if (job.rows == 0 || job.cols == 0) return;
  tiling::check_rows("reason job", job.rows);
  if (job.depth_type == DepthType::U16)
    launch_mask_type<uint16_t>(job, params, stream);
  else
    launch_mask_type<float>(job, params, stream);
}

}  // namespace depthmask
