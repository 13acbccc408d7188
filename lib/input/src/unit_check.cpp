#include "depthmask/unit_check.h"

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <vector>

#include "depthmask/config.h"

namespace depthmask {

namespace {

bool plausible(double m) { return m >= kPlausibleDepthMinM && m <= kPlausibleDepthMaxM; }

std::string fmt(const char* format, double v) {
  char buf[64];
  std::snprintf(buf, sizeof buf, format, v);
  return buf;
}

// Three significant digits, without exponents for depths a sensor could report.
std::string metres(double m) { return m >= 1000.0 ? fmt("%.0f", m) : fmt("%.3g", m); }
std::string scale_text(double s) { return fmt("%.10g", s); }

}  // namespace

std::optional<double> median_kept_depth(const cv::Mat& out, float invalid, size_t min_pixels) {
  if (out.empty() || out.type() != CV_32FC1) return std::nullopt;
  std::vector<float> kept;
  kept.reserve(out.total() / 4);
  for (int y = 0; y < out.rows; ++y) {
    const float* row = out.ptr<float>(y);
    for (int x = 0; x < out.cols; ++x) {
      const float v = row[x];
      if (std::isfinite(v) && v > 0.0f && v != invalid) kept.push_back(v);
    }
  }
  if (kept.empty() || kept.size() < min_pixels) return std::nullopt;
  const auto mid = kept.begin() + static_cast<std::ptrdiff_t>(kept.size() / 2);
  std::nth_element(kept.begin(), mid, kept.end());
  return static_cast<double>(*mid);
}

namespace {

// The preset unit (mm, 0.1 mm) fewest decades from the current one that makes the median plausible;
// failing both, the power of ten fewest decades away that does. A median tells the order of magnitude
// only, so TUM's 1/5000 (half a decade from either) is never guessed. {0, 0, ""} when none does.
struct ScaleGuess {
  double scale = 0.0, median_m = 0.0;
  std::string name;
};
ScaleGuess guess_scale(double median_m, double unit) {
  ScaleGuess best;
  const auto consider = [&](double cand, const std::string& name) {
    const double m = median_m * cand / unit;
    if (!plausible(m)) return;
    if (best.median_m == 0.0 || std::abs(std::log10(cand / unit)) < std::abs(std::log10(best.scale / unit)) - 1e-9)
      best = {cand, m, name};
  };
  for (const char* name : {"mm", "0.1mm"}) consider(*depth_scale_preset(name), name);
  if (best.median_m == 0.0)
    for (int e = -8; e <= 3; ++e) consider(std::pow(10.0, e), "");
  return best;
}

}  // namespace

std::optional<double> suggested_depth_scale(double median_m, double scale, bool float_depth) {
  if (!(median_m > 0.0) || !(scale > 0.0) || plausible(median_m)) return std::nullopt;
  const ScaleGuess g = guess_scale(median_m, float_depth ? 1.0 : scale);
  if (g.median_m == 0.0) return std::nullopt;
  return g.scale;
}

std::string depth_unit_warning(double median_m, double scale, bool float_depth) {
  if (!(median_m > 0.0) || !(scale > 0.0) || plausible(median_m)) return {};
  const ScaleGuess g = guess_scale(median_m, float_depth ? 1.0 : scale);  // metres per stored unit as read now
  const double best = g.scale, best_m = g.median_m;
  const std::string& best_name = g.name;
  const std::string range = "expected " + metres(kPlausibleDepthMinM) + " to " + metres(kPlausibleDepthMaxM) + " m";
  std::string w = "median masked depth " + metres(median_m) + " m";
  if (float_depth) {
    w +=
        " from float depth, which is read as metres (depth.scale does not apply), is implausible for an RGB-D scene (" +
        range + ")";
    if (best_m > 0.0)
      w += "; if the files hold units of " + scale_text(best) + " m it would be " + metres(best_m) + " m";
    return w;
  }
  w += " at depth.scale " + scale_text(scale) + " is implausible for an RGB-D scene (" + range + ")";
  if (best_m > 0.0) {
    w += "; with depth.scale " + scale_text(best);
    if (!best_name.empty()) w += " (" + best_name + ")";
    w += " it would be " + metres(best_m) + " m";
  }
  return w;
}

}  // namespace depthmask
