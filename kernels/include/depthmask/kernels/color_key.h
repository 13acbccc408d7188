// The colour key (live.mask.color_key): an HSV range on the 8-bit BGR colour image, AND-ed with the
// frame's mask test. One per-pixel rule shared by the CUDA kernel and the CPU loop, in integers only,
// so CPU and GPU agree bit for bit by construction (integer division is exact on both sides).
//
// HSV is OpenCV's 8-bit convention (cv::cvtColor with COLOR_BGR2HSV on CV_8UC3): H 0..179 (degrees
// halved), S and V 0..255, from B, G, R 0..255:
//   V = max(B, G, R), d = V - min(B, G, R)
//   S = (d * round(255 * 4096 / V) + 2048) >> 12            (0 when V = 0)
//   n = G - B (V = R), B - R + 2d (V = G), R - G + 4d (V = B) (the first of R, G, B equal to V wins)
//   H = (n * round(30 * 4096 / d) + 2048) >> 12, plus 180 when negative   (0 when d = 0)
// i.e. S ~ 255 d / V and H ~ 30 n / d rounded through 12-bit fixed-point reciprocals: that rounding is
// OpenCV's, so a range read off cv2.cvtColor(img, cv2.COLOR_BGR2HSV) (or tuned with cv2.inRange)
// selects exactly the same pixels. tests/unit/test_color_key.cpp checks every one of the 2^24 colours
// against the cvtColor of the OpenCV the tests are built with (4.6 here: no difference).
// Greys (d = 0) have H = 0 and S = 0: a key with s_min > 0 never keeps them.
//
// The key: H in [h_min, h_max] — a range that wraps through 0 when h_min > h_max (red: [170, 10]) —
// and S in [s_min, s_max] and V in [v_min, v_max], all inclusive, is "inside". keep_inside keeps
// inside pixels (select an object by its colour); otherwise outside pixels are kept (remove a green
// screen).
//
// Safe to include from plain C++ (no CUDA headers needed).
#pragma once

#include <cstddef>
#include <cstdint>

#include "depthmask/kernels/mask_kernel.h"
#include "depthmask/kernels/mask_rule.h"

struct CUstream_st;

namespace depthmask {

// The largest H value (OpenCV's 8-bit hue is degrees / 2).
inline constexpr int kHueMax = 179;

// Trivially copyable; passed to the kernel by value. validate(ColorKey) checks the bounds.
struct ColorKey {
  uint8_t h_min = 0, h_max = kHueMax;  // h_min > h_max: the range wraps (h >= h_min or h <= h_max)
  uint8_t s_min = 0, s_max = 255;      // s_min <= s_max
  uint8_t v_min = 0, v_max = 255;      // v_min <= v_max
  bool keep_inside = true;             // false: keep the pixels outside the range
};

struct Hsv8 {
  uint8_t h = 0, s = 0, v = 0;
};

// One BGR pixel in HSV, by the definition above. Every intermediate fits an int32 (the largest is
// 5 * 255 * 30720 ~ 3.9e7).
DM_HD inline Hsv8 hsv_from_bgr(uint8_t b8, uint8_t g8, uint8_t r8) {
  const int b = b8, g = g8, r = r8;
  int v = b > g ? b : g;
  v = v > r ? v : r;
  int lo = b < g ? b : g;
  lo = lo < r ? lo : r;
  const int d = v - lo;
  Hsv8 out;
  out.v = static_cast<uint8_t>(v);
  if (v == 0) return out;
  // round(255 * 4096 / v) and round(30 * 4096 / d): the exact quotients are never halfway (the
  // numerators' factors of two exceed any divisor's), so rounding half up is the only rounding.
  const int s_recip = (2 * 255 * 4096 + v) / (2 * v);
  out.s = static_cast<uint8_t>((d * s_recip + 2048) >> 12);
  if (d == 0) return out;
  const int n = v == r ? g - b : v == g ? b - r + 2 * d : r - g + 4 * d;
  const int h_recip = (2 * 30 * 4096 + d) / (2 * d);
  // n may be negative (V = R, G < B): >> on a negative int is an arithmetic shift in C++20 and on
  // every compiler depthmask builds with (g++, nvcc); written as a floor division to not rely on it.
  const int num = n * h_recip + 2048;
  int h = num >= 0 ? num >> 12 : -((-num + 4095) >> 12);
  if (h < 0) h += 180;
  out.h = static_cast<uint8_t>(h);
  return out;
}

// True when the HSV value lies in the key's range (before keep_inside is applied).
DM_HD inline bool hsv_inside(Hsv8 c, const ColorKey& k) {
  const bool h_in = k.h_min <= k.h_max ? (c.h >= k.h_min && c.h <= k.h_max) : (c.h >= k.h_min || c.h <= k.h_max);
  return h_in && c.s >= k.s_min && c.s <= k.s_max && c.v >= k.v_min && c.v <= k.v_max;
}

// The key's verdict on one BGR pixel.
DM_HD inline bool color_key_keeps(uint8_t b, uint8_t g, uint8_t r, const ColorKey& k) {
  return hsv_inside(hsv_from_bgr(b, g, r), k) == k.keep_inside;
}

// One pixel of the key pass, a plane of test results (mask_rule.h): kTestKeep where the mask passes
// `p`'s mask test and the colour passes the key, kTestLiveDrop where the mask passes and the key drops
// it (or where `mask` is itself a tests plane that says so: live.mask.static before the key), else 0.
// Masking that plane with union_mask_params(p) keeps a pixel only when both keep it.
template <class MaskT>
DM_HD inline uint8_t color_key_test(MaskT mask, const uint8_t* bgr, const MaskParams& p, const ColorKey& k) {
  if (!mask_keeps(mask, p)) return (p.tests_plane && mask == kTestLiveDrop) ? kTestLiveDrop : 0;
  return color_key_keeps(bgr[0], bgr[1], bgr[2], k) ? kTestKeep : kTestLiveDrop;
}

// One frame of the key pass (planes: image_view.h). mask (8- or 16-bit) and color (3 interleaved
// bytes B, G, R per pixel, CV_8UC3) are read, out (8-bit) is written; all rows x cols. Steps are in
// bytes. For the GPU launcher the pointers must be device-accessible.
struct ColorKeyJob {
  Plane<const void> mask;
  MaskType mask_type = MaskType::U8;
  Plane<const uint8_t> color;
  Plane<uint8_t> out;
  int rows = 0;
  int cols = 0;
};

// Throws std::invalid_argument naming the bound that is wrong (h beyond 179, a min above its max for
// s or v).
void validate(const ColorKey& key);
// Throws std::invalid_argument describing the first problem (null pointer, step shorter than a row,
// negative size). An empty job does nothing.
void validate(const ColorKeyJob& job);

// The CPU loop (rows over cores with oneTBB).
void color_key_cpu(const ColorKeyJob& job, const MaskParams& params, const ColorKey& key);

// Enqueues the key pass on `stream` and checks the launch; never synchronises. Throws CudaError on a
// launch failure, std::invalid_argument on a bad job or key, PlatformError without CUDA kernels.
void launch_color_key(const ColorKeyJob& job, const MaskParams& params, const ColorKey& key, CUstream_st* stream);

}  // namespace depthmask
