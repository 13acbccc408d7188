// The per-pixel masking rule, shared by the CUDA kernel and the CPU loop.
//
// This header is the single definition of what one output pixel is. Both loops include it and call
// the same inline functions, so CPU and GPU results are bit-identical by construction: the rule only
// decodes integers, converts and multiplies (raw * scale), compares and selects — there is no a*b+c
// that nvcc could contract into an FMA while g++ does not. Keep it that way; if the rule ever adds an
// offset, write fmaf() explicitly.
//
// One pixel, in order:
//   1. 16-bit depth: the stored word is 0 or one of invalid_raw[] -> no measurement (0). Otherwise it
//      is decoded (plain: as is; APC: rotated right by 3 bits) into integer units of `scale`.
//   2. the decoded value must lie in [raw_min, raw_max] (float depth: finite, > 0, in [min_m, max_m]).
//   3. the mask test: label set, or mask > threshold (absolute, or per mask type from a fraction of
//      its full scale); invert last. With erode N, every pixel in the (2N+1)x(2N+1) window must pass
//      the mask test (pixels outside the image count as passing).
//   4. kept: decoded * scale (float depth: as is); otherwise `invalid`.
//
// Safe to include from plain C++ (no CUDA headers needed).
#pragma once

#include <cmath>
#include <cstddef>
#include <cstdint>
#include <stdexcept>

#include "depthmask/kernels/image_view.h"  // DM_HD, and the image handles every job uses

