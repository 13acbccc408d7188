// The CPU loop: the per-pixel rule from mask_rule.h over rows, in parallel with oneTBB.
#include <tbb/blocked_range.h>
#include <tbb/parallel_for.h>

#include "depthmask/kernels/mask_kernel.h"

namespace depthmask {

namespace {

template <class DepthT, class MaskT>
void run_rows(const MaskJob& job, const MaskParams& p) {
  const ImageView<const DepthT> depth{static_cast<const DepthT*>(job.depth), job.depth_step, job.rows, job.cols};
  const ImageView<const MaskT> mask{static_cast<const MaskT*>(job.mask), job.mask_step, job.rows, job.cols};
  const ImageView<float> out{job.out, job.out_step, job.rows, job.cols};
  // Grain of 16 rows: a 640-wide row is ~3 KB of traffic, too little to be worth a task on its own.
  tbb::parallel_for(tbb::blocked_range<int>(0, job.rows, 16), [&](const tbb::blocked_range<int>& r) {
    for (int y = r.begin(); y != r.end(); ++y) {
      const DepthT* d = depth.row(y);
      const MaskT* m = mask.row(y);
      float* o = out.row(y);
      for (int x = 0; x < job.cols; ++x) o[x] = mask_pixel(d[x], m[x], p);
    }
  });
}

}  // namespace

void mask_cpu(const MaskJob& job, const MaskParams& params) {
  validate(job);
  if (job.rows == 0 || job.cols == 0) return;
  const bool d16 = job.depth_type == DepthType::U16;
  const bool m8 = job.mask_type == MaskType::U8;
  if (d16 && m8) run_rows<uint16_t, uint8_t>(job, params);
  else if (d16) run_rows<uint16_t, uint16_t>(job, params);
  else if (m8) run_rows<float, uint8_t>(job, params);
  else run_rows<float, uint16_t>(job, params);
}

}  // namespace depthmask
