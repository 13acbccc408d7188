// The `reason` pass: per pixel, why it is not in the masked depth (the codes of drop_reason.h), as an
// 8-bit plane. One per-pixel rule shared by the CUDA kernels and the CPU loop, so CPU and GPU agree
// bit for bit by construction; it only decodes integers, compares and selects.
//
// A pass of its own after the masking pass, run only when the `reason` output is asked for: the tuned
// masking variants stay exactly as they are (their machine code does not change), and the pass reads
// the same planes with the same parameters, so a pixel's code is 0 exactly when the masking pass kept
// it (the tests check that on every cause, CPU and GPU).
//
// One pixel, the first code that applies:
//   1 the mask test fails (mask_keeps: labels or threshold, invert included), or 2 when the mask is a
//     plane of test results (MaskParams::tests_plane) holding kTestLiveDrop: the frame's mask kept it
//     and a live mask (live.mask.static, live.mask.color_key) dropped it;
//   3 its own test passes but mask.erode's (2N+1)x(2N+1) window does not (pixels outside the image
//     pass, as in the masking pass);
//   4 registration gave it no source pixel: resample maps it outside the depth image; reproject wrote
//     nothing there (its splat skips depth pixels without a measurement, so those holes read 4 too);
//   5 no measurement (16-bit: 0 or an invalid marker; float: not finite or <= 0);
//   6 / 7 below / above the configured depth range;
//   8 inside the configured range but outside the range the pass ran with (live.mask.depth_band).
// The mask comes first, so the depth is read only where the mask keeps the pixel (as zero_copy's
// kept-only walk does).
//
// Safe to include from plain C++ (no CUDA headers needed).
#pragma once

#include <cstdint>

#include "depthmask/kernels/drop_reason.h"
#include "depthmask/kernels/mask_kernel.h"
#include "depthmask/kernels/mask_rule.h"
#include "depthmask/kernels/register.h"

struct CUstream_st;

