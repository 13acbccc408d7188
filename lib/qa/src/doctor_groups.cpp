// A folder no layout knows (detail/doctor_propose.h): its files grouped by the digit run that varies,
// and each group classified by what its files hold, read as `run` reads them (ImageReader: three
// equal channels of depth are depth, an indexed PNG's pixels are its palette indices).
#include <opencv2/imgcodecs.hpp>

#include <algorithm>
#include <bitset>
#include <cctype>
#include <cmath>
#include <cstdio>
#include <map>
#include <memory>
#include <system_error>

#include "depthmask/dataset.h"
#include "depthmask/detail/exr_codec.h"
#include "depthmask/errors.h"
#include "depthmask/frame.h"
#include "depthmask/image_reader.h"
#include "doctor_propose.h"

namespace fs = std::filesystem;

namespace depthmask::detail {

const char* to_string(GroupKind kind) {
  switch (kind) {
    case GroupKind::Depth:
      return "depth";
    case GroupKind::Mask:
      return "mask";
    case GroupKind::Color:
      return "color";
    case GroupKind::Intrinsics:
      return "intrinsics";
    case GroupKind::Other:
      break;
  }
  return "other";
}

namespace {

// A mask or label image holds few values; depth, grey and colour images many (64: more classes than a
// scene's label image has, fewer values than any real depth or grey image).
constexpr size_t kFewValues = 64;
// Intrinsics files are small; a bigger text file is not read.
constexpr uintmax_t kMaxIntrinsicsBytes = uintmax_t{64} * 1024;

std::string lower(std::string s) {
  for (char& ch : s) ch = static_cast<char>(std::tolower(static_cast<unsigned char>(ch)));
  return s;
}

// The extension of the last component ("" for none or a leading dot), lower-cased, with its dot.
std::string extension_of(const std::string& name) {
  const size_t slash = name.rfind('/');
  const size_t start = slash == std::string::npos ? 0 : slash + 1;
  const size_t dot = name.rfind('.');
  return dot == std::string::npos || dot <= start ? std::string() : lower(name.substr(dot));
}

bool is_image_extension(const std::string& e) {
  for (const char* x : {".png", ".jpg", ".jpeg", ".exr", ".tif", ".tiff", ".bmp", ".pgm", ".ppm", ".webp", ".jp2"})
    if (e == x) return true;
  return false;
}

bool is_text_extension(const std::string& e) { return e == ".yaml" || e == ".yml" || e == ".txt"; }

// The digit runs of `name` before its extension: {start, length}.
std::vector<std::pair<size_t, size_t>> digit_runs(const std::string& name) {
  const std::string ext = extension_of(name);
  const size_t end = name.size() - ext.size();
  std::vector<std::pair<size_t, size_t>> runs;
  for (size_t i = 0; i < end;) {
    if (!std::isdigit(static_cast<unsigned char>(name[i]))) {
      ++i;
      continue;
    }
    size_t j = i;
    while (j < end && std::isdigit(static_cast<unsigned char>(name[j]))) ++j;
    runs.emplace_back(i, j - i);
    i = j;
  }
  return runs;
}

std::string with_id(const std::string& name, std::pair<size_t, size_t> run) {
  return name.substr(0, run.first) + "{id}" + name.substr(run.first + run.second);
}

// Distinct values of an 8- or 16-bit single-channel image, counted up to kFewValues * 4 + 1.
size_t distinct_values(const cv::Mat& m) {
  const size_t cap = kFewValues * 4 + 1;
  auto bits = std::make_unique<std::bitset<65536>>();
  size_t n = 0;
  for (int y = 0; y < m.rows; ++y)
    for (int x = 0; x < m.cols; ++x) {
      const unsigned v = m.depth() == CV_8U ? m.at<uint8_t>(y, x) : m.at<uint16_t>(y, x);
      if (bits->test(v)) continue;
      bits->set(v);
      if (++n >= cap) return n;
    }
  return n;
}

// The share of pixels with a depth: finite and not zero (depth as `run` reads it, one channel).
double valid_share(const cv::Mat& d) {
  if (d.empty()) return 0;
  size_t valid = 0;
  for (int y = 0; y < d.rows; ++y)
    for (int x = 0; x < d.cols; ++x) {
      const double v = d.depth() == CV_32F ? static_cast<double>(d.at<float>(y, x)) : d.at<uint16_t>(y, x);
      valid += std::isfinite(v) && v != 0 ? 1 : 0;
    }
  return static_cast<double>(valid) / static_cast<double>(d.total());
}

std::string bits_text(int depth) {
  switch (depth) {
    case CV_8U:
      return "8-bit";
    case CV_16U:
      return "16-bit";
    case CV_16F:
      return "16-bit float";
    case CV_32F:
      return "32-bit float";
    case CV_64F:
      return "64-bit float";
    default:
      return "unusual";
  }
}

// One sampled file: what it holds.
struct Look {
  GroupKind kind = GroupKind::Other;
  std::string what;
  double valid = 0;
  size_t values = 0;
  bool sixteen = false;
};

Look depth_look(const fs::path& file, ImageReader& reader, const std::string& stored) {
  Look l;
  cv::Mat d;
  try {
    reader.read(file, ImageRole::Depth, d);
  } catch (const InputError& e) {
    l.what = stored + ", not depth as `run` reads it (" + e.what() + ")";
    return l;
  }
  l.kind = GroupKind::Depth;
  l.valid = valid_share(d);
  l.sixteen = d.depth() == CV_16U;
  l.what = stored + (reader.last_stored_channels() == 3 ? " (3 equal channels, read as one)" : "");
  return l;
}

Look look_at(const fs::path& file, ImageReader& reader) {
  Look l;
  std::vector<uint8_t> bytes;
  read_image_file(file, "input", bytes, reader.limits());
  enable_exr_codec_for(bytes.data(), bytes.size());
  const cv::Mat raw = cv::imdecode(bytes, cv::IMREAD_UNCHANGED);
  if (raw.empty()) {
    l.what = "not an image OpenCV decodes";
    return l;
  }
  const int depth = raw.depth(), ch = raw.channels();
  const std::string stored = bits_text(depth) + ", " + std::to_string(ch) + (ch == 1 ? " channel, " : " channels, ") +
                             std::to_string(raw.cols) + "x" + std::to_string(raw.rows);
  const bool floating = depth == CV_16F || depth == CV_32F || depth == CV_64F;
  if ((depth == CV_8U || depth == CV_16U) && ch == 1) {
    l.values = distinct_values(raw);
    const std::string values = l.values > kFewValues ? "many values" : std::to_string(l.values) + " values";
    if (l.values <= kFewValues) {
      l.kind = GroupKind::Mask;
      l.what = stored + ", " + values;
      return l;
    }
    if (depth == CV_16U) return depth_look(file, reader, stored);
    l.what = stored + ", " + values + ": a grey image";
    return l;
  }
  if (floating || depth == CV_16U) return depth_look(file, reader, stored);
  if (depth == CV_8U && (ch == 3 || ch == 4)) {
    // An indexed-colour PNG decodes to colour in OpenCV; `run` reads a mask's palette indices.
    if (extension_of(file.filename().string()) == ".png") {
      try {
        cv::Mat m;
        reader.read(file, ImageRole::Mask, m);
        l.kind = GroupKind::Mask;
        l.values = distinct_values(m);
        l.what = "an indexed-colour PNG (its palette indices are the labels), " + std::to_string(l.values) + " values";
        return l;
      } catch (const InputError&) {  // not indexed: colour
      }
    }
    l.kind = GroupKind::Color;
    l.what = stored;
    return l;
  }
  l.what = stored;
  return l;
}

void classify_text(FileGroup& g) {
  const fs::path& file = g.ids.front().second;
  std::error_code ec;
  const uintmax_t size = fs::file_size(file, ec);
  if (ec || size > kMaxIntrinsicsBytes) {
    g.what = "a text file too big for intrinsics";
    return;
  }
  try {
    g.k = read_intrinsics_file(file);
  } catch (const Error& e) {
    g.what = std::string("not intrinsics the run reads: ") + e.what();
    return;
  }
  g.kind = GroupKind::Intrinsics;
  char buf[160];
  std::snprintf(buf, sizeof buf, "fx %.6g, fy %.6g, cx %.6g, cy %.6g", g.k.fx, g.k.fy, g.k.cx, g.k.cy);
  g.what = buf;
  if (g.k.width > 0) g.what += ", for " + std::to_string(g.k.width) + "x" + std::to_string(g.k.height);
}

}  // namespace

std::vector<std::string> list_names(const fs::path& root, size_t levels, size_t limit) {
  std::vector<std::string> out;
  std::error_code ec;
  fs::recursive_directory_iterator it(
      root, fs::directory_options::follow_directory_symlink | fs::directory_options::skip_permission_denied, ec);
  for (; !ec && it != fs::recursive_directory_iterator() && out.size() < limit; it.increment(ec)) {
    const std::string name = it->path().filename().string();
    std::error_code e2;
    if (!name.empty() && name.front() == '.') {
      if (it->is_directory(e2)) it.disable_recursion_pending();
      continue;
    }
    if (static_cast<size_t>(it.depth()) >= levels) it.disable_recursion_pending();
    if (it->is_regular_file(e2)) out.push_back(it->path().lexically_relative(root).generic_string());
  }
  return out;
}

std::vector<FileGroup> group_names(const std::vector<std::string>& names, const fs::path& root) {
  std::map<std::string, size_t> count;  // pattern -> files it would group
  std::vector<std::vector<std::pair<size_t, size_t>>> runs(names.size());
  for (size_t i = 0; i < names.size(); ++i) {
    runs[i] = digit_runs(names[i]);
    for (const auto& r : runs[i]) ++count[with_id(names[i], r)];
  }
  std::map<std::string, FileGroup> groups;
  for (size_t i = 0; i < names.size(); ++i) {
    const std::pair<size_t, size_t>* best = nullptr;
    size_t best_count = 0;
    for (const auto& r : runs[i]) {
      const size_t n = count[with_id(names[i], r)];
      if (!best || n > best_count || (n == best_count && r.second >= best->second)) best = &r, best_count = n;
    }
    const std::string pattern = best ? with_id(names[i], *best) : names[i];
    const std::string id = best ? names[i].substr(best->first, best->second) : std::string();
    FileGroup& g = groups[pattern];
    g.pattern = pattern;
    g.ids.emplace_back(id, (root / names[i]).lexically_normal());
  }
  std::vector<FileGroup> out;
  out.reserve(groups.size());
  for (auto& [pattern, g] : groups) {
    std::sort(g.ids.begin(), g.ids.end(), [](const auto& a, const auto& b) { return natural_less(a.first, b.first); });
    out.push_back(std::move(g));
  }
  // The largest groups first (the frames), then by pattern.
  std::stable_sort(out.begin(), out.end(),
                   [](const FileGroup& a, const FileGroup& b) { return a.ids.size() > b.ids.size(); });
  return out;
}

void classify(FileGroup& g, const Config& config) {
  if (g.ids.empty()) return;
  const std::string ext = extension_of(g.pattern);
  if (is_text_extension(ext)) {
    classify_text(g);
    return;
  }
  if (!is_image_extension(ext)) {
    g.what = "not an image or intrinsics file";
    return;
  }
  ImageReader reader(input_limits(config));
  std::vector<size_t> sampled{0};
  if (g.ids.size() > 1) sampled.push_back(g.ids.size() - 1);
  std::vector<Look> looks;
  for (size_t i : sampled) {
    try {
      looks.push_back(look_at(g.ids[i].second, reader));
    } catch (const Error& e) {
      Look l;
      l.what = e.what();
      looks.push_back(l);
    }
  }
  g.kind = looks.front().kind;
  g.what = looks.front().what;
  for (const Look& l : looks) {
    if (l.kind != g.kind) {
      g.kind = GroupKind::Other;
      g.what = "its files differ: " + looks.front().what + "; " + l.what;
      return;
    }
    g.valid += l.valid / static_cast<double>(looks.size());
    g.values = std::max(g.values, l.values);
    g.sixteen = g.sixteen || l.sixteen;
  }
}

}  // namespace depthmask::detail
