// The per-pixel masking rule, shared by the CUDA kernel and the CPU loop.
//
// This header is the single definition of what one output pixel is. Both loops include it and call
// the same inline functions, so CPU and GPU results are bit-identical by construction: the rule only
// converts and multiplies (raw * scale), compares and selects — there is no a*b+c that nvcc could
// contract into an FMA while g++ does not. Keep it that way; if the rule ever adds an offset, write
// fmaf() explicitly.
//
// Safe to include from plain C++ (no CUDA headers needed).
#pragma once

#include <cmath>
#include <cstddef>
#include <cstdint>
#include <type_traits>

#if defined(__CUDACC__)
#define DM_HD __host__ __device__
#else
#define DM_HD
#endif

namespace depthmask {

// Most labels a `mask.labels` list may hold. Fixed so the parameter block is a plain value that can be
// passed to a kernel by value (no device allocation per frame).
inline constexpr int kMaxLabels = 64;

// Everything the rule needs besides the two input pixels. Trivially copyable; passed by value.
// Set the scale and range with set_depth_range(), which also derives the raw-unit bounds.
struct MaskParams {
  float scale = 0.001f;     // metres per raw unit, for 16-bit depth (ignored for float depth)
  float min_m = 0.0f;       // keep float depth in [min_m, max_m], inclusive
  float max_m = 10.0f;
  // The same range in raw units for 16-bit depth, inclusive. Comparing integers keeps the bounds
  // exact: float(1500) * 0.001f is 1.50000012f, which a float compare would drop at max 1.5 m.
  uint32_t raw_min = 0;
  uint32_t raw_max = 10000;
  float invalid = 0.0f;     // written where the pixel is not kept (may be NaN)
  uint32_t threshold = 0;   // keep where mask > threshold (when no labels are given)
  int32_t label_count = 0;  // keep where mask is one of labels[0..label_count)
  uint32_t labels[kMaxLabels] = {};
  bool invert = false;      // applied to the mask test, last
};

// A 2-D image view: pointer, row step in bytes, rows, cols. Non-owning, trivially copyable; works
// for host, mapped and device memory alike, and for ROIs of larger (pitched) images.
template <class T>
struct ImageView {
  T* data = nullptr;
  size_t step = 0;  // bytes between the starts of consecutive rows
  int rows = 0;
  int cols = 0;

  DM_HD T* row(int y) const {
    return reinterpret_cast<T*>(reinterpret_cast<unsigned char*>(const_cast<std::remove_cv_t<T>*>(data)) +
                                static_cast<size_t>(y) * step);
  }
  DM_HD bool empty() const { return data == nullptr || rows <= 0 || cols <= 0; }
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

// The mask test: label set when labels are given, else threshold; invert last.
DM_HD inline bool mask_keeps(uint32_t m, const MaskParams& p) {
  bool keep;
  if (p.label_count > 0) {
    keep = false;
    for (int i = 0; i < p.label_count; ++i) keep = keep || (m == p.labels[i]);
  } else {
    keep = m > p.threshold;
  }
  return keep != p.invert;
}

// True for finite x. Written with comparisons only so host and device agree without <cmath>:
// NaN fails both comparisons, +-inf fails one.
DM_HD inline bool finite_f(float x) { return x >= -3.402823466e+38f && x <= 3.402823466e+38f; }

// Depth in metres from a raw 16-bit value; 0 means "no measurement" and stays 0.
DM_HD inline float depth_metres(uint16_t raw, const MaskParams& p) { return static_cast<float>(raw) * p.scale; }
// Depth already in metres (float input): passed through.
DM_HD inline float depth_metres(float metres, const MaskParams&) { return metres; }

// Validity and range of the *input* sample: 16-bit needs raw > 0 and raw in [raw_min, raw_max];
// float needs finite, > 0 and in [min_m, max_m].
DM_HD inline bool depth_in_range(uint16_t raw, const MaskParams& p) {
  return raw > 0 && raw >= p.raw_min && raw <= p.raw_max;
}
DM_HD inline bool depth_in_range(float metres, const MaskParams& p) {
  return finite_f(metres) && metres > 0.0f && metres >= p.min_m && metres <= p.max_m;
}

// One output pixel. DepthT is uint16_t (raw units) or float (metres); MaskT is uint8_t or uint16_t.
template <class DepthT, class MaskT>
DM_HD inline float mask_pixel(DepthT depth, MaskT mask, const MaskParams& p) {
  const bool keep = depth_in_range(depth, p) && mask_keeps(static_cast<uint32_t>(mask), p);
  return keep ? depth_metres(depth, p) : p.invalid;
}

}  // namespace depthmask