namespace depthmask {

// Which registration produced the depth the pass reads (float metres on the mask's grid), if any.
enum class ReasonRegistration : int32_t { None = 0, Resample = 1, Reproject = 2 };

// Trivially copyable; passed to the kernels by value. Build it with reason_params().
struct ReasonParams {
  MaskParams rule;  // the masking pass's parameters, exactly as it ran
  // The configured depth range (depth.min..depth.max) in the units the pass compares: raw units for
  // 16-bit depth, metres for float depth. Used only when `band` is set, i.e. when rule's range is
  // narrower (live.mask.depth_band); otherwise 6 and 7 are judged against rule's own range.
  bool band = false;
  uint32_t raw_min = 0, raw_max = 0;
  float min_m = 0.0f, max_m = 0.0f;
  ReasonRegistration registration = ReasonRegistration::None;
  // Resample: the target-to-source map and the source size, to tell "no source pixel" (4) from "a
  // source pixel without depth" (5).
  ResampleMap map;
  int32_t src_rows = 0, src_cols = 0;
};

// `rule`: the pass's parameters; `configured`: the same rule with the configured depth range (equal to
// `rule` when no band narrows it). Host only.
inline ReasonParams reason_params(const MaskParams& rule, const MaskParams& configured) {
  ReasonParams r;
  r.rule = rule;
  r.band = rule.raw_min != configured.raw_min || rule.raw_max != configured.raw_max || rule.min_m != configured.min_m ||
           rule.max_m != configured.max_m;
  r.raw_min = configured.raw_min;
  r.raw_max = configured.raw_max;
  r.min_m = configured.min_m;
  r.max_m = configured.max_m;
  return r;
}

// The mask's verdict: kKept, kDropMaskRule or kDropLiveMask.
template <class MaskT>
DM_HD inline uint8_t mask_reason(MaskT m, const MaskParams& p) {
  if (mask_keeps(m, p)) return kKept;
  return (p.tests_plane && m == kTestLiveDrop) ? kDropLiveMask : kDropMaskRule;
}

// The depth's verdict once the mask keeps the pixel. Kept exactly when depth_in_range() holds for the
// pass's rule, so a code is 0 exactly where the masking pass wrote depth.
DM_HD inline uint8_t depth_reason(uint16_t stored, const ReasonParams& r) {
  const uint16_t v = decode_depth_raw(stored, r.rule);
  if (v == 0) return kDropNoDepth;
  if (depth_in_range(v, r.rule)) return kKept;
  if (!r.band) return v < r.rule.raw_min ? kDropBelowMin : kDropAboveMax;
  return v < r.raw_min ? kDropBelowMin : v > r.raw_max ? kDropAboveMax : kDropDepthBand;
}
DM_HD inline uint8_t depth_reason(float metres, const ReasonParams& r) {
  if (!(finite_f(metres) && metres > 0.0f)) return kDropNoDepth;
  if (depth_in_range(metres, r.rule)) return kKept;
  if (!r.band) return metres < r.rule.min_m ? kDropBelowMin : kDropAboveMax;
  return metres < r.min_m ? kDropBelowMin : metres > r.max_m ? kDropAboveMax : kDropDepthBand;
}

// Whether pixel (x, y) of the mask grid has a source pixel under the registration.
DM_HD inline bool registration_covers(float registered, int x, int y, const ReasonParams& r) {
  if (r.registration == ReasonRegistration::Resample)
    return resample_index(x, r.map.ax, r.map.bx, r.src_cols) >= 0 &&
           resample_index(y, r.map.ay, r.map.by, r.src_rows) >= 0;
  if (r.registration == ReasonRegistration::Reproject) return registered > 0.0f;
  return true;
}

// Erode's window, separably: row_window_keeps() is the AND of the mask test over x-n..x+n of row y
// (pixels outside the image pass); the window of (x, y) is the AND of those over rows y-n..y+n.
template <class MaskT>
DM_HD inline uint8_t row_window_keeps(const ImageView<const MaskT>& mask, int x, int y, const MaskParams& p) {
  uint8_t all = 1;
  const MaskT* row = mask.row(y);
  for (int k = -p.erode; k <= p.erode; ++k) {
    const int xx = x + k;
    if (xx >= 0 && xx < mask.cols && !mask_keeps(row[xx], p)) all = 0;
  }
  return all;
}
DM_HD inline bool window_keeps(const ImageView<const uint8_t>& rows_keep, int x, int y, int n) {
  bool all = true;
  for (int k = -n; k <= n; ++k) {
    const int yy = y + k;
    if (yy >= 0 && yy < rows_keep.rows && rows_keep.row(yy)[x] == 0) all = false;
  }
  return all;
}

// The code of a pixel whose own mask test passed: erosion, coverage, then the depth. `window` is
// window_keeps() of the pixel (true without erode).
template <class DepthT>
DM_HD inline uint8_t reason_after_mask(DepthT d, bool window, int x, int y, const ReasonParams& r) {
  if (!window) return kDropErosion;
  if constexpr (sizeof(DepthT) == sizeof(float)) {
    if (!registration_covers(d, x, y, r)) return kDropNotCovered;
  }
  return depth_reason(d, r);
}

// One pixel's code, the depth read only where the mask keeps the pixel (the kernels: mapped memory
// crosses the bus only where it must).
template <class DepthT, class MaskT>
DM_HD inline uint8_t drop_reason(const ImageView<const DepthT>& depth, MaskT m, bool window, int x, int y,
                                 const ReasonParams& r) {
  const uint8_t by_mask = mask_reason(m, r.rule);
  return by_mask != kKept ? by_mask : reason_after_mask(depth.row(y)[x], window, x, y, r);
}

// The same with the depth sample already read (the CPU loop reads whole rows: straight-line code
// the compiler can turn into selects).
template <class DepthT, class MaskT>
DM_HD inline uint8_t drop_reason(DepthT d, MaskT m, bool window, int x, int y, const ReasonParams& r) {
  const uint8_t by_mask = mask_reason(m, r.rule);
  return by_mask != kKept ? by_mask : reason_after_mask(d, window, x, y, r);
}

// One frame of the pass. depth (16-bit stored words or float metres; registration's output when
// `registration` is set) and mask (8- or 16-bit, or a plane of test results) are read, out (8-bit
// codes) is written; with rule.erode > 0, `scratch` (8-bit, rows x cols) holds the row windows.
struct ReasonJob {
  Plane<const void> depth;
  DepthType depth_type = DepthType::U16;
  Plane<const void> mask;
  MaskType mask_type = MaskType::U8;
  Plane<uint8_t> out;
  Plane<uint8_t> scratch;
  int rows = 0;
  int cols = 0;
};

// Throws std::invalid_argument describing the first problem (null pointer, step shorter than a row,
// negative size, no scratch with erode, registration with 16-bit depth); an empty job is valid.
void validate(const ReasonJob& job, const ReasonParams& params);

// The CPU loop (rows over cores with oneTBB).
void reason_cpu(const ReasonJob& job, const ReasonParams& params);

// Enqueues the pass on `stream` (two kernels with erode, one without) and checks the launches; never
// synchronises. Throws CudaError on a launch failure, std::invalid_argument on a bad job, PlatformError
// in a build without CUDA kernels.
void launch_reason(const ReasonJob& job, const ReasonParams& params, CUstream_st* stream);

}  // namespace depthmask
