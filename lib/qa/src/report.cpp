// The QA report (report.h): one HTML page with everything inline (thumbnails as data: URIs, plots as
// SVG, one inline script for the self-check), so it opens anywhere, offline, and can be mailed.

#include "depthmask/report.h"

#include <nlohmann/json.hpp>
#include <opencv2/imgcodecs.hpp>
#include <opencv2/imgproc.hpp>

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <cstring>
#include <fstream>
#include <limits>
#include <map>
#include <optional>
#include <set>
#include <sstream>
#include <system_error>
#include <vector>

#include "depthmask/detail/exr_codec.h"
#include "depthmask/detail/log.h"
#include "depthmask/detail/read_file.h"
#include "depthmask/encoders.h"
#include "depthmask/errors.h"
#include "depthmask/frame_stats.h"
#include "depthmask/layouts.h"
#include "depthmask/manifest.h"
#include "depthmask/reason.h"
#include "depthmask/run_record.h"

namespace fs = std::filesystem;

namespace depthmask {

namespace {

// What the page needs of one frame (not its outputs' sizes and CRCs: a million-frame manifest's
// records are read one by one and only this is kept).
struct ReportFrame {
  std::string key, id;
  std::vector<std::string> files;  // relative to the output folder
  std::optional<FrameStats> stats;
};

struct Sidecar {
  std::string id;
  fs::path color, mask;
  uint64_t kept = 0, pixels = 0;
  std::vector<std::string> outputs;  // siblings of the sidecar
};

// A sidecar's or run record's text (small JSON); the .npy outputs read with their own bound below.
std::string read_text(const fs::path& p, const char* what) {
  return detail::read_file_bounded(p, detail::kMaxTextFileBytes, what);
}

bool ends_with(const std::string& s, const std::string& tail) {
  return s.size() >= tail.size() && s.compare(s.size() - tail.size(), tail.size(), tail) == 0;
}

// A frame's sidecar ({id}.json beside its outputs), when it is one (not our own files, not another
// tool's JSON).
std::optional<Sidecar> read_sidecar(const fs::path& p) {
  nlohmann::json j;
  try {
    j = nlohmann::json::parse(read_text(p, "sidecar"));
  } catch (const std::exception&) {
    return std::nullopt;
  }
  if (!j.is_object() || !j.contains("id") || !j["id"].is_string() || !j.contains("outputs") ||
      !j["outputs"].is_array() || !j.contains("kept_pixels") || !j["kept_pixels"].is_number_unsigned())
    return std::nullopt;
  Sidecar s;
  s.id = j["id"].get<std::string>();
  s.kept = j["kept_pixels"].get<uint64_t>();
  s.pixels = static_cast<uint64_t>(j.value("width", 0)) * static_cast<uint64_t>(j.value("height", 0));
  for (const auto& o : j["outputs"])
    if (o.is_string()) s.outputs.push_back(o.get<std::string>());
  if (j.contains("source") && j["source"].is_object()) {
    const auto& src = j["source"];
    if (src.contains("color") && src["color"].is_string()) s.color = src["color"].get<std::string>();
    if (src.contains("mask") && src["mask"].is_string()) s.mask = src["mask"].get<std::string>();
  }
  return s;
}

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

std::string base64(const std::vector<uint8_t>& b) {
  static const char* k = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/";
  std::string out;
  out.reserve((b.size() + 2) / 3 * 4);
  for (size_t i = 0; i < b.size(); i += 3) {
    const uint32_t n = (uint32_t{b[i]} << 16) | (i + 1 < b.size() ? uint32_t{b[i + 1]} << 8 : 0u) |
                       (i + 2 < b.size() ? uint32_t{b[i + 2]} : 0u);
    out += k[(n >> 18) & 63];
    out += k[(n >> 12) & 63];
    out += i + 1 < b.size() ? k[(n >> 6) & 63] : '=';
    out += i + 2 < b.size() ? k[n & 63] : '=';
  }
  return out;
}

// The masked depth of a frame from one of its float outputs; empty when it has none that reads.
cv::Mat read_masked_depth(const fs::path& dir, const std::vector<std::string>& files) {
  for (const std::string& name : files) {
    const fs::path p = dir / name;
    try {
      if (ends_with(name, ".npy")) {
        // 2 GiB: a masked depth of input.max_image_pixels' default (2^28) float32 pixels is 1 GiB.
        const std::string t = detail::read_file_bounded(p, size_t{1} << 31, "output");
        return decode_npy(std::vector<uint8_t>(t.begin(), t.end()), p.string());
      }
      if (ends_with(name, ".tiff") || ends_with(name, ".exr")) {
        if (ends_with(name, ".exr")) detail::enable_exr_codec();
        cv::Mat m = cv::imread(p.string(), cv::IMREAD_UNCHANGED);
        if (!m.empty() && m.type() == CV_32FC1) return m;
      }
      if (ends_with(name, ".mm.png")) {
        const cv::Mat mm = cv::imread(p.string(), cv::IMREAD_UNCHANGED);
        if (mm.empty() || mm.type() != CV_16UC1) continue;
        cv::Mat m;
        mm.convertTo(m, CV_32FC1, 0.001);
        return m;
      }
    } catch (const std::exception& e) {
      detail::log().debug("report: '{}' does not read: {}", p.string(), e.what());
    }
  }
  return cv::Mat();
}

// Colour | mask | masked depth, as the run's preview draws them, from the frame's files: the masked
// depth from an output, colour and mask from the inputs the sidecar names (grey where unknown).
cv::Mat compose_preview(const fs::path& dir, const ReportFrame& f, const Sidecar* side, bool* with_inputs) {
  cv::Mat depth = read_masked_depth(dir, f.files);
  if (depth.empty() && side) depth = read_masked_depth(dir, side->outputs);
  if (depth.empty()) return cv::Mat();
  // Every pixel not kept to 0, whatever output.invalid was (kept: finite and > 0).
  cv::Mat kept = (depth > 0) & (depth == depth) & (depth < std::numeric_limits<double>::infinity());
  cv::Mat d(depth.size(), CV_32FC1, cv::Scalar(0));
  depth.copyTo(d, kept);
  cv::Mat color, mask;
  if (side && !side->color.empty()) color = cv::imread(side->color.string(), cv::IMREAD_COLOR);
  if (side && !side->mask.empty()) mask = cv::imread(side->mask.string(), cv::IMREAD_UNCHANGED);
  const bool have_mask = !mask.empty() && mask.size() == d.size() && mask.channels() == 1;
  *with_inputs = have_mask;
  cv::Mat preview = make_preview(color, have_mask ? mask : cv::Mat(d.size(), CV_8UC1, cv::Scalar(0)), d, 0.0f);
  if (!have_mask) preview(cv::Rect(d.cols, 0, d.cols, d.rows)).setTo(cv::Scalar(96, 96, 96));
  return preview;
}

// The reason image ({stem}.reason.png, codes 0..8) in the colours of kReasonStyles.
cv::Mat reason_panel(const fs::path& p, cv::Size size) {
  std::error_code ec;
  if (!fs::is_regular_file(p, ec)) return cv::Mat();
  const cv::Mat codes = cv::imread(p.string(), cv::IMREAD_UNCHANGED);
  if (codes.empty() || codes.type() != CV_8UC1) return cv::Mat();
  cv::Mat lut(1, 256, CV_8UC3, cv::Scalar(255, 0, 255));  // a code outside the table: magenta
  for (size_t i = 0; i < kReasonStyles.size(); ++i)
    lut.at<cv::Vec3b>(0, static_cast<int>(i)) = cv::Vec3b(kReasonStyles[i].b, kReasonStyles[i].g, kReasonStyles[i].r);
  cv::Mat bgr, out;
  cv::cvtColor(codes, bgr, cv::COLOR_GRAY2BGR);
  cv::LUT(bgr, lut, out);
  if (out.size() != size) cv::resize(out, out, size, 0, 0, cv::INTER_NEAREST);
  return out;
}

// The thumbnail of one frame as a data: URI (JPEG), empty when nothing of it reads.
struct Thumbnail {
  std::string uri;
  bool composed = false;     // not the run's preview
  bool with_inputs = false;  // composed with the frame's mask (and colour, when it has one)
  bool reason = false;       // has the reason panel
};

Thumbnail thumbnail(const fs::path& dir, const ReportFrame& f, const Sidecar* side, int panel_width) {
  Thumbnail t;
  cv::Mat strip;
  std::string depth_stem;  // the frame's outputs' stem, for the reason file
  for (const std::string& name : f.files) {
    if (ends_with(name, ".preview.png")) {
      strip = cv::imread((dir / name).string(), cv::IMREAD_COLOR);
      depth_stem = name.substr(0, name.size() - std::string(".preview.png").size());
    }
  }
  if (strip.empty()) {
    strip = compose_preview(dir, f, side, &t.with_inputs);
    t.composed = !strip.empty();
  }
  if (strip.empty() || strip.cols < 3) return t;
  // The outputs' stem: a file's name without the extension of its format (stems may hold dots:
  // output.layout mirror's frame-000003.depth).
  for (const std::string& name : f.files)
    for (const char* ext : {".tiff", ".npy", ".exr", ".mm.png", ".ply", ".json"})
      if (depth_stem.empty() && ends_with(name, ext)) depth_stem = name.substr(0, name.size() - std::strlen(ext));
  const fs::path reason_file = dir / (depth_stem + ".reason.png");
  std::error_code ec;
  const cv::Mat codes =
      fs::exists(reason_file, ec) ? cv::imread(reason_file.string(), cv::IMREAD_UNCHANGED) : cv::Mat();
  if (!t.composed && !codes.empty() && strip.cols == 4 * codes.cols && strip.rows == codes.rows) {
    t.reason = true;  // the run's preview drew the reason panel already
  } else {
    const int w = strip.cols / 3;
    cv::Mat reason = reason_panel(reason_file, cv::Size(w, strip.rows));
    if (!reason.empty()) {
      cv::hconcat(std::vector<cv::Mat>{strip, reason}, strip);
      t.reason = true;
    }
  }
  const int panels = t.reason ? 4 : 3;
  const double scale = static_cast<double>(panel_width * panels) / strip.cols;
  cv::Mat small;
  cv::resize(strip, small, cv::Size(), scale, scale, cv::INTER_AREA);
  std::vector<uint8_t> jpg;
  if (!cv::imencode(".jpg", small, jpg, {cv::IMWRITE_JPEG_QUALITY, 85})) return t;
  t.uri = "data:image/jpeg;base64," + base64(jpg);
  return t;
}

// Which frames the contact sheet shows, in order: the lowest and the highest kept fractions first
// (a quarter of the sheet each, at most 6), then frames evenly spaced over the listing.
std::vector<std::pair<size_t, std::string>> pick_frames(const std::vector<ReportFrame>& frames, size_t n) {
  std::vector<std::pair<size_t, std::string>> picked;
  std::set<size_t> taken;
  auto take = [&](size_t i, const char* why) {
    if (picked.size() < n && taken.insert(i).second) picked.emplace_back(i, why);
  };
  std::vector<size_t> by_kept;
  for (size_t i = 0; i < frames.size(); ++i)
    if (frames[i].stats && frames[i].stats->pixels > 0) by_kept.push_back(i);
  std::stable_sort(by_kept.begin(), by_kept.end(), [&](size_t a, size_t b) {
    return frames[a].stats->kept_fraction() < frames[b].stats->kept_fraction();
  });
  const size_t ends = std::min<size_t>({6, std::max<size_t>(n / 4, 1), (by_kept.size() + 1) / 2});
  for (size_t i = 0; i < ends; ++i) take(by_kept[i], "lowest kept");
  for (size_t i = 0; i < ends; ++i) take(by_kept[by_kept.size() - 1 - i], "highest kept");
  const size_t rest = n - std::min(n, picked.size());
  if (rest > 0 && !frames.empty()) {
    for (size_t k = 0; k < rest; ++k) take(rest == 1 ? 0 : k * (frames.size() - 1) / (rest - 1), "sample");
    for (size_t i = 0; i < frames.size() && picked.size() < n; ++i) take(i, "sample");  // collisions
  }
  return picked;
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

}  // namespace

fs::path write_report(const fs::path& dir, const ReportOptions& o) {
  DM_EXPECT(o.thumbnails >= 1 && o.thumbnail_width >= 16, ConfigError,
            "report: --thumbnails must be at least 1 (got " << o.thumbnails << ")");
  std::error_code ec;
  DM_EXPECT(fs::is_directory(dir, ec), InputError, "report: '" << dir.string() << "' is not a folder");

  // The records: the manifest's (and its failures), else the sidecars'.
  std::vector<ReportFrame> frames;
  FrameStats all;  // every frame's, summed: the histogram
  std::vector<ManifestFailure> failures;
  // Every manifest of the folder (list_manifests: the unsharded one first, then the shards'): a frame
  // counts once, from the first that records it; a failure only while no manifest records the frame
  // done. A manifest of other settings than the first describes other outputs: left out.
  std::optional<ManifestHead> head;  // the first manifest's
  std::vector<std::string> manifests_read;
  std::vector<Shard> shards_read;
  std::set<std::string> done_keys;
  std::vector<std::pair<std::string, ManifestFailure>> keyed_failures;
  for (const ManifestFileName& m : list_manifests(dir)) {
    if (!m.recognised) continue;
    std::ifstream in(m.path, std::ios::binary);
    DM_EXPECT(in, InputError, "'" << m.path.string() << "' cannot be opened for reading");
    std::vector<ReportFrame> mine;
    FrameStats mine_sum;
    std::vector<std::pair<std::string, ManifestFailure>> mine_failures;
    const ManifestHead h = read_manifest(
        in, m.path.string(),
        [&](const std::string& key, ManifestRecord&& r) {
          if (done_keys.count(key) != 0) return;
          // A frame keeps its counts; its histogram goes into the sum (a million frames' histograms
          // are not held).
          if (r.stats) {
            mine_sum.add(*r.stats);
            r.stats->hist = {};
          }
          ReportFrame f{key, std::move(r.id), {}, std::move(r.stats)};
          for (OutputFile& file : r.files) f.files.push_back(std::move(file.name));
          mine.push_back(std::move(f));
        },
        [&](const std::string& key, ManifestFailure&& f) { mine_failures.emplace_back(key, std::move(f)); });
    if (head && h.settings != head->settings) {
      detail::log().warn("report: leaving out '{}': its settings ({}) are not those of '{}' ({})", m.path.string(),
                         h.settings, manifests_read.front(), head->settings);
      continue;
    }
    if (!head) head = h;
    manifests_read.push_back(m.path.filename().string());
    if (m.shard) shards_read.push_back(*m.shard);
    all.add(mine_sum);
    for (ReportFrame& f : mine) {
      done_keys.insert(f.key);
      frames.push_back(std::move(f));
    }
    for (auto& kf : mine_failures) keyed_failures.push_back(std::move(kf));
  }
  std::set<std::string> failed_keys;
  for (auto& [key, f] : keyed_failures)
    if (done_keys.count(key) == 0 && failed_keys.insert(key).second) failures.push_back(std::move(f));
  // Sidecars: the frames themselves without a manifest (all of them: the live runner's folders), and
  // with one the inputs behind composed thumbnails (only the sheet's: read when needed).
  std::map<std::string, Sidecar> sidecars;  // by path relative to dir, without ".json"
  for (auto it = fs::recursive_directory_iterator(dir, fs::directory_options::skip_permission_denied, ec);
       !head && !ec && it != fs::recursive_directory_iterator(); it.increment(ec)) {
    const fs::path& p = it->path();
    if (!it->is_regular_file(ec) || p.extension() != ".json" || p.filename().string().rfind("depthmask-", 0) == 0)
      continue;
    if (auto s = read_sidecar(p)) {
      const std::string rel = p.lexically_relative(dir).generic_string();
      sidecars.emplace(rel.substr(0, rel.size() - 5), std::move(*s));
    }
  }
  DM_EXPECT(head || !sidecars.empty(), InputError,
            "report: '" << dir.string() << "' holds no " << kManifestName
                        << " and no frame sidecars ({id}.json): nothing to report (is it a depthmask output folder?)");
  if (!head) {
    for (auto& [stem, s] : sidecars) {
      ReportFrame f{stem, s.id, {}, FrameStats{s.kept, s.pixels, {}}};
      const size_t slash = stem.find_last_of('/');
      const std::string folder = slash == std::string::npos ? "" : stem.substr(0, slash + 1);
      for (const std::string& out : s.outputs) f.files.push_back(folder + out);
      f.files.push_back(stem + ".json");
      frames.push_back(std::move(f));
    }
  }
  // Without a sidecar, a frame's inputs come from the run's own configuration (the run record's
  // effective YAML): its listing, keyed as the manifest is (manifest_key). Listed once, when a
  // thumbnail first needs it.
  nlohmann::json record;
  std::map<std::string, Sidecar> listed;
  bool listed_tried = false;
  auto list_inputs = [&] {
    listed_tried = true;
    if (!record.is_object() || !record.contains("config") || !record["config"].is_string()) return;
    try {
      const std::string name = (dir / kRunRecordName).string();  // in messages only
      // The record spells out every key; read back only those that differ from the defaults, as a
      // file of the user's would say them, so listing warns about none of them.
      const Config full = load_config_text(record["config"].get<std::string>(), name, dir, {});
      const Config c = load_config_text(to_yaml_changed(full), name, dir, {});
      for (const FrameEntry& e : resolve_input(c).listing.frames) {
        Sidecar s;
        s.id = e.id;
        s.color = e.color;
        s.mask = !e.mask.empty() ? e.mask : e.instances.empty() ? fs::path() : e.instances.front().second;
        listed.emplace(manifest_key(e), std::move(s));
      }
    } catch (const std::exception& e) {
      detail::log().info("report: the run's inputs are not readable ({}): thumbnails show no colour or mask", e.what());
    }
  };
  auto sidecar_of = [&](const ReportFrame& f) -> const Sidecar* {
    for (const std::string& name : f.files)
      if (ends_with(name, ".json")) {
        const auto it = sidecars.find(name.substr(0, name.size() - 5));
        if (it != sidecars.end()) return &it->second;
        if (auto s = read_sidecar(dir / name))
          return &sidecars.emplace(name.substr(0, name.size() - 5), *s).first->second;
      }
    if (!listed_tried) list_inputs();
    const auto it = listed.find(f.key);
    return it == listed.end() ? nullptr : &it->second;
  };

  // The run record, when the run wrote one: depthmask-run.json, else the records of the shards whose
  // manifests were read, their counts summed (their configurations differ only in run.shard).
  auto read_record = [&](const fs::path& path) -> nlohmann::json {
    if (!fs::exists(path, ec)) return nullptr;
    try {
      nlohmann::json j = nlohmann::json::parse(read_text(path, "run record"));
      if (j.is_object()) return j;
      detail::log().warn("report: ignoring '{}': not a JSON object", path.string());
    } catch (const std::exception& e) {
      detail::log().warn("report: ignoring '{}': {}", path.string(), e.what());
    }
    return nullptr;
  };
  record = read_record(dir / kRunRecordName);
  nlohmann::json summary = record.is_object() ? record.value("summary", nlohmann::json()) : nlohmann::json();
  size_t shard_records = 0;
  if (!record.is_object())
    for (const Shard& k : shards_read) {
      const nlohmann::json r = read_record(dir / run_record_name(k));
      if (!r.is_object() || !r.contains("summary") || !r["summary"].is_object()) continue;
      const nlohmann::json& s = r["summary"];
      if (shard_records++ == 0) {
        record = r;
        summary = s;
        continue;
      }
      for (const char* key : {"total", "ok", "failed", "skipped", "skipped_done"})
        summary[key] = summary.value(key, uint64_t{0}) + s.value(key, uint64_t{0});
      summary["seconds"] = std::max(summary.value("seconds", 0.0), s.value("seconds", 0.0));
      if (s.value("interrupted", false)) summary["interrupted"] = true;
      if (summary.value("manifest_error", std::string()).empty() && !s.value("manifest_error", std::string()).empty())
        summary["manifest_error"] = s["manifest_error"];
      if (s.contains("failures") && s["failures"].is_array()) {
        if (!summary.contains("failures") || !summary["failures"].is_array())
          summary["failures"] = nlohmann::json::array();
        for (const auto& f : s["failures"]) summary["failures"].push_back(f);
      }
    }
  if (shard_records > 1) {
    const double seconds = summary.value("seconds", 0.0);
    summary["fps"] = seconds > 0 ? static_cast<double>(summary.value("ok", uint64_t{0})) / seconds : 0.0;
  }
  if (!head && summary.is_object() && summary.contains("failures") && summary["failures"].is_array())
    for (const auto& f : summary["failures"]) {
      ManifestFailure mf;
      mf.id = f.value("id", "");
      mf.message = f.value("message", "");
      const std::string cls = f.value("failure", "input");
      for (const Failure k : {Failure::Input, Failure::Platform, Failure::Resource, Failure::Internal})
        if (to_string(k) == cls) mf.failure = k;
      failures.push_back(std::move(mf));
    }

  std::ostringstream p;
  p << "<!DOCTYPE html>\n<html lang=\"en\" data-selfcheck=\"pending\">\n<head>\n<meta charset=\"utf-8\">\n"
    << "<meta name=\"viewport\" content=\"width=device-width, initial-scale=1\">\n<title>depthmask report: "
    << html(dir.filename().string()) << "</title>\n"
    << kSelfCheck << "\n"
    << kStyle << "\n</head>\n<body>\n<h1>depthmask report: " << html(dir.string()) << "</h1>\n";

  // Summary.
  p << "<h2 id=\"summary\">Summary</h2>\n<table class=\"summary\">\n";
  auto row = [&](const std::string& k, const std::string& v) {
    p << "<tr><th>" << html(k) << "</th><td>" << html(v) << "</td></tr>\n";
  };
  if (record.is_object()) {
    row("depthmask", record.value("depthmask", "?"));
    row("date", record.value("date", "?"));
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
    if (shard_records > 0)
      row("run records", grouped(shard_records) + " shard(s)' (depthmask-run.shard-K-of-N.json), counts summed");
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

  // Contact sheet.
  const auto picked = pick_frames(frames, o.thumbnails);
  p << "<h2 id=\"sheet\">Contact sheet</h2>\n<p class=\"shown\">" << grouped(picked.size()) << " of "
    << grouped(frames.size()) << " frames shown: colour | mask | masked depth";
  std::ostringstream sheet;
  size_t composed = 0, without_inputs = 0, missing = 0;
  bool any_reason = false;
  for (const auto& [i, why] : picked) {
    const ReportFrame& f = frames[i];
    const Thumbnail t = thumbnail(dir, f, sidecar_of(f), o.thumbnail_width);
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

  p << "<h2 id=\"kept\">Kept fraction per frame</h2>\n" << kept_plot(frames) << "\n";
  p << "<h2 id=\"histogram\">Kept depth</h2>\n" << depth_histogram(all.hist, head ? head->hist : std::nullopt) << "\n";

  p << "<h2 id=\"failures\">Failures</h2>\n";
  if (failures.empty()) {
    p << "<p>None recorded.</p>\n";
  } else {
    p << "<table class=\"failures\"><tr><th>frame</th><th>class</th><th>message</th></tr>\n";
    for (const ManifestFailure& f : failures)
      p << "<tr><td>" << html(f.id) << "</td><td>" << to_string(f.failure) << "</td><td class=\"msg\">"
        << html(f.message) << "</td></tr>\n";
    p << "</table>\n";
  }

  p << "<h2 id=\"settings\">Settings</h2>\n";
  if (record.is_object() && record.contains("config") && record["config"].is_string())
    p << "<pre class=\"config\">" << html(record["config"].get<std::string>()) << "</pre>\n";
  else
    p << "<p class=\"na\">n/a (no " << kRunRecordName << ")</p>\n";
  p << "</body>\n</html>\n";

  fs::path out = o.out.empty() ? dir / kReportName : o.out;
  // Messages and ids may hold any bytes; the page is declared UTF-8 and browsers replace what is not.
  const std::string text = p.str();
  write_file_atomic(out, text.data(), text.size(), false);
  return out;
}

}  // namespace depthmask
