// Registration of depth onto the mask's pixel grid, before masking: the per-pixel arithmetic shared
// by the CUDA kernels and the CPU loops, and their launchers.
//
// Two operations, both writing float metres with 0 meaning "no depth" (the mask rule then treats 0 as
// invalid and writes its own invalid value):
//   resample  — same camera, another resolution: each target pixel takes the depth pixel its centre
//               maps to through the two intrinsics (nearest neighbour).
//   reproject — another camera: each valid depth pixel is backprojected with the depth K, moved by the
//               depth-to-color extrinsic, projected with the color K and splatted over the target
//               pixels whose centres lie inside the bounding box of its four projected corners
//               (u±0.5, v±0.5), as librealsense's align does, so that a longer target focal length
//               leaves no holes. Where several depth pixels land on one target pixel the nearest
//               surface (smallest z in the color frame) wins. Optionally the depth camera's lens
//               distortion is undone when deprojecting (depth_ray(): librealsense's inverse
//               Brown-Conrady model, which its align applies to SR300/F200 depth).
//
// Input depth is raw 16-bit (decoded to metres on the fly by decode_depth_m(), the one place that
// knows the encoding) or float metres; either way invalid samples (raw 0, float <= 0, NaN, inf) are
// skipped. Decoding while reading saves a pass and a buffer over converting first.
//
// Exact CPU/GPU equality: every parameter is a float computed once on the host (double precision,
// then rounded), and the per-pixel functions use only correctly rounded operations whose result
// cannot depend on the compiler: fmaf() for every a*b+c (nvcc would otherwise contract a*b+c into an
// FMA and g++ would not), and mul_rn()/div_rn(), which are __fmul_rn/__fdiv_rn on the device (never
// contracted or approximated, whatever --fmad / --use_fast_math say) and plain IEEE operations on the
// host. The kernels are also built with --fmad=false and the CPU loop with -ffp-contract=off.
//
// Plain C++ header (no CUDA headers): streams are passed as the runtime's opaque CUstream_st*.
#pragma once

#include <cmath>
#include <cstddef>
#include <cstdint>

#include "depthmask/kernels/mask_kernel.h"
#include "depthmask/kernels/mask_rule.h"

struct CUstream_st;

