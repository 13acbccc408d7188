#include "depthmask/synth.h"

#include <tbb/parallel_for.h>
#include <opencv2/imgcodecs.hpp>

#include <algorithm>
#include <cmath>
#include <cstdio>

#include "depthmask/atomic_file.h"
#include "depthmask/config.h"
#include "depthmask/errors.h"

namespace fs = std::filesystem;

namespace depthmask {

namespace {

struct V3 {
  double x, y, z;
};
V3 operator-(V3 a, V3 b) { return {a.x - b.x, a.y - b.y, a.z - b.z}; }
V3 operator*(double s, V3 a) { return {s * a.x, s * a.y, s * a.z}; }
double dot(V3 a, V3 b) { return a.x * b.x + a.y * b.y + a.z * b.z; }
V3 normalize(V3 a) { return (1.0 / std::sqrt(dot(a, a))) * a; }

// A small integer hash for deterministic per-pixel noise (no std::rand, no platform differences).
uint32_t hash3(uint32_t a, uint32_t b, uint32_t c) {
  uint32_t h = a * 0x9E3779B1u ^ (b + 0x7F4A7C15u) * 0x85EBCA77u ^ (c + 0x165667B1u) * 0xC2B2AE3Du;
  h ^= h >> 15;
  h *= 0x2C1B3C6Du;
  h ^= h >> 12;
  h *= 0x297A2D39u;
  h ^= h >> 15;
  return h;
}

struct Hit {
  double t = 1e30;
  V3 n{0, 0, -1};
  int label = 0;
  V3 albedo{0.5, 0.5, 0.5};  // BGR
};

void sphere(const V3& r, const V3& c, double rad, int label, V3 albedo, Hit& h) {
  const double b = dot(r, c), cc = dot(c, c) - rad * rad, a = dot(r, r);
  const double disc = b * b - a * cc;
  if (disc < 0) return;
  const double t = (b - std::sqrt(disc)) / a;
  if (t > 0 && t < h.t) h = {t, normalize(t * r - c), label, albedo};
}

void box(const V3& r, const V3& lo, const V3& hi, int label, V3 albedo, Hit& h) {
  double t0 = 0, t1 = 1e30;
  int axis = -1;
  const double ro[3] = {r.x, r.y, r.z}, l[3] = {lo.x, lo.y, lo.z}, u[3] = {hi.x, hi.y, hi.z};
  double sign = 1;
  for (int i = 0; i < 3; ++i) {
    if (std::abs(ro[i]) < 1e-12) {
      if (0 < l[i] || 0 > u[i]) return;
      continue;
    }
    double ta = l[i] / ro[i], tb = u[i] / ro[i];
    double s = -1;
    if (ta > tb) std::swap(ta, tb), s = 1;
    if (ta > t0) t0 = ta, axis = i, sign = s;
    t1 = std::min(t1, tb);
    if (t0 > t1) return;
  }
  if (axis < 0 || t0 >= h.t) return;
  V3 n{0, 0, 0};
  (axis == 0 ? n.x : axis == 1 ? n.y : n.z) = sign;
  h = {t0, n, label, albedo};
}

}  // namespace

Intrinsics synthetic_intrinsics(int w, int h) {
  Intrinsics k;
  k.fx = k.fy = 0.78 * w;
  k.cx = 0.5 * (w - 1);
  k.cy = 0.5 * (h - 1);
  k.width = w;
  k.height = h;
  return k;
}

SyntheticFrame render_synthetic_frame(int index, int w, int h) {
  DM_EXPECT(w > 0 && h > 0 && w <= 16384 && h <= 16384, std::invalid_argument,
            "synthetic frame size " << w << "x" << h << " is out of range (1..16384)");
  const Intrinsics k = synthetic_intrinsics(w, h);
  SyntheticFrame f{cv::Mat(h, w, CV_16UC1), cv::Mat(h, w, CV_8UC3), cv::Mat(h, w, CV_8UC1)};
  // Table: a plane through (0, 0.25, 1.4) m tilted towards the camera (y points down); a wall at 2.4 m.
  const V3 table_n = normalize({0, -1, -0.55});
  const double table_d = dot(table_n, {0, 0.25, 1.4});
  const double ph = 0.35 * index;  // objects drift a little from frame to frame
  // Points on the table surface for object placement: y from the plane equation at given x, z.
  auto on_table = [&](double x, double z, double lift) {
    const double y = (table_d - table_n.x * x - table_n.z * z) / table_n.y;
    return V3{x, y - lift, z};
  };
  const V3 light = normalize({-0.4, -1.0, -0.6});
  for (int v = 0; v < h; ++v) {
    auto* dep = f.depth_mm.ptr<uint16_t>(v);
    auto* col = f.color.ptr<cv::Vec3b>(v);
    auto* msk = f.mask.ptr<uint8_t>(v);
    for (int u = 0; u < w; ++u) {
      const V3 r{(u - k.cx) / k.fx, (v - k.cy) / k.fy, 1.0};
      Hit hit;
      hit.t = 2.4;  // the wall (z = 2.4, r.z = 1)
      hit.n = {0, 0, -1};
      hit.albedo = {0.75, 0.78, 0.80};
      const double tt = table_d / dot(table_n, r);
      if (tt > 0 && tt < hit.t) hit = {tt, table_n, 0, V3{0.35, 0.55, 0.70}};
      sphere(r, on_table(-0.28 + 0.05 * std::sin(ph), 1.30, 0.11), 0.11, 1, {0.20, 0.25, 0.85}, hit);
      sphere(r, on_table(0.22, 1.55 + 0.06 * std::cos(ph), 0.08), 0.08, 2, {0.25, 0.80, 0.30}, hit);
      {
        const V3 c = on_table(0.02 + 0.04 * std::cos(ph), 1.15, 0.0);
        box(r, {c.x - 0.07, c.y - 0.16, c.z - 0.06}, {c.x + 0.07, c.y, c.z + 0.06}, 3, {0.85, 0.45, 0.20}, hit);
      }
      sphere(r, on_table(-0.05, 1.75 + 0.03 * std::sin(2 * ph), 0.06), 0.06, 4, {0.80, 0.20, 0.75}, hit);

      const double z = hit.t;  // r.z == 1, so the ray parameter is the depth
      const uint32_t noise = hash3(static_cast<uint32_t>(u), static_cast<uint32_t>(v), static_cast<uint32_t>(index));
      // About 2 % dropouts (no measurement) and +-2 mm quantised noise, as a real sensor shows.
      const bool dropout = (noise % 1000u) < 20u;
      const int jitter = static_cast<int>((noise >> 10) % 5u) - 2;
      dep[u] = dropout ? 0 : static_cast<uint16_t>(std::clamp(std::lround(z * 1000.0) + jitter, 1L, 65535L));
      msk[u] = static_cast<uint8_t>(hit.label);
      const double shade = 0.25 + 0.75 * std::max(0.0, dot(hit.n, light));
      const double grain = 0.93 + 0.07 * ((noise >> 20) % 100u) / 100.0;
      col[u] = cv::Vec3b(cv::saturate_cast<uint8_t>(255 * hit.albedo.x * shade * grain),
                         cv::saturate_cast<uint8_t>(255 * hit.albedo.y * shade * grain),
                         cv::saturate_cast<uint8_t>(255 * hit.albedo.z * shade * grain));
    }
  }
  return f;
}

void write_synthetic_dataset(const fs::path& dir, int frames, int w, int h, bool color) {
  DM_EXPECT(frames > 0 && frames <= 1000000, std::invalid_argument,
            "synth: frame count must be 1..1000000, got " << frames);
  for (const char* sub : {"depth", "color", "mask"})
    if (color || std::string(sub) != "color") ensure_output_dir(dir / sub);
  auto put_png = [](const fs::path& p, const cv::Mat& m) {
    std::vector<uint8_t> bytes;
    DM_EXPECT(cv::imencode(".png", m, bytes), OutputError, "cannot encode '" << p.string() << "'");
    write_file_atomic(p, bytes.data(), bytes.size(), false);
  };
  // Frames are independent (each is a pure function of its index) and each goes to its own files, so
  // they render and encode in parallel with the same bytes as one by one; the first error is rethrown.
  tbb::parallel_for(0, frames, [&](int i) {
    char id[16];
    std::snprintf(id, sizeof id, "%06d", i);
    const SyntheticFrame f = render_synthetic_frame(i, w, h);
    put_png(dir / "depth" / (std::string(id) + ".png"), f.depth_mm);
    if (color) put_png(dir / "color" / (std::string(id) + ".png"), f.color);
    put_png(dir / "mask" / (std::string(id) + ".png"), f.mask);
  });
  const std::string k = "# Pinhole intrinsics of the synthetic camera (pixels), written by depthmask synth.\n" +
                        intrinsics_to_yaml(synthetic_intrinsics(w, h));
  write_file_atomic(dir / "intrinsics.yaml", k.data(), k.size(), false);

  // No input.intrinsics: the pattern layout reads the folder's own intrinsics.yaml, so the file stays
  // right when --input points it at another folder.
  Config c;
  c.input.root = dir;
  c.output.dir = dir / "out";
  c.output.preview = true;
  c.depth.max = 2.0;  // drop the wall behind the table
  const std::string yaml =
      "# depthmask configuration for this synthetic dataset (written by depthmask synth).\n"
      "# Depth is 16-bit millimetres; mask labels: 1, 2, 4 spheres, 3 a box, 0 background.\n"
      "# Run: depthmask run --config depthmask.yaml\n"
      "# Only the keys that differ from the built-in defaults (depthmask run --print-config shows them all).\n" +
      to_yaml_changed(c, dir);
  write_file_atomic(dir / "depthmask.yaml", yaml.data(), yaml.size(), false);
}

}  // namespace depthmask
