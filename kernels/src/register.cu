// Registration kernels: the per-pixel functions of register.h on the GPU. Same tiling as the mask
// kernel (32x8 threads covering a 32x32 tile, each thread walking 4 rows).
#include <cuda_runtime.h>

#include "depthmask/kernels/cuda_check.h"
#include "depthmask/kernels/register.h"
#include "tiling.cuh"

namespace depthmask {

namespace {

template <class DepthT>
__global__ void resample_kernel(ImageView<const DepthT> src, ImageView<float> out, ResampleMap m, DepthDecode d) {
  tiling::for_tile_pixels(out.rows, out.cols, [&](int x, int y) { out.row(y)[x] = resample_pixel(src, x, y, m, d); });
}

// Every target pixel starts as +inf ("nothing yet"), the z-buffer's neutral element.
__global__ void zbuffer_clear(ImageView<float> out) {
  tiling::for_tile_pixels(out.rows, out.cols, [&](int x, int y) { out.row(y)[x] = __uint_as_float(kZBufferEmpty); });
}

// One thread per source (depth) pixel. Written z values are positive and finite, so an unsigned
// atomicMin on the bit pattern is a float min; the result does not depend on the order of arrival.
template <class DepthT>
__global__ void reproject_kernel(ImageView<const DepthT> src, ImageView<float> out, ReprojectParams p, DepthDecode d) {
  tiling::for_tile_pixels(src.rows, src.cols, [&](int u, int v) {
    const Splat s = reproject_splat(u, v, decode_depth_m(src.row(v)[u], d), out.cols, out.rows, p);
    if (!s.valid) return;
    const unsigned int bits = __float_as_uint(s.z);
    for (int y = s.y0; y <= s.y1; ++y) {
      unsigned int* o = reinterpret_cast<unsigned int*>(out.row(y));
      for (int x = s.x0; x <= s.x1; ++x) atomicMin(o + x, bits);
    }
  });
}

// Target pixels no depth pixel reached hold +inf: they become 0, "no depth".
__global__ void zbuffer_finish(ImageView<float> out) {
  tiling::for_tile_pixels(out.rows, out.cols, [&](int x, int y) {
    float* o = out.row(y) + x;
    if (__float_as_uint(*o) == kZBufferEmpty) *o = 0.0f;
  });
}

using tiling::grid;

ImageView<float> target_view(const RegisterJob& job) { return job.out.view(job.out_rows, job.out_cols); }

template <class DepthT>
ImageView<const DepthT> source_view(const RegisterJob& job) {
  return job.depth.view<const DepthT>(job.depth_rows, job.depth_cols);
}

}  // namespace

void launch_resample(const RegisterJob& job, const ResampleMap& map, const DepthDecode& decode, CUstream_st* stream) {
  validate(job);
  if (job.out_rows == 0 || job.out_cols == 0) return;
  tiling::check_rows("registration job: the target", job.out_rows);
  const dim3 block = tiling::block();
  if (job.depth_type == DepthType::U16)
    resample_kernel<uint16_t><<<grid(job.out_rows, job.out_cols), block, 0, stream>>>(source_view<uint16_t>(job),
                                                                                      target_view(job), map, decode);
  else
    resample_kernel<float><<<grid(job.out_rows, job.out_cols), block, 0, stream>>>(source_view<float>(job),
                                                                                   target_view(job), map, decode);
  DM_CUDA(cudaGetLastError());
}

void launch_reproject(const RegisterJob& job, const ReprojectParams& params, const DepthDecode& decode,
                      CUstream_st* stream) {
  validate(job);
  if (job.out_rows == 0 || job.out_cols == 0) return;
  tiling::check_rows("registration job: the target", job.out_rows);
  tiling::check_rows("registration job: the depth image", job.depth_rows);
  const dim3 block = tiling::block();
  const ImageView<float> out = target_view(job);
  zbuffer_clear<<<grid(job.out_rows, job.out_cols), block, 0, stream>>>(out);
  DM_CUDA(cudaGetLastError());
  if (job.depth_rows > 0 && job.depth_cols > 0) {
    const dim3 depth_grid = grid(job.depth_rows, job.depth_cols);
    if (job.depth_type == DepthType::U16)
      reproject_kernel<uint16_t><<<depth_grid, block, 0, stream>>>(source_view<uint16_t>(job), out, params, decode);
    else
      reproject_kernel<float><<<depth_grid, block, 0, stream>>>(source_view<float>(job), out, params, decode);
    DM_CUDA(cudaGetLastError());
  }
  zbuffer_finish<<<grid(job.out_rows, job.out_cols), block, 0, stream>>>(out);
  DM_CUDA(cudaGetLastError());
}

}  // namespace depthmask
