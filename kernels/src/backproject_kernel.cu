// The backprojection kernel: one thread per pixel column of a 32x32 tile, as in the masking kernel.
#include <cuda_runtime.h>

#include "depthmask/detail/cuda_check.h"
#include "depthmask/kernels/backproject.h"

namespace depthmask {

namespace {

constexpr int kTile = 32;
constexpr int kBlockRows = 8;

__global__ void backproject_kernel(ImageView<const float> depth, ImageView<float> xyz, float invalid, Pinhole k) {
  const int u = blockIdx.x * kTile + threadIdx.x;
  if (u >= depth.cols) return;
  const int v0 = blockIdx.y * kTile + threadIdx.y;
#pragma unroll
  for (int i = 0; i < kTile; i += kBlockRows) {
    const int v = v0 + i;
    if (v < depth.rows) backproject_pixel(u, v, depth.row(v)[u], invalid, k, xyz.row(v) + 3 * u);
  }
}

}  // namespace

void launch_backproject(const BackprojectJob& job, CUstream_st* stream) {
  validate(job);
  if (job.rows == 0 || job.cols == 0) return;
  DM_EXPECT(job.rows <= 65535 * kTile, std::invalid_argument,
            "backproject job: " << job.rows << " rows exceed the kernel's grid limit of " << 65535 * kTile);
  const ImageView<const float> depth{job.depth, job.depth_step, job.rows, job.cols};
  const ImageView<float> xyz{job.xyz, job.xyz_step, job.rows, job.cols};
  const dim3 block(kTile, kBlockRows);
  const dim3 grid((job.cols + kTile - 1) / kTile, (job.rows + kTile - 1) / kTile);
  backproject_kernel<<<grid, block, 0, stream>>>(depth, xyz, job.invalid, job.k);
  DM_CUDA(cudaGetLastError());
}

}  // namespace depthmask
