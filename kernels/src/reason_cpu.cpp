// The `reason` pass's CPU loop and argument checks: drop_reason() of reason.h per pixel over rows, in
// parallel with oneTBB, as the GPU kernels do per pixel (erode: the row windows first, into scratch).
#include <tbb/blocked_range.h>
#include <tbb/parallel_for.h>

#include <stdexcept>
#include <string>

#include "depthmask/kernels/reason.h"

namespace depthmask {

namespace {

template <class F>
void for_rows(int rows, F&& f) {
  tbb::parallel_for(tbb::blocked_range<int>(0, rows, 16), [&](const tbb::blocked_range<int>& r) {
    for (int y = r.begin(); y != r.end(); ++y) f(y);
  });
}

// One row without erode. `q` is the caller's local copy: nothing in the row aliases it, so its
// fields stay in registers (and, for the common rule, are constants the loop is compiled for).
template <class DepthT, class MaskT>
inline void reason_row(const DepthT* d, const MaskT* m, uint8_t* o, int cols, int y, const ReasonParams& q) {
  for (int x = 0; x < cols; ++x) o[x] = drop_reason(d[x], m[x], true, x, y, q);
}

template <class DepthT, class MaskT>
void run_rows(const ReasonJob& job, const ReasonParams& p) {
  const auto depth = job.depth.view<const DepthT>(job.rows, job.cols);
  const auto mask = job.mask.view<const MaskT>(job.rows, job.cols);
  const auto out = job.out.view(job.rows, job.cols);
  const int n = p.rule.erode;
  if (n == 0) {
    // The common rule (mask_rule.h's is_common_case) with its label and marker loops folded away, as
    // the masking loop does; the same codes (the values are equal).
    if (is_common_case(p.rule)) {
      for_rows(job.rows, [&](int y) {
        ReasonParams q = p;
        q.rule = common_params(p.rule);
        reason_row(depth.row(y), mask.row(y), out.row(y), job.cols, y, q);
      });
    } else {
      for_rows(job.rows, [&](int y) {
        const ReasonParams q = p;
        reason_row(depth.row(y), mask.row(y), out.row(y), job.cols, y, q);
      });
    }
    return;
  }
  const ImageView<const uint8_t> windows = job.scratch.view<const uint8_t>(job.rows, job.cols);
  const auto rows_keep = job.scratch.view(job.rows, job.cols);
  for_rows(job.rows, [&](int y) {
    for (int x = 0; x < job.cols; ++x) rows_keep.row(y)[x] = row_window_keeps(mask, x, y, p.rule);
  });
  for_rows(job.rows, [&](int y) {
    const MaskT* m = mask.row(y);
    uint8_t* o = out.row(y);
    for (int x = 0; x < job.cols; ++x) o[x] = drop_reason(depth, m[x], window_keeps(windows, x, y, n), x, y, p);
  });
}

template <class DepthT>
void run_mask_type(const ReasonJob& job, const ReasonParams& p) {
  if (job.mask_type == MaskType::U8)
    run_rows<DepthT, uint8_t>(job, p);
  else
    run_rows<DepthT, uint16_t>(job, p);
}

}  // namespace

void validate(const ReasonJob& job, const ReasonParams& params) {
  validate(params.rule);
  if (job.rows < 0 || job.cols < 0)
    throw std::invalid_argument("reason job: negative size " + std::to_string(job.cols) + "x" +
                                std::to_string(job.rows));
  if (job.rows == 0 || job.cols == 0) return;
  const size_t depth_bytes = pixel_bytes(job.depth_type), mask_bytes = pixel_bytes(job.mask_type);
  check_plane("reason job", "depth", job.depth, depth_bytes, depth_bytes, job.cols);
  check_plane("reason job", "mask", job.mask, mask_bytes, mask_bytes, job.cols);
  check_plane("reason job", "output", job.out, 1, 1, job.cols);
  if (params.rule.erode > 0) check_plane("reason job", "scratch (erode)", job.scratch, 1, 1, job.cols);
  if (params.registration != ReasonRegistration::None && job.depth_type != DepthType::F32)
    throw std::invalid_argument("reason job: registered depth is float metres, got 16-bit depth");
}

void reason_cpu(const ReasonJob& job, const ReasonParams& params) {
  validate(job, params);
  if (job.rows == 0 || job.cols == 0) return;
  if (job.depth_type == DepthType::U16)
    run_mask_type<uint16_t>(job, params);
  else
    run_mask_type<float>(job, params);
}

}  // namespace depthmask
