// Registration on the CPU: the per-pixel functions of register.h in loops (rows over cores with
// oneTBB), plus the host-side validation and parameter builders shared with the GPU launchers.
#include <tbb/blocked_range.h>
#include <tbb/parallel_for.h>

#include <cmath>
#include <cstring>
#include <functional>
#include <limits>
#include <stdexcept>
#include <string>

#include "depthmask/kernels/register.h"

namespace depthmask {

namespace {

bool positive_finite(double v) { return std::isfinite(v) && v > 0.0; }

void check_k(const char* which, double fx, double fy, double cx, double cy) {
  if (!positive_finite(fx) || !positive_finite(fy) || !std::isfinite(cx) || !std::isfinite(cy))
    throw std::invalid_argument(std::string("registration: ") + which +
                                " intrinsics need positive finite fx, fy and finite cx, cy (got fx " +
                                std::to_string(fx) + ", fy " + std::to_string(fy) + ", cx " + std::to_string(cx) +
                                ", cy " + std::to_string(cy) + ")");
}

float to_float_checked(double v, const char* what) {
  const auto f = static_cast<float>(v);
  if (!std::isfinite(f)) throw std::invalid_argument(std::string("registration: ") + what + " does not fit a float");
  return f;
}

template <class DepthT>
ImageView<const DepthT> source_view(const RegisterJob& job) {
  return job.depth.view<const DepthT>(job.depth_rows, job.depth_cols);
}

ImageView<float> target_view(const RegisterJob& job) { return job.out.view(job.out_rows, job.out_cols); }

// Grain of 16 rows, as the mask loop: a 640-wide row is too little work for a task of its own.
template <class F>
void for_rows(int rows, F&& f) {
  tbb::parallel_for(tbb::blocked_range<int>(0, rows, 16), [&](const tbb::blocked_range<int>& r) {
    for (int y = r.begin(); y != r.end(); ++y) f(y);
  });
}

template <class DepthT>
void resample_rows(const RegisterJob& job, const ResampleMap& m, const DepthDecode& d) {
  const auto src = source_view<DepthT>(job);
  const auto out = target_view(job);
  for_rows(out.rows, [&](int y) {
    float* o = out.row(y);
    for (int x = 0; x < out.cols; ++x) o[x] = resample_pixel(src, x, y, m, d);
  });
}

// The z-buffer's atomic min. Min is commutative and associative, so the result does not depend on the
// order threads arrive in: the parallel loop is as deterministic as a serial one. The compare is a
// float compare, which for positive values (the only ones written) is the GPU's unsigned compare.
void atomic_min_float(float* p, float v) {
  float cur;
  __atomic_load(p, &cur, __ATOMIC_RELAXED);
  while (v < cur && !__atomic_compare_exchange(p, &cur, &v, true, __ATOMIC_RELAXED, __ATOMIC_RELAXED)) {
  }
}

template <class DepthT>
void reproject_rows(const RegisterJob& job, const ReprojectParams& p, const DepthDecode& d) {
  const auto src = source_view<DepthT>(job);
  const auto out = target_view(job);
  float empty;
  std::memcpy(&empty, &kZBufferEmpty, sizeof empty);
  for_rows(out.rows, [&](int y) {
    float* o = out.row(y);
    for (int x = 0; x < out.cols; ++x) o[x] = empty;
  });
  for_rows(src.rows, [&](int v) {
    const DepthT* row = src.row(v);
    for (int u = 0; u < src.cols; ++u) {
      const Splat s = reproject_splat(u, v, decode_depth_m(row[u], d), out.cols, out.rows, p);
      for (int y = s.y0; y <= s.y1; ++y) {
        float* o = out.row(y);
        for (int x = s.x0; x <= s.x1; ++x) atomic_min_float(o + x, s.z);
      }
    }
  });
  for_rows(out.rows, [&](int y) {
    float* o = out.row(y);
    for (int x = 0; x < out.cols; ++x)
      if (!(o[x] < empty)) o[x] = 0.0f;
  });
}

}  // namespace

void validate(const RegisterJob& job) {
  if (job.depth_rows < 0 || job.depth_cols < 0 || job.out_rows < 0 || job.out_cols < 0)
    throw std::invalid_argument("registration job: negative size (depth " + std::to_string(job.depth_cols) + "x" +
                                std::to_string(job.depth_rows) + ", target " + std::to_string(job.out_cols) + "x" +
                                std::to_string(job.out_rows) + ")");
  if (job.out_rows == 0 || job.out_cols == 0) return;
  check_plane("registration job", "target", job.out, sizeof(float), sizeof(float), job.out_cols);
  if (job.depth_rows == 0 || job.depth_cols == 0) return;
  const size_t depth_bytes = pixel_bytes(job.depth_type);
  check_plane("registration job", "depth", job.depth, depth_bytes, depth_bytes, job.depth_cols);
  // The target is written while the source is read (by other threads): they must not overlap.
  const auto* d0 = static_cast<const unsigned char*>(job.depth.data);
  const auto* d1 = d0 + (static_cast<size_t>(job.depth_rows) - 1) * job.depth.step +
                   static_cast<size_t>(job.depth_cols) * depth_bytes;
  const auto* o0 = reinterpret_cast<const unsigned char*>(job.out.data);
  const auto* o1 =
      o0 + (static_cast<size_t>(job.out_rows) - 1) * job.out.step + static_cast<size_t>(job.out_cols) * sizeof(float);
  if (std::less<const unsigned char*>()(d0, o1) && std::less<const unsigned char*>()(o0, d1))
    throw std::invalid_argument("registration job: the target overlaps the depth source");
}

ResampleMap resample_map(double src_fx, double src_fy, double src_cx, double src_cy, double dst_fx, double dst_fy,
                         double dst_cx, double dst_cy) {
  check_k("depth (source)", src_fx, src_fy, src_cx, src_cy);
  check_k("mask (target)", dst_fx, dst_fy, dst_cx, dst_cy);
  // Same ray: (x - dst_cx) / dst_fx = (u - src_cx) / src_fx, so u = a x + (src_cx - a dst_cx); +0.5 rounds.
  const double ax = src_fx / dst_fx, ay = src_fy / dst_fy;
  ResampleMap m;
  m.ax = to_float_checked(ax, "the resampling scale");
  m.ay = to_float_checked(ay, "the resampling scale");
  m.bx = to_float_checked(src_cx - ax * dst_cx + 0.5, "the resampling offset");
  m.by = to_float_checked(src_cy - ay * dst_cy + 0.5, "the resampling offset");
  return m;
}

ResampleMap resample_map_sizes(int src_cols, int src_rows, int dst_cols, int dst_rows) {
  if (src_cols <= 0 || src_rows <= 0 || dst_cols <= 0 || dst_rows <= 0)
    throw std::invalid_argument("registration: resampling needs positive sizes (depth " + std::to_string(src_cols) +
                                "x" + std::to_string(src_rows) + ", target " + std::to_string(dst_cols) + "x" +
                                std::to_string(dst_rows) + ")");
  // Pixel edges aligned: target centre x + 0.5 (in pixel-edge coordinates) scales to (x + 0.5) * s,
  // whose pixel is floor((x + 0.5) * s) = floor(s x + s / 2).
  const double sx = static_cast<double>(src_cols) / dst_cols, sy = static_cast<double>(src_rows) / dst_rows;
  ResampleMap m;
  m.ax = static_cast<float>(sx);
  m.bx = static_cast<float>(0.5 * sx);
  m.ay = static_cast<float>(sy);
  m.by = static_cast<float>(0.5 * sy);
  return m;
}

ReprojectParams reproject_params(const double depth_k[4], const double depth_to_color[16], const double color_k[4],
                                 const double depth_inverse_brown_conrady[5]) {
  check_k("depth camera", depth_k[0], depth_k[1], depth_k[2], depth_k[3]);
  check_k("color camera", color_k[0], color_k[1], color_k[2], color_k[3]);
  for (int i = 0; i < 16; ++i)
    if (!std::isfinite(depth_to_color[i]))
      throw std::invalid_argument("registration: the depth-to-color extrinsic has a non-finite entry");
  if (depth_to_color[12] != 0.0 || depth_to_color[13] != 0.0 || depth_to_color[14] != 0.0 || depth_to_color[15] != 1.0)
    throw std::invalid_argument("registration: the depth-to-color extrinsic's last row must be 0 0 0 1");
  ReprojectParams p;
  p.ifx = to_float_checked(1.0 / depth_k[0], "1/fx of the depth camera");
  p.ify = to_float_checked(1.0 / depth_k[1], "1/fy of the depth camera");
  p.ncx = to_float_checked(-depth_k[2] / depth_k[0], "cx/fx of the depth camera");
  p.ncy = to_float_checked(-depth_k[3] / depth_k[1], "cy/fy of the depth camera");
  for (int r = 0; r < 3; ++r) {
    for (int c = 0; c < 3; ++c) p.r[r * 3 + c] = static_cast<float>(depth_to_color[r * 4 + c]);
    p.t[r] = to_float_checked(depth_to_color[r * 4 + 3], "the extrinsic's translation");
  }
  p.fx = to_float_checked(color_k[0], "fx of the color camera");
  p.fy = to_float_checked(color_k[1], "fy of the color camera");
  p.cx = to_float_checked(color_k[2], "cx of the color camera");
  p.cy = to_float_checked(color_k[3], "cy of the color camera");
  if (depth_inverse_brown_conrady != nullptr) {
    const double* c = depth_inverse_brown_conrady;
    for (int i = 0; i < 5; ++i)
      if (!std::isfinite(c[i]))
        throw std::invalid_argument(
            "registration: the depth camera's distortion coefficients (k1, k2, p1, p2, k3) "
            "must be finite");
    p.distortion = DepthDistortion::InverseBrownConrady;
    p.k1 = to_float_checked(c[0], "the distortion coefficient k1");
    p.k2 = to_float_checked(c[1], "the distortion coefficient k2");
    p.p1 = to_float_checked(c[2], "the distortion coefficient p1");
    p.p2 = to_float_checked(c[3], "the distortion coefficient p2");
    p.k3 = to_float_checked(c[4], "the distortion coefficient k3");
  }
  return p;
}

DepthDecode depth_decode(const MaskParams& params) { return DepthDecode{params}; }

void resample_cpu(const RegisterJob& job, const ResampleMap& map, const DepthDecode& decode) {
  validate(job);
  if (job.out_rows == 0 || job.out_cols == 0) return;
  if (job.depth_type == DepthType::U16)
    resample_rows<uint16_t>(job, map, decode);
  else
    resample_rows<float>(job, map, decode);
}

void reproject_cpu(const RegisterJob& job, const ReprojectParams& params, const DepthDecode& decode) {
  validate(job);
  if (job.out_rows == 0 || job.out_cols == 0) return;
  if (job.depth_type == DepthType::U16)
    reproject_rows<uint16_t>(job, params, decode);
  else
    reproject_rows<float>(job, params, decode);
}

}  // namespace depthmask
