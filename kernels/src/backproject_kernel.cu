// The backprojection kernel: one thread per pixel column of a 32x32 tile, as in the masking kernel.
#include <cuda_runtime.h>

#include "depthmask/kernels/backproject.h"
#include "depthmask/kernels/cuda_check.h"
#include "tiling.cuh"

namespace depthmask {

namespace {

__global__ void backproject_kernel(ImageView<const float> depth, ImageView<float> xyz, float invalid, Pinhole k) {
  tiling::for_tile_pixels(depth.rows, depth.cols, [&](int u, int v) {
    backproject_pixel(u, v, depth.row(v)[u], invalid, k, xyz.row(v) + 3 * u);
  });
}

}  // namespace

void launch_backproject(const BackprojectJob& job, CUstream_st* stream) {
  validate(job);
  if (job.rows == 0 || job.cols == 0) return;
  tiling::check_rows("backproject job", job.rows);
  const ImageView<const float> depth = job.depth.view(job.rows, job.cols);
  const ImageView<float> xyz = job.xyz.view(job.rows, job.cols);
  backproject_kernel<<<tiling::grid(job.rows, job.cols), tiling::block(), 0, stream>>>(depth, xyz, job.invalid, job.k);
  DM_CUDA(cudaGetLastError());
}

}  // namespace depthmask
