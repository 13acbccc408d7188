// The colour key's CPU loop and argument checks: color_key_test() of color_key.h over rows, in
// parallel with oneTBB, as the GPU kernel does per pixel.
#include <tbb/blocked_range.h>
#include <tbb/parallel_for.h>

#include <cstddef>
#include <stdexcept>
#include <string>

#include "depthmask/kernels/color_key.h"

namespace depthmask {

namespace {

void check_range(const char* what, int lo, int hi, int max, bool may_wrap) {
  if (lo > max || hi > max)
    throw std::invalid_argument(std::string("color key: ") + what + " range [" + std::to_string(lo) + ", " +
                                std::to_string(hi) + "] exceeds 0.." + std::to_string(max));
  if (!may_wrap && lo > hi)
    throw std::invalid_argument(std::string("color key: ") + what + " range [" + std::to_string(lo) + ", " +
                                std::to_string(hi) + "] has min > max (only hue wraps)");
}

template <class MaskT>
void run_rows(const ColorKeyJob& job, const MaskParams& p, const ColorKey& k) {
  const auto mask = job.mask.view<const MaskT>(job.rows, job.cols);
  const auto color = job.color.view(job.rows, job.cols);
  const auto out = job.out.view(job.rows, job.cols);
  tbb::parallel_for(tbb::blocked_range<int>(0, job.rows, 16), [&](const tbb::blocked_range<int>& r) {
    for (int y = r.begin(); y != r.end(); ++y) {
      const MaskT* m = mask.row(y);
      const uint8_t* c = color.row(y);
      uint8_t* o = out.row(y);
      for (int x = 0; x < job.cols; ++x) o[x] = color_key_test(m[x], c + std::ptrdiff_t{3} * x, p, k);
    }
  });
}

}  // namespace

void validate(const ColorKey& k) {
  check_range("h", k.h_min, k.h_max, kHueMax, true);
  check_range("s", k.s_min, k.s_max, 255, false);
  check_range("v", k.v_min, k.v_max, 255, false);
}

void validate(const ColorKeyJob& job) {
  if (job.rows < 0 || job.cols < 0)
    throw std::invalid_argument("color key job: negative size " + std::to_string(job.cols) + "x" +
                                std::to_string(job.rows));
  if (job.rows == 0 || job.cols == 0) return;
  const size_t mask_bytes = pixel_bytes(job.mask_type);
  check_plane("color key job", "mask", job.mask, mask_bytes, mask_bytes, job.cols);
  check_plane("color key job", "color", job.color, 3, 1, job.cols);
  check_plane("color key job", "output", job.out, 1, 1, job.cols);
}

void color_key_cpu(const ColorKeyJob& job, const MaskParams& params, const ColorKey& key) {
  validate(job);
  validate(params);
  validate(key);
  if (job.rows == 0 || job.cols == 0) return;
  if (job.mask_type == MaskType::U8)
    run_rows<uint8_t>(job, params, key);
  else
    run_rows<uint16_t>(job, params, key);
}

}  // namespace depthmask