namespace depthmask {

// ---------------------------------------------------------------------------------------------------
// Correctly rounded float operations, identical on host and device.

DM_HD inline float mul_rn(float a, float b) {
#if defined(__CUDA_ARCH__)
  return __fmul_rn(a, b);
#else
  return a * b;
#endif
}

DM_HD inline float div_rn(float a, float b) {
#if defined(__CUDA_ARCH__)
  return __fdiv_rn(a, b);
#else
  return a / b;
#endif
}

// ---------------------------------------------------------------------------------------------------
// Depth decoding.

// How raw 16-bit depth becomes metres: the mask parameters themselves (scale, encoding, invalid
// markers), built by depth_decode(const MaskParams&) so that the encoding has one source of truth.
struct DepthDecode {
  MaskParams params;
};

// Plain 16-bit depth at `scale` metres per unit (tests, callers without mask parameters).
inline DepthDecode decode_with_scale(float scale) {
  DepthDecode d;
  d.params.scale = scale;
  return d;
}

// THE decode of a raw 16-bit sample to metres for registration; 0 means no measurement. The stored
// word goes through the mask rule's decode_depth_raw (APC rotation, invalid markers) first.
DM_HD inline float decode_depth_m(uint16_t raw, const DepthDecode& d) {
  return mul_rn(static_cast<float>(decode_depth_raw(raw, d.params)), d.params.scale);
}
// Float depth is already metres; anything that is not a positive finite number is no depth.
DM_HD inline float decode_depth_m(float metres, const DepthDecode&) {
  return (finite_f(metres) && metres > 0.0f) ? metres : 0.0f;
}

// ---------------------------------------------------------------------------------------------------
// Resample: target pixel (x, y) reads source pixel (floor(ax*x + bx), floor(ay*y + by)).

// The affine map from target pixel to source pixel, with the +0.5 of round-to-nearest folded into
// bx/by. Build it with resample_map() or resample_map_sizes().
struct ResampleMap {
  float ax = 1.0f, bx = 0.5f;
  float ay = 1.0f, by = 0.5f;
};

// Nearest source pixel index along one axis for target index t; -1 when it falls outside [0, n).
// Ties (a centre exactly between two source pixels) go to the larger index.
DM_HD inline int resample_index(int t, float a, float b, int n) {
  const float s = floorf(fmaf(a, static_cast<float>(t), b));
  return (s >= 0.0f && s < static_cast<float>(n)) ? static_cast<int>(s) : -1;
}

// One target pixel of the resampled depth (metres, 0 for no depth).
template <class DepthT>
DM_HD inline float resample_pixel(const ImageView<const DepthT>& src, int x, int y, const ResampleMap& m,
                                  const DepthDecode& d) {
  const int sx = resample_index(x, m.ax, m.bx, src.cols);
  const int sy = resample_index(y, m.ay, m.by, src.rows);
  if (sx < 0 || sy < 0) return 0.0f;
  return decode_depth_m(src.row(sy)[sx], d);
}

// ---------------------------------------------------------------------------------------------------
// Reproject.

// How a depth pixel's pinhole ray is corrected for the depth camera's lens before it is scaled by z.
enum class DepthDistortion : int {
  None = 0,
  // librealsense's RS_DISTORTION_INVERSE_BROWN_CONRADY, coefficients (k1, k2, p1, p2, k3): the pinhole
  // coordinates (x, y) = ((u - cx) / fx, (v - cy) / fy) of a pixel become the undistorted ray
  //   r2 = x^2 + y^2,  f = 1 + k1 r2 + k2 r2^2 + k3 r2^3
  //   x' = x f + 2 p1 x y + p2 (r2 + 2 x^2)
  //   y' = y f + 2 p2 x y + p1 (r2 + 2 y^2)
  // (the coefficients undistort the image directly, so deprojection needs no iteration).
  InverseBrownConrady = 1,
};

// Everything the reprojection needs, as floats (computed in double on the host, then rounded once).
// Build it with reproject_params().
struct ReprojectParams {
  // Depth camera, inverted: a depth pixel coordinate p maps to the normalised ray (p*ifx + ncx, ...).
  float ifx = 1.0f, ncx = 0.0f, ify = 1.0f, ncy = 0.0f;
  // Depth camera lens: the model and its coefficients k1, k2, p1, p2, k3 (unused with None).
  DepthDistortion distortion = DepthDistortion::None;
  float k1 = 0.0f, k2 = 0.0f, p1 = 0.0f, p2 = 0.0f, k3 = 0.0f;
  // Depth-to-color rigid transform, row-major rotation and translation in metres.
  float r[9] = {1, 0, 0, 0, 1, 0, 0, 0, 1};
  float t[3] = {0, 0, 0};
  // Color (target) camera.
  float fx = 1.0f, fy = 1.0f, cx = 0.0f, cy = 0.0f;
  // A depth pixel whose footprint spans more than this many target pixels along an axis is dropped:
  // such footprints only come from points grazing the target camera's plane, and the bound keeps a
  // thread's work bounded. Ample for real upscaling (a 4x longer focal length spans ~4 pixels).
  int max_footprint = 32;
};

// A point in the target (color) camera: pixel coordinates and z.
struct Projected {
  float x, y, z;
};

// The normalised ray (x/z, y/z) of a point on a depth camera ray.
struct Ray {
  float x, y;
};

// The ray through depth pixel coordinate (px, py): the pinhole ray, corrected by the depth camera's
// distortion model (see DepthDistortion). The polynomial is evaluated in Horner form with fmaf:
// f = 1 + r2 (k1 + r2 (k2 + r2 k3)).
DM_HD inline Ray depth_ray(float px, float py, const ReprojectParams& p) {
  const float x = fmaf(px, p.ifx, p.ncx);
  const float y = fmaf(py, p.ify, p.ncy);
  if (p.distortion != DepthDistortion::InverseBrownConrady) return {x, y};
  const float r2 = fmaf(x, x, mul_rn(y, y));
  const float f = fmaf(r2, fmaf(r2, fmaf(r2, p.k3, p.k2), p.k1), 1.0f);
  const float xy2 = mul_rn(2.0f, mul_rn(x, y));  // 2 x y (the doubling is exact)
  const float ux = fmaf(x, f, fmaf(p.p1, xy2, mul_rn(p.p2, fmaf(mul_rn(2.0f, x), x, r2))));
  const float uy = fmaf(y, f, fmaf(p.p2, xy2, mul_rn(p.p1, fmaf(mul_rn(2.0f, y), y, r2))));
  return {ux, uy};
}

// Depth pixel coordinate (px, py) at depth z (metres, depth camera frame) in the color camera.
DM_HD inline Projected reproject_point(float px, float py, float z, const ReprojectParams& p) {
  const Ray ray = depth_ray(px, py, p);
  const float X = mul_rn(ray.x, z);
  const float Y = mul_rn(ray.y, z);
  const float Xc = fmaf(p.r[0], X, fmaf(p.r[1], Y, fmaf(p.r[2], z, p.t[0])));
  const float Yc = fmaf(p.r[3], X, fmaf(p.r[4], Y, fmaf(p.r[5], z, p.t[1])));
  const float Zc = fmaf(p.r[6], X, fmaf(p.r[7], Y, fmaf(p.r[8], z, p.t[2])));
  return {fmaf(p.fx, div_rn(Xc, Zc), p.cx), fmaf(p.fy, div_rn(Yc, Zc), p.cy), Zc};
}

// Where one depth pixel lands: the inclusive range of target pixels [x0, x1] x [y0, y1] (already
// clipped to the target) and the depth to write there. `valid` is false when there is nothing to
// write (no depth, behind the camera, outside the target, footprint degenerate or too large).
struct Splat {
  bool valid;
  int x0, x1, y0, y1;
  float z;
};

DM_HD inline Splat reproject_splat(int u, int v, float z, int target_cols, int target_rows, const ReprojectParams& p) {
  Splat s{false, 0, -1, 0, -1, 0.0f};
  if (!(z > 0.0f) || !finite_f(z)) return s;
  const float fu = static_cast<float>(u), fv = static_cast<float>(v);
  // The pixel's own z in the color frame is what the z-buffer compares and what is written.
  const Projected c = reproject_point(fu, fv, z, p);
  if (!(c.z > 0.0f) || !finite_f(c.z)) return s;
  float xmin = 0.0f, xmax = 0.0f, ymin = 0.0f, ymax = 0.0f;
  for (int k = 0; k < 4; ++k) {
    const float du = (k & 1) ? 0.5f : -0.5f;
    const float dv = (k & 2) ? 0.5f : -0.5f;
    const Projected q = reproject_point(fu + du, fv + dv, z, p);
    // A corner behind the camera (or a non-finite one) makes the footprint meaningless.
    if (!(q.z > 0.0f) || !finite_f(q.x) || !finite_f(q.y)) return s;
    if (k == 0) {
      xmin = xmax = q.x;
      ymin = ymax = q.y;
    } else {
      xmin = fminf(xmin, q.x), xmax = fmaxf(xmax, q.x);
      ymin = fminf(ymin, q.y), ymax = fmaxf(ymax, q.y);
    }
  }
  // Target pixel centres are at integer coordinates: those inside [min, max].
  const float lox = fmaxf(ceilf(xmin), 0.0f), hix = fminf(floorf(xmax), static_cast<float>(target_cols - 1));
  const float loy = fmaxf(ceilf(ymin), 0.0f), hiy = fminf(floorf(ymax), static_cast<float>(target_rows - 1));
  if (lox > hix || loy > hiy) return s;
  const float span = static_cast<float>(p.max_footprint);
  if (xmax - xmin > span || ymax - ymin > span) return s;
  s.valid = true;
  s.x0 = static_cast<int>(lox), s.x1 = static_cast<int>(hix);
  s.y0 = static_cast<int>(loy), s.y1 = static_cast<int>(hiy);
  s.z = c.z;
  return s;
}

// The z-buffer works on the float's bit pattern as an unsigned integer: for positive floats (and +inf)
// the integer order is the float order, so an integer atomicMin is a float min. +inf marks "nothing yet".
inline constexpr uint32_t kZBufferEmpty = 0x7f800000u;

// ---------------------------------------------------------------------------------------------------
// Jobs and launchers.

// One registration: a source depth image (any size) and a float target on the mask grid (planes:
// image_view.h). Steps are in bytes (ROIs and pitched images are fine). For the GPU launchers the
// pointers must be device-accessible (device, mapped or managed memory); the target must not overlap
// the source.
struct RegisterJob {
  Plane<const void> depth;
  DepthType depth_type = DepthType::U16;
  int depth_rows = 0;
  int depth_cols = 0;
  Plane<float> out;
  int out_rows = 0;
  int out_cols = 0;
};

// Throws std::invalid_argument describing the first problem (null or misaligned pointer, step shorter
// than a row, negative size, target overlapping the source). An empty target does nothing; an empty
// source gives an all-zero target.
void validate(const RegisterJob& job);

// Host-side builders. Throw std::invalid_argument for non-positive or non-finite focal lengths, sizes
// or a non-finite extrinsic.
// Intrinsics-aware: source and target camera share the optical centre and orientation.
ResampleMap resample_map(double src_fx, double src_fy, double src_cx, double src_cy, double dst_fx, double dst_fy,
                         double dst_cx, double dst_cy);
// Without intrinsics: both images cover the same field of view (pixel edges aligned).
ResampleMap resample_map_sizes(int src_cols, int src_rows, int dst_cols, int dst_rows);
// depth K (fx, fy, cx, cy), row-major 4x4 depth-to-color transform (metres), color K; optionally the
// depth camera's inverse Brown-Conrady coefficients (k1, k2, p1, p2, k3; nullptr: no distortion),
// which must be finite.
ReprojectParams reproject_params(const double depth_k[4], const double depth_to_color[16], const double color_k[4],
                                 const double depth_inverse_brown_conrady[5] = nullptr);
// The decode parameters the mask rule's parameters imply (the single mapping from MaskParams).
DepthDecode depth_decode(const MaskParams& params);

// CPU loops (rows spread over cores with oneTBB). Results equal the GPU's exactly.
void resample_cpu(const RegisterJob& job, const ResampleMap& map, const DepthDecode& decode);
void reproject_cpu(const RegisterJob& job, const ReprojectParams& params, const DepthDecode& decode);

// Enqueue on `stream` and check each launch (cudaGetLastError); never synchronise, never allocate.
// reproject runs three kernels (clear the z-buffer, splat, turn +inf into 0). Throw CudaError on a
// launch failure, std::invalid_argument on a bad job, PlatformError in a build without CUDA kernels.
void launch_resample(const RegisterJob& job, const ResampleMap& map, const DepthDecode& decode, CUstream_st* stream);
void launch_reproject(const RegisterJob& job, const ReprojectParams& params, const DepthDecode& decode,
                      CUstream_st* stream);

}  // namespace depthmask
