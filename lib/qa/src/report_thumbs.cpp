// The report's thumbnails (report_parts.h): the run's preview, or one composed from the frame's
// outputs and inputs, with the reason panel when the run wrote one; and which frames get one.

#include <opencv2/imgcodecs.hpp>
#include <opencv2/imgproc.hpp>

#include <algorithm>
#include <cstring>
#include <limits>
#include <set>
#include <system_error>

#include "depthmask/detail/exr_codec.h"
#include "depthmask/detail/log.h"
#include "depthmask/encoders.h"
#include "depthmask/reason.h"
#include "report_parts.h"

namespace fs = std::filesystem;

namespace depthmask::report_parts {

namespace {

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
        const std::string t = read_text(p);
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
cv::Mat compose_preview(const fs::path& dir, const ReportFrame& f, const SidecarInfo* side, bool* with_inputs) {
  cv::Mat depth = read_masked_depth(dir, f.files);
  if (depth.empty() && side) depth = read_masked_depth(dir, side->outputs);
  if (depth.empty()) return cv::Mat();
  // Every pixel not kept to 0, whatever output.invalid was (kept: finite and > 0).
  cv::Mat kept = (depth > 0) & (depth == depth) & (depth < std::numeric_limits<double>::infinity());
  cv::Mat d(depth.size(), CV_32FC1, cv::Scalar(0));
  depth.copyTo(d, kept);
  cv::Mat color, mask;
  if (side && !side->color_file.empty()) color = cv::imread(side->color_file.string(), cv::IMREAD_COLOR);
  if (side && !side->mask_file.empty()) mask = cv::imread(side->mask_file.string(), cv::IMREAD_UNCHANGED);
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

}  // namespace

Thumbnail thumbnail(const fs::path& dir, const ReportFrame& f, const SidecarInfo* side, int panel_width) {
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

}  // namespace depthmask::report_parts