namespace depthmask {

// Most labels a `mask.labels` list may hold. Fixed so the parameter block is a plain value that can be
// passed to a kernel by value (no device allocation per frame).
inline constexpr int kMaxLabels = 64;
// Most extra invalid raw values (depth.invalid_values) and the largest erode radius (mask.erode).
inline constexpr int kMaxInvalidRaw = 4;
inline constexpr int kMaxErode = 16;

// A plane of mask-test results (instance unions, live.mask.static, the colour key pass) holds
// kTestKeep where the pixel passes, kTestLiveDrop where the frame's mask passed but a live mask
// dropped it, and 0 where the mask rule dropped it; it is masked with threshold 1
// (union_mask_params), so only kTestKeep is kept and the `reason` pass can tell the two drops apart.
inline constexpr uint8_t kTestKeep = 255;
inline constexpr uint8_t kTestLiveDrop = 1;

// Everything the rule needs besides the two input pixels. Trivially copyable; passed by value.
// Set the scale and range with set_depth_range(), which also derives the raw-unit bounds.
struct MaskParams {
  float scale = 0.001f;  // metres per raw unit, for 16-bit depth (ignored for float depth)
  float min_m = 0.0f;    // keep float depth in [min_m, max_m], inclusive
  float max_m = 10.0f;
  // The same range in raw units for 16-bit depth, inclusive. Comparing integers keeps the bounds
  // exact: float(1500) * 0.001f is 1.50000012f, which a float compare would drop at max 1.5 m.
  uint32_t raw_min = 0;
  uint32_t raw_max = 10000;
  float invalid = 0.0f;    // written where the pixel is not kept (may be NaN)
  uint32_t threshold = 0;  // keep where mask > threshold (when no labels are given), any mask type ...
  // ... unless threshold_by_type: then 8-bit masks use threshold_u8 and 16-bit masks threshold_u16
  // (mask.threshold_fraction as exact integers per type; set with set_threshold_fraction()).
  bool threshold_by_type = false;
  uint32_t threshold_u8 = 0;
  uint32_t threshold_u16 = 0;
  int32_t label_count = 0;  // keep where mask is one of labels[0..label_count)
  uint32_t labels[kMaxLabels] = {};
  bool invert = false;  // applied to the mask test, last
  // 16-bit depth only (float depth is metres and ignores these):
  bool apc_encoding = false;  // stored words are rotated left by 3 bits (APC); decode rotates back
  // Stored words that mean "no measurement" besides 0 (7-Scenes: 65535). Compared with the word as
  // stored in the file, before decoding: that is the value a dataset documents and a user sees in
  // numpy. (For plain depth stored == decoded; an APC user lists the words as they are in the file.)
  int32_t invalid_raw_count = 0;
  uint16_t invalid_raw[kMaxInvalidRaw] = {};
  // Erode radius in pixels, 0..kMaxErode: a pixel is kept only if the whole (2N+1)x(2N+1) window
  // around it passes the mask test; outside the image counts as passing (as cv::erode's default
  // border), so objects cut by the image edge are not eaten from that edge.
  int32_t erode = 0;
  // The mask is a plane of mask-test results (kTestKeep / kTestLiveDrop / 0): the rule is unchanged,
  // only the `reason` pass and the colour key pass read the flag.
  bool tests_plane = false;
};

// Sets scale and range, deriving the 16-bit bounds in double precision: a raw value r is in range
// when r * scale lies in [min_m, max_m] up to a relative 1e-9 (so decimal bounds such as 1.5 m at
// 0.001 m per unit include 1500 exactly). Host only.
inline void set_depth_range(MaskParams& p, double scale, double min_m, double max_m) {
  p.scale = static_cast<float>(scale);
  p.min_m = static_cast<float>(min_m);
  p.max_m = static_cast<float>(max_m);
  const double lo = std::ceil(min_m / scale * (1.0 - 1e-9));
  const double hi = std::floor(max_m / scale * (1.0 + 1e-9));
  p.raw_min = lo <= 0.0 ? 0u : lo >= 65536.0 ? 65536u : static_cast<uint32_t>(lo);
  p.raw_max = hi < 0.0 ? 0u : hi >= 65535.0 ? 65535u : static_cast<uint32_t>(hi);
  if (hi < 0.0) p.raw_min = 1, p.raw_max = 0;  // empty range
}

// The integer threshold T for which "mask > T" equals "double(mask) / full_scale > fraction" for every
// mask value 0..full_scale: the test APC's upstream code runs (double(mask)/65535 > thresh), made
// exact in integers so the per-pixel rule never divides. fraction must be in [0, 1]; 1 keeps
// nothing (T = full_scale). Host only.
inline uint32_t fraction_threshold(double fraction, uint32_t full_scale) {
  if (!(fraction >= 0.0 && fraction <= 1.0)) throw std::invalid_argument("threshold fraction must be in [0, 1]");
  const double full = static_cast<double>(full_scale);
  const auto keeps = [&](uint32_t m) { return static_cast<double>(m) / full > fraction; };
  // Start at floor(fraction * full) and step to the exact boundary (the product may round either way).
  const double start = std::floor(fraction * full);
  uint32_t t = start <= 0.0 ? 0u : start >= full ? full_scale : static_cast<uint32_t>(start);
  while (t < full_scale && !keeps(t + 1)) ++t;
  while (t > 0 && keeps(t)) --t;
  return t;
}

// mask.threshold_fraction: exact thresholds for 8-bit (full scale 255) and 16-bit (65535) masks.
inline void set_threshold_fraction(MaskParams& p, double fraction) {
  p.threshold_by_type = true;
  p.threshold_u8 = fraction_threshold(fraction, 255u);
  p.threshold_u16 = fraction_threshold(fraction, 65535u);
}

// The mask test with the threshold already chosen: label set when labels are given, else
// mask > threshold; invert last.
DM_HD inline bool mask_keeps(uint32_t m, uint32_t threshold, const MaskParams& p) {
  bool keep;
  if (p.label_count > 0) {
    keep = false;
    for (int i = 0; i < p.label_count; ++i) keep = keep || (m == p.labels[i]);
  } else {
    keep = m > threshold;
  }
  return keep != p.invert;
}

// The mask test of an 8- or 16-bit mask value (the type picks the fraction threshold).
DM_HD inline bool mask_keeps(uint8_t m, const MaskParams& p) {
  return mask_keeps(m, p.threshold_by_type ? p.threshold_u8 : p.threshold, p);
}
DM_HD inline bool mask_keeps(uint16_t m, const MaskParams& p) {
  return mask_keeps(m, p.threshold_by_type ? p.threshold_u16 : p.threshold, p);
}

// True for finite x. Written with comparisons only so host and device agree without <cmath>:
// NaN fails both comparisons, +-inf fails one.
DM_HD inline bool finite_f(float x) { return x >= -3.402823466e+38f && x <= 3.402823466e+38f; }

// The stored 16-bit word decoded into integer units of p.scale; 0 means "no measurement" (a stored
// 0, or one of the invalid markers, which are compared before decoding). APC rotates each word left
// by 3 bits when writing, so decoding rotates right: (w >> 3) | (w << 13) on 16 bits. Registration
// and any other consumer of raw depth call this, so the encoding has one definition.
DM_HD inline uint16_t decode_depth_raw(uint16_t stored, const MaskParams& p) {
  bool marker = stored == 0;
  for (int i = 0; i < p.invalid_raw_count; ++i) marker = marker || stored == p.invalid_raw[i];
  if (marker) return 0;
  if (!p.apc_encoding) return stored;
  const uint32_t w = stored;
  return static_cast<uint16_t>(((w >> 3) | (w << 13)) & 0xFFFFu);
}

// Depth in metres from a *decoded* 16-bit value.
DM_HD inline float depth_metres(uint16_t decoded, const MaskParams& p) { return static_cast<float>(decoded) * p.scale; }
// Depth already in metres (float input): passed through.
DM_HD inline float depth_metres(float metres, const MaskParams&) { return metres; }

// Validity and range of a *decoded* sample: 16-bit needs value > 0 and in [raw_min, raw_max];
// float needs finite, > 0 and in [min_m, max_m].
DM_HD inline bool depth_in_range(uint16_t decoded, const MaskParams& p) {
  return decoded > 0 && decoded >= p.raw_min && decoded <= p.raw_max;
}
DM_HD inline bool depth_in_range(float metres, const MaskParams& p) {
  return finite_f(metres) && metres > 0.0f && metres >= p.min_m && metres <= p.max_m;
}

// The common case: a threshold test, no labels, no invalid-raw markers, no APC encoding. Loops check
// it once per call and then run on common_params(p): the same rule with those fields as constants,
// so the compiler drops their loops and branches (the results cannot differ: the values are equal).
DM_HD inline bool is_common_case(const MaskParams& p) {
  return p.label_count == 0 && p.invalid_raw_count == 0 && !p.apc_encoding;
}
DM_HD inline MaskParams common_params(const MaskParams& p) {
  MaskParams q = p;
  q.label_count = 0;
  q.invalid_raw_count = 0;
  q.apc_encoding = false;
  return q;
}

// One output pixel once the mask test is decided (by the pixel's own mask value, or by its erode
// window): the stored depth sample is decoded, range-checked and scaled.
DM_HD inline float depth_pixel(uint16_t stored, bool mask_keeps_pixel, const MaskParams& p) {
  const uint16_t v = decode_depth_raw(stored, p);
  return (mask_keeps_pixel && depth_in_range(v, p)) ? depth_metres(v, p) : p.invalid;
}
DM_HD inline float depth_pixel(float metres, bool mask_keeps_pixel, const MaskParams& p) {
  return (mask_keeps_pixel && depth_in_range(metres, p)) ? metres : p.invalid;
}

// One output pixel without erode. DepthT is uint16_t (stored words) or float (metres); MaskT is
// uint8_t or uint16_t.
template <class DepthT, class MaskT>
DM_HD inline float mask_pixel(DepthT depth, MaskT mask, const MaskParams& p) {
  return depth_pixel(depth, mask_keeps(mask, p), p);
}

// Erode, in two separable passes over a plane of mask-test results (1 = passes, 0 = fails) that
// holds the image plus an N-pixel border of 1s. Both loops build that plane (the GPU per 32x32 tile
// in shared memory, the CPU per band of rows) and decide each pixel with these two helpers, so the
// square-window AND has one definition.
//   erode_run(first, n, stride): AND of the 2n+1 results first[0], first[stride], ... first[2n*stride].
// Horizontal pass: h(x, y) = erode_run(&tests(x - n, y), n, 1); vertical pass on h with the row stride
// gives the (2n+1)x(2n+1) window of pixel (x, y).
DM_HD inline uint8_t erode_run(const uint8_t* first, int n, int stride) {
  uint8_t all = 1;
  // k * stride stays inside one tile's or band's plane (n <= kMaxErode), far from int's range.
  for (int k = 0; k <= 2 * n; ++k) {
    // NOLINTNEXTLINE(bugprone-implicit-widening-of-multiplication-result)
    all = static_cast<uint8_t>(all & first[k * stride]);
  }
  return all;
}

}  // namespace depthmask
