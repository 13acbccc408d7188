// What the doctor's sample says (doctor_checks.h): the depth's units, the intrinsics against the image,
// the mask values against the mask rule.
#include <algorithm>
#include <cmath>
#include <cstdint>

#include "depthmask/layouts.h"
#include "depthmask/unit_check.h"
#include "doctor_checks.h"

namespace depthmask::detail {

namespace {

std::string list_text(const std::vector<uint32_t>& v) {
  std::string s = "[";
  for (size_t i = 0; i < v.size(); ++i) s += (i ? ", " : "") + std::to_string(v[i]);
  return s + "]";
}

}  // namespace

// The median of valid depth under the configured scale, and the scale that would make it plausible.
void check_units(Diagnosis& d) {
  if (d.report.decoded == 0) return;
  const double scale = d.config().depth.scale;
  const std::string at = d.stats.float_depth ? "from float depth (metres; depth.scale does not apply)"
                         : d.stats.own_scale ? "at the frames' own depth scales"
                                             : "at depth.scale " + num(scale);
  if (d.stats.valid_depth_m.empty()) {
    d.add("units", DoctorLevel::Warning, "no valid depth in the sampled frames",
          "every depth pixel is 0 (or one of depth.invalid_values)", "check input.depth and depth.encoding");
    return;
  }
  auto& v = d.stats.valid_depth_m;
  const auto mid = v.begin() + static_cast<std::ptrdiff_t>(v.size() / 2);
  std::nth_element(v.begin(), mid, v.end());
  const double median = *mid;
  const std::string detail = percent(d.stats.valid_pixels, d.stats.depth_pixels) + " of the depth pixels are valid; " +
                             percent(d.stats.valid_in_range, d.stats.valid_pixels) +
                             " of those lie in depth.min..depth.max (" + num(d.config().depth.min) + " to " +
                             num(d.config().depth.max) + " m)";
  const std::string title = "median valid depth " + metres(median) + " " + at;
  if (median >= kPlausibleDepthMinM && median <= kPlausibleDepthMaxM) {
    d.add("units", DoctorLevel::Ok, title + ": plausible", detail);
    return;
  }
  const auto better = suggested_depth_scale(median, scale, d.stats.float_depth);
  std::string hint;
  if (better && !d.stats.float_depth && !d.stats.own_scale) {
    hint = "depth.scale: " + num(*better) + " would make it " + metres(median * *better / scale);
    d.suggest("depth.scale", num(*better));
  } else if (better && d.stats.float_depth) {
    hint = "the files seem to hold units of " + num(*better) + " m, not metres";
  }
  d.add("units", DoctorLevel::Warning,
        title + ": implausible for an RGB-D scene (expected " + metres(kPlausibleDepthMinM) + " to " +
            metres(kPlausibleDepthMaxM) + ")",
        detail, hint);
}

void check_intrinsics(Diagnosis& d) {
  const auto& formats = d.config().output.formats;
  const bool ply = std::find(formats.begin(), formats.end(), OutputFormat::Ply) != formats.end();
  const FrameEntry& f = d.input.listing.frames[d.report.sample.empty() ? 0 : d.report.sample.front()];
  const std::optional<Intrinsics> k = frame_intrinsics(d.config(), f);
  const DoctorLevel need = ply ? DoctorLevel::Error : DoctorLevel::Warning;
  const std::string needs = ply ? "output.format 'ply' needs them to backproject the depth"
                                : "no configured output needs them (output.format 'ply' would)";
  std::string geometry;
  if (d.geometry)
    geometry = "\nthe depth is registered with the camera geometry of the dataset (depth K, color K, extrinsic)";
  if (!k) {
    d.add("intrinsics", ply ? DoctorLevel::Error : DoctorLevel::Info, "no camera intrinsics", needs + geometry,
          "set input.intrinsics (a file, or {fx, fy, cx, cy})");
    return;
  }
  const std::string text = "fx " + num(k->fx) + ", fy " + num(k->fy) + ", cx " + num(k->cx) + ", cy " + num(k->cy) +
                           (k->width > 0 ? ", for " + size_text(k->width, k->height) + " images" : "") +
                           (f.intrinsics ? " (frame " + f.id + "'s own)" : "");
  if (!(k->valid() && std::isfinite(k->fx) && std::isfinite(k->fy) && std::isfinite(k->cx) && std::isfinite(k->cy))) {
    d.add("intrinsics", need, "intrinsics unusable: " + text, "focal lengths must be positive and finite; " + needs,
          "fix input.intrinsics");
    return;
  }
  const cv::Size grid = d.stats.first_grid;
  if (grid.area() == 0) {
    d.add("intrinsics", DoctorLevel::Ok, "intrinsics " + text, "not checked against an image: no frame decoded");
    return;
  }
  const std::string against =
      "against frame " + d.stats.first_grid_id + "'s " + size_text(grid.width, grid.height) + " output";
  if ((k->width > 0 && k->width != grid.width) || (k->height > 0 && k->height != grid.height)) {
    d.add("intrinsics", need, "intrinsics are for another image size: " + text, against + "; " + needs,
          "set input.intrinsics for " + size_text(grid.width, grid.height) + " images");
    return;
  }
  // Plausible for the image: a horizontal field of view of 15 to 150 degrees (every RGB-D camera
  // lies well inside) and the principal point within the middle half of the image.
  const double fov = 2.0 * std::atan(grid.width / (2.0 * k->fx)) * 180.0 / 3.14159265358979323846;
  const bool fov_ok = fov >= 15.0 && fov <= 150.0;
  const bool centre_ok = std::abs(k->cx - grid.width / 2.0) <= grid.width / 4.0 &&
                         std::abs(k->cy - grid.height / 2.0) <= grid.height / 4.0;
  const std::string detail = against + ": horizontal field of view " + cformat("%.0f", fov) +
                             " degrees, principal point " + cformat("(%.1f, %.1f)", k->cx, k->cy) + " in a " +
                             size_text(grid.width, grid.height) + " image" + geometry;
  if (fov_ok && centre_ok) {
    d.add("intrinsics", DoctorLevel::Ok, "intrinsics " + text, detail);
    return;
  }
  d.add("intrinsics", DoctorLevel::Warning, "intrinsics look wrong for the image size: " + text,
        detail + "\nexpected a field of view of 15 to 150 degrees and the principal point near the image centre",
        "check that input.intrinsics belong to this camera and resolution");
}

// The mask values seen against the rule: labels never seen, a rule that keeps nothing or everything.
void check_mask_rule(Diagnosis& d) {
  if (d.stats.passes == 0) return;
  const MaskConfig& m = d.config().mask;
  std::vector<std::pair<uint64_t, uint32_t>> seen;  // count, value
  for (size_t v = 0; v < d.stats.mask_hist.size(); ++v)
    if (d.stats.mask_hist[v]) seen.emplace_back(d.stats.mask_hist[v], static_cast<uint32_t>(v));
  std::sort(seen.rbegin(), seen.rend());
  std::string values;
  for (size_t i = 0; i < seen.size() && i < 12; ++i)
    values +=
        (i ? ", " : "") + std::to_string(seen[i].second) + " (" + percent(seen[i].first, d.stats.mask_pixels) + ")";
  if (seen.size() > 12) values += ", ... (" + std::to_string(seen.size()) + " values)";
  std::vector<uint32_t> nonzero;
  for (const auto& [count, v] : seen)
    if (v != 0 && nonzero.size() < 16) nonzero.push_back(v);
  std::sort(nonzero.begin(), nonzero.end());

  std::string rule;
  if (!m.labels.empty())
    rule = "mask.labels " + list_text(m.labels);
  else if (m.threshold_fraction)
    rule = "mask.threshold_fraction " + num(*m.threshold_fraction);
  else
    rule = "mask.threshold " + std::to_string(m.threshold);
  if (m.invert) rule += ", inverted";
  std::string detail = d.stats.mask_frames ? "values seen: " + values + "\n" : "";
  if (d.stats.mask_frames)
    detail += "the mask test passes " + percent(d.stats.mask_pass, d.stats.mask_pixels) + " of the mask pixels; ";
  detail += "kept after the depth rule: " + percent(d.stats.kept, d.stats.out_pixels) + " of the output pixels, in " +
            std::to_string(d.stats.passes - d.stats.passes_keeping_nothing) + " of " + std::to_string(d.stats.passes) +
            " sampled masks";

  if (!m.labels.empty() && d.stats.mask_frames) {
    std::vector<uint32_t> never;
    for (uint32_t l : m.labels)
      if (l >= d.stats.mask_hist.size() || d.stats.mask_hist[l] == 0) never.push_back(l);
    if (!never.empty())
      d.add("labels", DoctorLevel::Warning,
            "mask.labels " + list_text(never) + (never.size() == 1 ? " is" : " are") + " in no sampled mask",
            "values seen: " + values, "check mask.labels against the dataset's label ids");
    else
      d.add("labels", DoctorLevel::Ok,
            "every label of mask.labels " + list_text(m.labels) + " is in the sampled masks");
  }

  if (d.stats.passes_keeping_nothing == d.stats.passes) {
    std::string hint;
    if (d.stats.mask_frames && d.stats.mask_pass == 0 && !m.invert) {
      if (!m.labels.empty() && !nonzero.empty()) {
        hint = "mask.labels: " + list_text(nonzero) + " (the nonzero values seen)";
        d.suggest("mask.labels", list_text(nonzero));
      } else if (m.labels.empty() && !m.threshold_fraction && !nonzero.empty()) {
        hint = "mask.threshold: 0 keeps every nonzero mask value";
        d.suggest("mask.threshold", "0");
      }
    } else if (d.stats.mask_frames && d.stats.mask_pass > 0) {
      hint =
          "the mask test passes pixels but the depth rule drops them all: check depth.min, depth.max and "
          "depth.scale";
    }
    d.add("mask_rule", DoctorLevel::Error,
          "the rule (" + rule + ") keeps nothing in any of the " +
              plural(d.stats.passes, "sampled mask", "sampled masks"),
          detail, hint);
    return;
  }
  if (d.stats.mask_frames && d.stats.frames_mask_all == d.stats.mask_frames) {
    d.add("mask_rule", DoctorLevel::Warning,
          "the mask test (" + rule + ") keeps every pixel of every sampled mask: the mask masks nothing", detail,
          m.labels.empty() ? "raise mask.threshold or set mask.labels" : "check mask.labels and mask.invert");
    return;
  }
  d.add("mask_rule", DoctorLevel::Ok, "the rule (" + rule + ") keeps pixels", detail);
}

}  // namespace depthmask::detail
