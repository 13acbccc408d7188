// The report's page (report_parts.h): one HTML document with everything inline (thumbnails as data:
// URIs, plots as SVG, one inline script for the self-check), so it opens anywhere, offline, and can be
// mailed.

#include <algorithm>
#include <cstdio>
#include <sstream>

#include "depthmask/reason.h"
#include "depthmask/run_files.h"
#include "report_parts.h"

namespace fs = std::filesystem;

namespace depthmask::report_parts {

namespace {

std::string html(const std::string& text) {
  std::string out;
  out.reserve(text.size());
  for (const char ch : text) {
    switch (ch) {
      case '&':
        out += "&amp;";
        break;
      case '<':
        out += "&lt;";
        break;
      case '>':
        out += "&gt;";
        break;
      case '"':
        out += "&quot;";
        break;
      case '\'':
        out += "&#39;";
        break;
      default:
        out += ch;
    }
  }
  return out;
}

std::string fixed(double v, int digits) {
  char buf[64];
  std::snprintf(buf, sizeof buf, "%.*f", digits, v);
  return buf;
}

// 100000 -> "100,000": counts people compare at a glance.
std::string grouped(uint64_t n) {
  std::string s = std::to_string(n);
  for (int i = static_cast<int>(s.size()) - 3; i > 0; i -= 3) s.insert(static_cast<size_t>(i), ",");
  return s;
}

// Kept fraction per frame, in listing (manifest key) order. Past 1000 frames each column is a bucket
// of frames drawn from its lowest to its highest fraction.
std::string kept_plot(const std::vector<ReportFrame>& frames) {
  const int w = 900, h = 220, left = 44, bottom = 24, top = 8;
  const int pw = w - left - 8, ph = h - top - bottom;
  std::vector<double> v;
  for (const ReportFrame& f : frames)
    if (f.stats && f.stats->pixels > 0) v.push_back(f.stats->kept_fraction());
  if (v.empty()) return "<p class=\"na\">Kept fraction per frame: n/a (no frame records its kept pixels)</p>";
  // The axis ends at the first of a few round fractions above the highest one: a run that keeps 4 % of
  // every frame still shows its frames apart.
  const double peak = *std::max_element(v.begin(), v.end());
  double top_f = 1.0;
  for (const double t : {0.01, 0.02, 0.05, 0.1, 0.2, 0.5, 1.0})
    if (peak <= t) {
      top_f = t;
      break;
    }
  std::ostringstream s;
  s << "<svg xmlns=\"http://www.w3.org/2000/svg\" width=\"" << w << "\" height=\"" << h << "\" viewBox=\"0 0 " << w
    << " " << h << "\" role=\"img\" aria-label=\"kept fraction per frame\">";
  for (const double g : {0.0, 0.25, 0.5, 0.75, 1.0}) {
    const double y = top + ph * (1.0 - g);
    s << "<line x1=\"" << left << "\" x2=\"" << left + pw << "\" y1=\"" << y << "\" y2=\"" << y
      << "\" class=\"grid\"/><text x=\"" << left - 4 << "\" y=\"" << y + 4 << "\" text-anchor=\"end\">"
      << fixed(g * top_f * 100, top_f < 0.1 ? 1 : 0) << "%</text>";
  }
  auto x_of = [&](double i, double n) { return left + (n <= 1 ? pw / 2.0 : pw * i / (n - 1)); };
  auto y_of = [&](double f) { return top + ph * (1.0 - f / top_f); };
  const size_t n = v.size();
  if (n <= 1000) {
    s << "<polyline class=\"line\" points=\"";
    for (size_t i = 0; i < n; ++i)
      s << fixed(x_of(static_cast<double>(i), static_cast<double>(n)), 1) << "," << fixed(y_of(v[i]), 1) << " ";
    s << "\"/>";
    if (n <= 200)
      for (size_t i = 0; i < n; ++i)
        s << "<circle class=\"dot\" r=\"2\" cx=\"" << fixed(x_of(static_cast<double>(i), static_cast<double>(n)), 1)
          << "\" cy=\"" << fixed(y_of(v[i]), 1) << "\"/>";
  } else {
    const size_t buckets = 1000;
    for (size_t b = 0; b < buckets; ++b) {
      const size_t a = b * n / buckets, e = std::max(a + 1, (b + 1) * n / buckets);
      const auto [lo, hi] =
          std::minmax_element(v.begin() + static_cast<std::ptrdiff_t>(a), v.begin() + static_cast<std::ptrdiff_t>(e));
      const double x = x_of(static_cast<double>(b), static_cast<double>(buckets));
      s << "<line class=\"bar\" x1=\"" << fixed(x, 1) << "\" x2=\"" << fixed(x, 1) << "\" y1=\"" << fixed(y_of(*lo), 1)
        << "\" y2=\"" << fixed(y_of(*hi) - 0.5, 1) << "\"/>";
    }
  }
  s << "<text x=\"" << left << "\" y=\"" << h - 6 << "\">frame 1</text><text x=\"" << left + pw << "\" y=\"" << h - 6
    << "\" text-anchor=\"end\">frame " << grouped(n) << "</text></svg>";
  return s.str();
}

// The kept depth of every recorded frame, summed (`sum`), over the manifest's bins.
std::string depth_histogram(const std::vector<uint64_t>& sum, const std::optional<HistogramSpec>& spec) {
  if (!spec) return "<p class=\"na\">Kept-depth histogram: n/a (a version 1 manifest, or none)</p>";
  if (sum.size() != static_cast<size_t>(spec->bins))
    return "<p class=\"na\">Kept-depth histogram: n/a (no frame records one)</p>";
  const uint64_t peak = std::max<uint64_t>(1, *std::max_element(sum.begin(), sum.end()));
  const int w = 900, h = 220, left = 44, bottom = 24, top = 8;
  const double pw = w - left - 8, ph = h - top - bottom, bw = pw / static_cast<double>(sum.size());
  std::ostringstream s;
  s << "<svg xmlns=\"http://www.w3.org/2000/svg\" width=\"" << w << "\" height=\"" << h << "\" viewBox=\"0 0 " << w
    << " " << h << "\" role=\"img\" aria-label=\"kept depth histogram\">";
  for (size_t i = 0; i < sum.size(); ++i) {
    const double bh = ph * static_cast<double>(sum[i]) / static_cast<double>(peak);
    const double lo = spec->min + (spec->max - spec->min) * static_cast<double>(i) / static_cast<double>(sum.size());
    const double hi =
        spec->min + (spec->max - spec->min) * static_cast<double>(i + 1) / static_cast<double>(sum.size());
    s << "<rect class=\"hbar\" x=\"" << fixed(left + bw * static_cast<double>(i), 1) << "\" y=\""
      << fixed(top + ph - bh, 1) << "\" width=\"" << fixed(std::max(bw - 1, 1.0), 1) << "\" height=\"" << fixed(bh, 1)
      << "\"><title>" << fixed(lo, 3) << "–" << fixed(hi, 3) << " m: " << grouped(sum[i]) << " pixels</title></rect>";
  }
  s << "<text x=\"" << left - 4 << "\" y=\"" << top + 10 << "\" text-anchor=\"end\">" << grouped(peak)
    << "</text><text x=\"" << left << "\" y=\"" << h - 6 << "\">" << fixed(spec->min, 2) << " m</text><text x=\""
    << left + pw << "\" y=\"" << h - 6 << "\" text-anchor=\"end\">" << fixed(spec->max, 2) << " m</text></svg>";
  return s.str();
}

// Sets data-selfcheck on <html>: "ok" once every image has decoded and no script or resource error
// was raised, else "error: ..." (the headless Chromium test reads it with --dump-dom).
constexpr const char* kSelfCheck = R"(<script>
(function () {
  var errors = [];
  window.onerror = function (message) { errors.push(String(message)); };
  window.addEventListener('error', function (e) {
    if (e.target && e.target !== window) errors.push('resource failed: ' + (e.target.alt || e.target.tagName));
  }, true);
  document.addEventListener('DOMContentLoaded', function () {
    var images = Array.prototype.slice.call(document.images);
    Promise.all(images.map(function (img) {
      return img.decode().catch(function () { errors.push('image did not decode: ' + img.alt); });
    })).then(function () {
      document.documentElement.setAttribute('data-selfcheck', errors.length ? 'error: ' + errors.join('; ') : 'ok');
    });
  });
})();
</script>)";

constexpr const char* kStyle = R"(<style>
body { font: 14px/1.4 system-ui, sans-serif; margin: 24px; color: #222; background: #fff; }
h1 { font-size: 22px; } h2 { font-size: 17px; margin-top: 28px; border-bottom: 1px solid #ddd; }
table { border-collapse: collapse; } td, th { padding: 2px 10px 2px 0; text-align: left; vertical-align: top; }
.sheet { display: flex; flex-wrap: wrap; gap: 10px; }
figure { margin: 0; } figcaption { font-size: 12px; color: #444; max-width: 640px; word-break: break-all; }
.na { color: #777; } pre { background: #f6f6f6; padding: 8px; overflow: auto; max-height: 480px; }
svg text { font-size: 11px; fill: #444; } .grid { stroke: #e4e4e4; } .line { fill: none; stroke: #1f6fb4; }
.dot { fill: #1f6fb4; } .bar { stroke: #1f6fb4; } .hbar { fill: #1f6fb4; }
.swatch { display: inline-block; width: 14px; height: 14px; vertical-align: middle; border: 1px solid #999; }
.failures td.msg { font-family: monospace; font-size: 12px; }
</style>)";

void summary_section(std::ostringstream& p, const ReportModel& m) {
  const auto& frames = m.frames;
  const auto& failures = m.failures;
  const auto& head = m.head;
  const auto& manifests_read = m.manifests_read;
  const nlohmann::json& summary = *m.summary;
  // Summary.
  p << "<h2 id=\"summary\">Summary</h2>\n<table class=\"summary\">\n";
  auto row = [&](const std::string& k, const std::string& v) {
    p << "<tr><th>" << html(k) << "</th><td>" << html(v) << "</td></tr>\n";
  };
  if (m.record) {
    row("depthmask", m.record->depthmask);
    row("date", m.record->date);
  }
  if (summary.is_object()) {
    auto count = [&](const char* k) { return grouped(summary.value(k, uint64_t{0})); };
    row("frames listed", count("total"));
    row("ok", count("ok"));
    row("failed", count("failed"));
    row("skipped (not attempted)", count("skipped"));
    row("already done (resumed)", count("skipped_done"));
    row("seconds", fixed(summary.value("seconds", 0.0), 2) + " (" + fixed(summary.value("fps", 0.0), 1) + " frames/s)");
    row("backend", summary.value("backend", "?") + " (" + summary.value("backend_reason", "") + ")");
    if (summary.value("interrupted", false)) row("interrupted", "yes");
    if (!summary.value("manifest_error", std::string()).empty())
      row("manifest not saved", summary.value("manifest_error", std::string()));
    if (m.shard_records > 0)
      row("run records", grouped(m.shard_records) + " shard(s)' (depthmask-run.shard-K-of-N.json), counts summed");
  } else if (m.record && !m.record->finished) {
    row("run record", m.record->path.filename().string() +
                          " was written when the run started and not since: the run is still running, or was killed");
  } else {
    row("run record", std::string("none (") + kRunRecordName + " missing: not written by depthmask run)");
  }
  if (head) {
    const std::string names = manifests_read.size() == 1
                                  ? manifests_read.front()
                                  : grouped(manifests_read.size()) + " manifests (" + manifests_read.front() + " ... " +
                                        manifests_read.back() + ")";
    row("manifest", names + ", version " + std::to_string(head->version) + ": " + grouped(frames.size()) +
                        " frame(s) done, " + grouped(failures.size()) + " failed");
  } else {
    row("manifest",
        std::string("none (no ") + kManifestName + "): frames read from " + grouped(frames.size()) + " sidecar(s)");
  }
  uint64_t kept = 0, pixels = 0;
  size_t with_stats = 0;
  for (const ReportFrame& f : frames)
    if (f.stats && f.stats->pixels > 0) {
      kept += f.stats->kept;
      pixels += f.stats->pixels;
      ++with_stats;
    }
  row("kept pixels", with_stats == 0 ? "n/a"
                                     : grouped(kept) + " of " + grouped(pixels) + " (" +
                                           fixed(100.0 * static_cast<double>(kept) / static_cast<double>(pixels), 2) +
                                           " %) over " + grouped(with_stats) + " frame(s)");
  p << "</table>\n";
}

void sheet_section(std::ostringstream& p, ReportModel& m, const ReportOptions& o) {
  ReportInputs inputs(m);
  // Contact sheet.
  const auto picked = pick_frames(m.frames, o.thumbnails);
  p << "<h2 id=\"sheet\">Contact sheet</h2>\n<p class=\"shown\">" << grouped(picked.size()) << " of "
    << grouped(m.frames.size()) << " frames shown: colour | mask | masked depth";
  std::ostringstream sheet;
  size_t composed = 0, without_inputs = 0, missing = 0;
  bool any_reason = false;
  for (const auto& [i, why] : picked) {
    const ReportFrame& f = m.frames[i];
    const Thumbnail t = thumbnail(m.dir, f, inputs.of(f), o.thumbnail_width);
    const std::string kept_text =
        f.stats && f.stats->pixels > 0 ? fixed(100.0 * f.stats->kept_fraction(), 2) + " % kept" : "kept: n/a";
    sheet << "<figure class=\"thumb\">";
    if (t.uri.empty()) {
      ++missing;
      sheet << "<div class=\"na\">no preview, no readable output</div>";
    } else {
      composed += t.composed ? 1 : 0;
      without_inputs += t.composed && !t.with_inputs ? 1 : 0;
      any_reason = any_reason || t.reason;
      sheet << "<img src=\"" << t.uri << "\" alt=\"" << html(f.id) << "\">";
    }
    sheet << "<figcaption>" << html(f.id) << " · " << kept_text << " · " << why << "</figcaption></figure>\n";
  }
  if (any_reason) p << " | reason";
  p << "; lowest and highest kept fractions first, then evenly spaced.";
  if (composed > 0) p << " " << composed << " composed from the outputs (no preview written).";
  if (without_inputs > 0)
    p << " " << without_inputs
      << " without their input files (no sidecar, the run's inputs not readable): grey colour and mask.";
  if (missing > 0) p << " " << missing << " without any readable image.";
  p << "</p>\n";
  if (any_reason) {
    p << "<p class=\"legend\">Reason: ";
    for (size_t c = 0; c < kReasonStyles.size(); ++c) {
      const ReasonStyle& r = kReasonStyles[c];
      char rgb[8];
      std::snprintf(rgb, sizeof rgb, "#%02x%02x%02x", r.r, r.g, r.b);
      p << "<span class=\"swatch\" style=\"background:" << rgb << "\"></span> " << c << " " << html(r.name)
        << " &nbsp;";
    }
    p << "</p>\n";
  }
  p << "<div class=\"sheet\">\n" << sheet.str() << "</div>\n";
}

}  // namespace

std::string report_page(ReportModel& m, const ReportOptions& o) {
  std::ostringstream p;
  p << "<!DOCTYPE html>\n<html lang=\"en\" data-selfcheck=\"pending\">\n<head>\n<meta charset=\"utf-8\">\n"
    << "<meta name=\"viewport\" content=\"width=device-width, initial-scale=1\">\n<title>depthmask report: "
    << html(m.dir.filename().string()) << "</title>\n"
    << kSelfCheck << "\n"
    << kStyle << "\n</head>\n<body>\n<h1>depthmask report: " << html(m.dir.string()) << "</h1>\n";

  summary_section(p, m);
  sheet_section(p, m, o);
  p << "<h2 id=\"kept\">Kept fraction per frame</h2>\n" << kept_plot(m.frames) << "\n";
  p << "<h2 id=\"histogram\">Kept depth</h2>\n"
    << depth_histogram(m.all.hist, m.head ? m.head->hist : std::nullopt) << "\n";

  p << "<h2 id=\"failures\">Failures</h2>\n";
  if (m.failures.empty()) {
    p << "<p>None recorded.</p>\n";
  } else {
    p << "<table class=\"failures\"><tr><th>frame</th><th>class</th><th>message</th></tr>\n";
    for (const ManifestFailure& f : m.failures)
      p << "<tr><td>" << html(f.id) << "</td><td>" << to_string(f.failure) << "</td><td class=\"msg\">"
        << html(f.message) << "</td></tr>\n";
    p << "</table>\n";
  }

  p << "<h2 id=\"settings\">Settings</h2>\n";
  if (m.record && m.record->config)
    p << "<pre class=\"config\">" << html(*m.record->config) << "</pre>\n";
  else
    p << "<p class=\"na\">n/a (no " << kRunRecordName << ")</p>\n";
  p << "</body>\n</html>\n";

  return p.str();
}

}  // namespace depthmask::report_parts
