// The colour key pass on the GPU: color_key_test() of color_key.h per pixel over 32x32 tiles (32x8
// threads), the mask and BGR colour in, an 8-bit plane of test results out. A separate pass before
// the masking kernel, so the tuned masking variants stay as they are; the bytes it moves (1-2 mask +
// 3 colour in, 1 out per pixel) are fewer than the masking pass's.
#include <cuda_runtime.h>

#include <cstdint>

#include "depthmask/kernels/color_key.h"
#include "depthmask/kernels/cuda_check.h"
#include "tiling.cuh"

namespace depthmask {

namespace {

template <class MaskT>
__global__ void __launch_bounds__(tiling::kTile* tiling::kBlockRows)
    color_key_tests(ImageView<const MaskT> mask, ImageView<const uint8_t> color, ImageView<uint8_t> out, MaskParams p,
                    ColorKey k) {
  tiling::for_tile_pixels(out.rows, out.cols, [&](int x, int y) {
    out.row(y)[x] = color_key_test(mask.row(y)[x], color.row(y) + 3 * x, p, k);
  });
}

}  // namespace

void launch_color_key(const ColorKeyJob& job, const MaskParams& params, const ColorKey& key, CUstream_st* stream) {
  validate(job);
  validate(params);
  validate(key);
  if (job.rows == 0 || job.cols == 0) return;
  tiling::check_rows("color key job", job.rows);
  const ImageView<const uint8_t> color = job.color.view(job.rows, job.cols);
  const ImageView<uint8_t> out = job.out.view(job.rows, job.cols);
  const dim3 grid = tiling::grid(job.rows, job.cols), block = tiling::block();
  if (job.mask_type == MaskType::U8) {
    const ImageView<const uint8_t> mask = job.mask.view<const uint8_t>(job.rows, job.cols);
    color_key_tests<uint8_t><<<grid, block, 0, stream>>>(mask, color, out, params, key);
  } else {
    const ImageView<const uint16_t> mask = job.mask.view<const uint16_t>(job.rows, job.cols);
    color_key_tests<uint16_t><<<grid, block, 0, stream>>>(mask, color, out, params, key);
  }
  DM_CUDA(cudaGetLastError());
}

}  // namespace depthmask
