// The CPU loop of the backprojection (backproject.h), and the job check shared with the CUDA launcher.
#include <tbb/blocked_range.h>
#include <tbb/parallel_for.h>

#include <cstddef>
#include <stdexcept>
#include <string>

#include "depthmask/kernels/backproject.h"

namespace depthmask {

void validate(const BackprojectJob& job) {
  if (job.rows < 0 || job.cols < 0)
    throw std::invalid_argument("backproject job: negative size " + std::to_string(job.cols) + "x" +
                                std::to_string(job.rows));
  const Pinhole& k = job.k;
  if (!finite_f(k.inv_fx) || !finite_f(k.inv_fy) || !finite_f(k.off_x) || !finite_f(k.off_y) || !(k.inv_fx > 0.0f) ||
      !(k.inv_fy > 0.0f))
    throw std::invalid_argument("backproject job: intrinsics are not finite with positive focal lengths");
  if (job.rows == 0 || job.cols == 0) return;
  check_plane("backproject job", "depth", job.depth, sizeof(float), sizeof(float), job.cols);
  check_plane("backproject job", "xyz", job.xyz, 3 * sizeof(float), sizeof(float), job.cols);
}

void backproject_cpu(const BackprojectJob& job) {
  validate(job);
  if (job.rows == 0 || job.cols == 0) return;
  const auto depth = job.depth.view(job.rows, job.cols);
  const auto xyz = job.xyz.view(job.rows, job.cols);
  tbb::parallel_for(tbb::blocked_range<int>(0, job.rows, 16), [&](const tbb::blocked_range<int>& r) {
    for (int v = r.begin(); v != r.end(); ++v) {
      const float* d = depth.row(v);
      float* o = xyz.row(v);
      for (int u = 0; u < job.cols; ++u) backproject_pixel(u, v, d[u], job.invalid, job.k, o + std::ptrdiff_t{3} * u);
    }
  });
}

}  // namespace depthmask
