// `depthmask doctor` (doctor.h): the checks, in report order, and the report's three forms.
#include "depthmask/doctor.h"

#include <nlohmann/json.hpp>

#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstdio>
#include <fstream>
#include <map>
#include <optional>
#include <system_error>
#include <unordered_set>

#include "depthmask/backend.h"
#include "depthmask/detail/dataset_patterns.h"
#include "depthmask/detail/enum_names.h"
#include "depthmask/detail/image_header.h"
#include "depthmask/detail/layout_readers.h"
#include "depthmask/encoders.h"
#include "depthmask/errors.h"
#include "depthmask/frame.h"
#include "depthmask/layouts.h"
#include "depthmask/pipeline.h"
#include "depthmask/platform.h"
#include "depthmask/registration.h"
#include "depthmask/unit_check.h"
#include "doctor_propose.h"

namespace fs = std::filesystem;

namespace depthmask {

constexpr detail::EnumName<DoctorLevel> kDoctorLevels[] = {{DoctorLevel::Ok, "ok"},
                                                           {DoctorLevel::Info, "info"},
                                                           {DoctorLevel::Warning, "warning"},
                                                           {DoctorLevel::Error, "error"}};

std::string_view to_string(DoctorLevel level) { return detail::name_of(kDoctorLevels, level); }

namespace {

using Clock = std::chrono::steady_clock;

template <class... A>
std::string fmt(const char* format, A... args) {
  char buf[256];
  std::snprintf(buf, sizeof buf, format, args...);
  return buf;
}

std::string num(double v) { return fmt("%.10g", v); }
std::string metres(double m) { return m >= 1000.0 ? fmt("%.0f m", m) : fmt("%.3g m", m); }
std::string percent(size_t part, size_t whole) {
  return whole ? fmt("%.1f %%", 100.0 * static_cast<double>(part) / static_cast<double>(whole)) : "0 %";
}
std::string size_text(int w, int h) { return std::to_string(w) + "x" + std::to_string(h); }
std::string plural(size_t n, const char* one, const char* many) {
  return std::to_string(n) + " " + (n == 1 ? one : many);
}

// Up to k indices of 0..n-1, evenly spaced, the first and the last included.
std::vector<size_t> evenly_spaced(size_t n, size_t k) {
  std::vector<size_t> v;
  if (n == 0 || k == 0) return v;
  if (k >= n) {
    for (size_t i = 0; i < n; ++i) v.push_back(i);
    return v;
  }
  if (k == 1) return {0};
  for (size_t i = 0; i < k; ++i) v.push_back(i * (n - 1) / (k - 1));
  return v;
}

// "every 1563rd of 100000 frames" or "all 8 frames": how a sample was taken, for the report.
std::string spacing(size_t taken, size_t n) {
  if (taken >= n) return "all " + plural(n, "frame", "frames");
  return std::to_string(taken) + " of " + std::to_string(n) + " frames, evenly spaced (about every " +
         std::to_string((n + taken - 1) / taken) + ")";
}

// A file's image size from its first bytes (detail/image_header.h), without decoding: PNG, JPEG, EXR
// and most TIFFs say it there. nullopt when the file cannot be read or its header is further in.
std::optional<cv::Size> header_size(const fs::path& file) {
  std::ifstream in(file, std::ios::binary);
  if (!in) return std::nullopt;
  std::vector<uint8_t> head(size_t{64} * 1024);
  in.read(reinterpret_cast<char*>(head.data()), static_cast<std::streamsize>(head.size()));
  const auto got = static_cast<size_t>(in.gcount());
  const auto s = detail::image_size(head.data(), got);
  if (!s || s->width > 1u << 30 || s->height > 1u << 30) return std::nullopt;
  return cv::Size(static_cast<int>(s->width), static_cast<int>(s->height));
}

std::string type_text(int type) {
  switch (type) {
    case CV_8UC1:
      return "8-bit";
    case CV_16UC1:
      return "16-bit";
    case CV_32FC1:
      return "32-bit float";
    case CV_8UC3:
      return "8-bit BGR";
    default:
      return "type " + std::to_string(type);
  }
}

// Counts of one property (a size, a type) over frames, with the first frames that differ from the
// most common value.
struct Tally {
  std::map<std::string, size_t> counts;
  std::map<std::string, std::vector<std::string>> first_ids;  // up to 3 frame ids per value

  void add(const std::string& value, const std::string& id) {
    ++counts[value];
    auto& ids = first_ids[value];
    if (ids.size() < 3) ids.push_back(id);
  }
  std::string common() const {
    if (counts.empty()) return "unknown";
    std::string best;
    size_t n = 0;
    for (const auto& [v, c] : counts)
      if (c > n) best = v, n = c;
    return best;
  }
  bool uniform() const { return counts.size() <= 1; }
  // "640x480 (98 frames); 320x240 (2 frames: 000007, 000012)".
  std::string describe() const {
    if (counts.empty()) return "unknown (no header could be read)";
    std::string s;
    const std::string main = common();
    for (const auto& [v, c] : counts) {
      if (!s.empty()) s += "; ";
      s += v + " (" + plural(c, "frame", "frames");
      if (v != main) {
        s += ": ";
        const auto& ids = first_ids.at(v);
        for (size_t i = 0; i < ids.size(); ++i) s += (i ? ", " : "") + ids[i];
        if (c > ids.size()) s += ", ...";
      }
      s += ")";
    }
    return s;
  }
};

// What the decoded sample showed: gathered by the masked-frame hook, judged by the checks.
struct SampleStats {
  Tally depth_types, mask_types;
  std::vector<std::pair<std::string, std::string>> failures;  // frame id, message
  std::vector<float> valid_depth_m;                           // a subsample of every frame's valid depth
  size_t valid_pixels = 0, valid_in_range = 0, depth_pixels = 0;
  bool float_depth = false, own_scale = false;
  // Masks of their own values (not instance unions): a histogram of the values seen.
  std::vector<uint64_t> mask_hist;  // 65536 bins when any mask was seen
  size_t mask_frames = 0, mask_pixels = 0, mask_pass = 0, frames_mask_all = 0;
  size_t passes = 0, passes_keeping_nothing = 0, kept = 0, out_pixels = 0;
  size_t three_channel = 0;  // depth files stored as 3 equal channels (FrameSlot::depth_stored_channels)
  std::string three_channel_example;
  cv::Size first_grid;  // the first masked output's size (the grid intrinsics apply to)
  std::string first_grid_id;
};

template <class T>
void add_valid_depth(SampleStats& s, const cv::Mat& depth, const MaskParams& p) {
  // At most 16384 values a frame: the median of a million is as good as that of all of them.
  const size_t total = depth.total();
  const size_t stride = std::max<size_t>(1, total / 16384);
  size_t i = 0;
  for (int y = 0; y < depth.rows; ++y) {
    const T* row = depth.ptr<T>(y);
    for (int x = 0; x < depth.cols; ++x, ++i) {
      float m = 0;
      if constexpr (std::is_same_v<T, uint16_t>) {
        const uint16_t v = decode_depth_raw(row[x], p);
        if (v == 0) continue;
        m = depth_metres(v, p);
        ++s.valid_pixels;
        if (v >= p.raw_min && v <= p.raw_max) ++s.valid_in_range;
      } else {
        m = row[x];
        if (!finite_f(m) || !(m > 0.0f)) continue;
        ++s.valid_pixels;
        if (m >= p.min_m && m <= p.max_m) ++s.valid_in_range;
      }
      if (i % stride == 0) s.valid_depth_m.push_back(m);
    }
  }
  s.depth_pixels += total;
}

template <class T>
void add_mask(SampleStats& s, const cv::Mat& mask, const MaskParams& p) {
  if (s.mask_hist.empty()) s.mask_hist.assign(65536, 0);
  size_t pass = 0;
  for (int y = 0; y < mask.rows; ++y) {
    const T* row = mask.ptr<T>(y);
    for (int x = 0; x < mask.cols; ++x) {
      ++s.mask_hist[row[x]];
      pass += mask_keeps(row[x], p) ? 1 : 0;
    }
  }
  ++s.mask_frames;
  s.mask_pixels += mask.total();
  s.mask_pass += pass;
  if (pass == mask.total()) ++s.frames_mask_all;
}

std::string yaml_quote(const std::string& s) {
  std::string q = "\"";
  for (char ch : s) {
    if (ch == '"' || ch == '\\') q += '\\';
    q += ch;
  }
  return q + "\"";
}

std::string list_text(const std::vector<uint32_t>& v) {
  std::string s = "[";
  for (size_t i = 0; i < v.size(); ++i) s += (i ? ", " : "") + std::to_string(v[i]);
  return s + "]";
}

class Doctor {
 public:
  Doctor(const Config& c, const DoctorOptions& o) : given_(c), o_(o) { r_.root = c.input.root.string(); }

  DoctorReport run() {
    const Clock::time_point t0 = Clock::now();
    if (resolve()) {
      pairing();
      skipped();
      sizes();
      decode_sample();
      types();
      three_channel();
      decoded();
      units();
      intrinsics();
      mask_rule();
    }
    r_.seconds = std::chrono::duration<double>(Clock::now() - t0).count();
    return std::move(r_);
  }

 private:
  void add(const char* id, DoctorLevel level, std::string title, std::string detail = {}, std::string hint = {}) {
    r_.checks.push_back({id, level, std::move(title), std::move(detail), std::move(hint)});
  }
  void suggest(const std::string& key, const std::string& value) {
    for (auto& kv : r_.suggested)
      if (kv.first == key) {
        kv.second = value;
        return;
      }
    r_.suggested.emplace_back(key, value);
  }
  const Config& cfg() const { return in_.config; }

  // The layout and the frames (resolve_input, as `run` starts).
  bool resolve() {
    try {
      in_ = resolve_input(given_);
    } catch (const InputError& e) {
      std::error_code ec;
      bool unknown_folder = false;  // no layout's marker files: propose patterns from the file names
      if (fs::is_directory(given_.input.root, ec)) {
        const LayoutGuess g = given_.input.layout == InputLayout::Auto
                                  ? detect_layout(given_.input.root)
                                  : LayoutGuess{given_.input.layout, "set by input.layout"};
        r_.layout = std::string(to_string(g.layout));
        r_.layout_reason = g.reason;
        add("layout", DoctorLevel::Info, "layout " + r_.layout + ": " + r_.layout_reason);
        unknown_folder = g.layout == InputLayout::Pattern;
      }
      add("frames", DoctorLevel::Error, "no frames: the input cannot be listed", e.what(),
          "check input.root, the input.depth / input.mask patterns or input.layout (`depthmask run --print-config` "
          "shows them)");
      if (unknown_folder && o_.propose) detail::propose_patterns(given_, o_, r_);
      return false;
    }
    r_.layout = std::string(to_string(in_.layout));
    r_.layout_reason = in_.reason;
    r_.frames = in_.listing.frames.size();
    add("layout", DoctorLevel::Ok, "layout " + r_.layout + ": " + r_.layout_reason);
    std::error_code ec;
    const fs::path root = fs::weakly_canonical(fs::absolute(given_.input.root, ec), ec);
    suggest("input.root", yaml_quote((ec ? given_.input.root : root).generic_string()));
    suggest("input.layout", r_.layout);
    if (in_.depth_from_depth_camera) geometry_ = in_.geometry;
    // A registration.mode the input cannot serve (reproject without a camera geometry) is a
    // configuration error, exit 2, as in `run`.
    check_registration(cfg().registration.mode, geometry_);
    if (r_.frames == 0)
      add("frames", DoctorLevel::Error, "no frames listed");
    else
      add("frames", DoctorLevel::Ok, plural(r_.frames, "frame", "frames") + " listed");
    return r_.frames > 0;
  }

  // Depth without mask (every frame's mask is stat'ed), mask without depth (the mask pattern's matches
  // whose id is no frame's), TUM depth images without an rgb image within input.max_time_diff.
  void pairing() {
    const auto& frames = in_.listing.frames;
    std::vector<std::string> lacking;
    size_t no_mask = 0;
    for (const FrameEntry& f : frames) {
      if (!f.instances.empty()) continue;
      std::error_code ec;
      if (fs::is_regular_file(f.mask, ec)) continue;
      if (++no_mask <= 3) lacking.push_back(f.id + " (" + f.mask.string() + ")");
    }
    std::string detail;
    if (no_mask) {
      detail += plural(no_mask, "depth image has", "depth images have") + " no mask, e.g. ";
      for (size_t i = 0; i < lacking.size(); ++i) detail += (i ? ", " : "") + lacking[i];
      detail += "\n";
    }
    const size_t orphan_masks = masks_without_depth(detail);
    const size_t tum_unpaired = tum_beyond_tolerance(detail);
    const size_t paired = frames.size() - no_mask;
    if (no_mask + orphan_masks + tum_unpaired == 0) {
      add("pairing", DoctorLevel::Ok, "all " + plural(frames.size(), "frame is", "frames are") + " paired");
      return;
    }
    if (!detail.empty() && detail.back() == '\n') detail.pop_back();
    add("pairing", DoctorLevel::Warning,
        std::to_string(paired) + " of " + plural(frames.size(), "frame", "frames") + " paired; " +
            std::to_string(no_mask + orphan_masks + tum_unpaired) + " unpaired",
        detail,
        no_mask ? "frames without a mask fail in `run` (run.on_error: skip goes on past them); check input.mask" : "");
  }

  size_t masks_without_depth(std::string& detail) {
    const InputLayout l = in_.layout;
    const InputConfig& ic = cfg().input;
    if (!(l == InputLayout::Pattern || l == InputLayout::Apc || l == InputLayout::SevenScenes ||
          l == InputLayout::YcbInEOAT) ||
        ic.mask.find("{id}") == std::string::npos)
      return 0;
    // The listing counts every file of the mask folder that no frame uses: none, no orphan mask (and
    // no second pass over the folder).
    if (in_.listing.unmatched_files == 0) return 0;
    std::unordered_set<std::string> ids;
    for (const FrameEntry& f : in_.listing.frames) ids.insert(f.id);
    size_t n = 0;
    std::string ex;
    for (const auto& [id, file] : detail::pattern_matches(ic.root, ic.mask)) {
      if (ids.count(id)) continue;
      if (++n <= 3) ex += (ex.empty() ? "" : ", ") + file.filename().string();
    }
    if (n)
      detail +=
          plural(n, "mask has", "masks have") + " no depth image (input.depth '" + ic.depth + "'), e.g. " + ex + "\n";
    return n;
  }

  size_t tum_beyond_tolerance(std::string& detail) {
    if (in_.layout != InputLayout::Tum) return 0;
    const fs::path root = cfg().input.root;
    const auto depth = detail::read_tum_list(root / "depth.txt", cfg().input.allow_paths_outside_root);
    std::unordered_set<std::string> ids;
    for (const FrameEntry& f : in_.listing.frames) ids.insert(f.id);
    size_t n = 0;
    std::string ex;
    for (const auto& d : depth) {
      if (ids.count(fs::path(d.file).stem().string())) continue;
      if (++n <= 3) ex += (ex.empty() ? "" : ", ") + fmt("%.6f", d.t);
    }
    if (n)
      detail += plural(n, "depth image of depth.txt has", "depth images of depth.txt have") +
                " no rgb image (or mask) within input.max_time_diff " + num(cfg().input.max_time_diff) +
                " s, e.g. at " + ex + "\n";
    return n;
  }

  void skipped() {
    const DatasetListing& l = in_.listing;
    if (l.unmatched_files == 0) {
      add("skipped", DoctorLevel::Ok, "no file in the input folders is left out");
      return;
    }
    std::string ex;
    for (const auto& p : l.unmatched_examples) ex += (ex.empty() ? "" : ", ") + p.string();
    add("skipped", DoctorLevel::Info,
        plural(l.unmatched_files, "file belongs", "files belong") + " to no frame: the run skips " +
            (l.unmatched_files == 1 ? "it" : "them"),
        "e.g. " + ex);
  }

  // Sizes from the headers of an evenly spaced set, and whether registration reconciles depth and mask.
  void sizes() {
    const auto& frames = in_.listing.frames;
    const std::vector<size_t> idx = evenly_spaced(frames.size(), o_.headers);
    Tally depth, mask, color;
    size_t unknown = 0, unreconciled = 0, registered = 0, color_differs = 0;
    std::string unreconciled_ex, unreconciled_reason, registered_reason;
    for (size_t i : idx) {
      const FrameEntry& f = frames[i];
      const auto d = header_size(f.depth);
      const fs::path& mask_file = f.instances.empty() ? f.mask : f.instances.front().second;
      const auto m = header_size(mask_file);
      if (d) depth.add(size_text(d->width, d->height), f.id);
      if (m) mask.add(size_text(m->width, m->height), f.id);
      if (!f.color.empty())
        if (const auto c = header_size(f.color)) {
          color.add(size_text(c->width, c->height), f.id);
          if (m && *c != *m) ++color_differs;
        }
      if (!d || !m) {
        ++unknown;
        continue;
      }
      const RegistrationPlan plan = plan_registration(cfg().registration.mode, geometry_, *d, *m);
      if (plan.mode == RegistrationMode::None && *d != *m) {
        if (++unreconciled <= 3)
          unreconciled_ex += (unreconciled_ex.empty() ? "" : ", ") + f.id + " (depth " +
                             size_text(d->width, d->height) + ", mask " + size_text(m->width, m->height) + ")";
        if (unreconciled_reason.empty()) unreconciled_reason = plan.reason;
      } else if (plan.mode != RegistrationMode::None) {
        ++registered;
        if (registered_reason.empty()) registered_reason = plan.reason;
      }
    }
    r_.headers_read = idx.size();
    std::string detail = "depth: " + depth.describe() + "\nmask: " + mask.describe();
    if (!color.counts.empty()) detail += "\ncolor: " + color.describe();
    detail += "\nread from the headers of " + spacing(idx.size(), frames.size());
    if (unknown) detail += "; " + plural(unknown, "frame's", "frames'") + " depth or mask header could not be read";
    if (unreconciled) {
      add("sizes", DoctorLevel::Error,
          plural(unreconciled, "frame has", "frames have") + " depth and mask sizes that no registration reconciles",
          detail + "\ne.g. " + unreconciled_ex + (unreconciled_reason.empty() ? "" : ("\n" + unreconciled_reason)),
          "depth and mask must have the same size, the same aspect ratio (registration.mode: resample) or a camera "
          "geometry (registration.mode: reproject)");
      return;
    }
    const bool differ = !depth.uniform() || !mask.uniform() || !color.uniform();
    std::string title = "sizes: depth " + depth.common() + ", mask " + mask.common();
    if (!color.counts.empty()) title += ", color " + color.common();
    if (registered)
      detail += "\n" + plural(registered, "frame's", "frames'") + " depth is registered: " + registered_reason;
    if (color_differs)
      detail += "\n" + plural(color_differs, "frame's", "frames'") +
                " color differs in size from its mask (the preview, PLY colours and live.mask.color_key need the "
                "mask's size)";
    add("sizes", differ || color_differs ? DoctorLevel::Warning : DoctorLevel::Ok,
        differ ? title + ", but not every frame has these" : title, detail);
  }

  // Decodes and masks the sample as `run` does (process_frame on a FrameSlot of the cpu backend).
  void decode_sample() {
    const auto& frames = in_.listing.frames;
    r_.sample = evenly_spaced(frames.size(), o_.sample);
    if (r_.sample.empty()) return;
    const std::unique_ptr<MemoryBackend> backend =
        make_backend(BackendChoice{BackendKind::Cpu, 0, "depthmask doctor decodes on the CPU", false}, PlatformInfo{});
    FrameSlot slot(*backend);
    slot.set_registration(cfg().registration.mode, geometry_);
    slot.set_limits(input_limits(cfg()));
    for (size_t i : r_.sample) {
      const FrameEntry& f = frames[i];
      const MaskParams p = mask_params(cfg(), f);
      const bool union_of_instances = !f.instances.empty() && !cfg().mask.per_instance;
      if (f.depth_scale) s_.own_scale = true;
      try {
        process_frame(cfg(), f, slot, p, [&](const FrameSlot& masked, const std::string& id) {
          observe(masked, id, p, f.instances.empty() ? &p : nullptr, union_of_instances);
        });
        ++r_.decoded;
      } catch (const ConfigError&) {
        throw;
      } catch (const std::exception& e) {
        s_.failures.emplace_back(f.id, e.what());
      }
    }
  }

  void observe(const FrameSlot& slot, const std::string& id, const MaskParams& p, const MaskParams* own_mask,
               bool union_of_instances) {
    const cv::Mat& d = slot.depth();
    s_.depth_types.add(type_text(d.type()), id);
    if (slot.depth_stored_channels() == 3 && s_.three_channel++ == 0) s_.three_channel_example = id;
    s_.mask_types.add(union_of_instances ? "instance union" : type_text(slot.mask().type()), id);
    if (d.type() == CV_16UC1) add_valid_depth<uint16_t>(s_, d, p);
    if (d.type() == CV_32FC1) {
      s_.float_depth = true;
      add_valid_depth<float>(s_, d, p);
    }
    if (own_mask) {
      if (slot.mask().type() == CV_8UC1) add_mask<uint8_t>(s_, slot.mask(), *own_mask);
      if (slot.mask().type() == CV_16UC1) add_mask<uint16_t>(s_, slot.mask(), *own_mask);
    }
    const cv::Mat& out = slot.out();
    const size_t kept = count_kept(out, p.invalid);
    ++s_.passes;
    s_.kept += kept;
    s_.out_pixels += out.total();
    if (kept == 0) ++s_.passes_keeping_nothing;
    if (s_.first_grid.area() == 0) s_.first_grid = out.size(), s_.first_grid_id = id;
  }

  void types() {
    if (s_.depth_types.counts.empty()) return;
    const bool uniform = s_.depth_types.uniform() && s_.mask_types.uniform();
    add("types", uniform ? DoctorLevel::Ok : DoctorLevel::Warning,
        "types: depth " + s_.depth_types.common() + ", mask " + s_.mask_types.common() +
            (uniform ? "" : ", but not every sampled frame has these"),
        "depth: " + s_.depth_types.describe() + "\nmask: " + s_.mask_types.describe());
  }

  void three_channel() {
    if (s_.passes == 0) return;
    if (s_.three_channel == 0) {
      add("three_channel", DoctorLevel::Ok, "depth is stored single-channel in the sampled frames");
      return;
    }
    add("three_channel", DoctorLevel::Warning,
        std::to_string(s_.three_channel) + " of " +
            plural(s_.passes, "sampled depth image is", "sampled depth images are") + " stored with 3 channels",
        "read as their one channel because all three are equal (e.g. frame " + s_.three_channel_example +
            "); a file whose channels differ fails to decode",
        "store depth as a single channel: the run decodes three times the data it uses");
  }

  void decoded() {
    const size_t n = r_.sample.size();
    if (n == 0) return;
    const std::string how = "decoded and masked as `run` does: " + spacing(n, r_.frames);
    if (s_.failures.empty()) {
      add("decode", DoctorLevel::Ok, std::to_string(n) + " sampled " + (n == 1 ? "frame decodes" : "frames decode"),
          how);
      return;
    }
    std::string detail = how;
    for (size_t i = 0; i < s_.failures.size() && i < 5; ++i)
      detail += "\nframe " + s_.failures[i].first + ": " + s_.failures[i].second;
    if (s_.failures.size() > 5) detail += "\n...";
    add("decode", DoctorLevel::Error,
        std::to_string(s_.failures.size()) + " of " + std::to_string(n) + " sampled frames do not decode or pair",
        detail);
  }

  // The median of valid depth under the configured scale, and the scale that would make it plausible.
  void units() {
    if (r_.decoded == 0) return;
    const double scale = cfg().depth.scale;
    const std::string at = s_.float_depth ? "from float depth (metres; depth.scale does not apply)"
                           : s_.own_scale ? "at the frames' own depth scales"
                                          : "at depth.scale " + num(scale);
    if (s_.valid_depth_m.empty()) {
      add("units", DoctorLevel::Warning, "no valid depth in the sampled frames",
          "every depth pixel is 0 (or one of depth.invalid_values)", "check input.depth and depth.encoding");
      return;
    }
    auto& v = s_.valid_depth_m;
    const auto mid = v.begin() + static_cast<std::ptrdiff_t>(v.size() / 2);
    std::nth_element(v.begin(), mid, v.end());
    const double median = *mid;
    const std::string detail = percent(s_.valid_pixels, s_.depth_pixels) + " of the depth pixels are valid; " +
                               percent(s_.valid_in_range, s_.valid_pixels) + " of those lie in depth.min..depth.max (" +
                               num(cfg().depth.min) + " to " + num(cfg().depth.max) + " m)";
    const std::string title = "median valid depth " + metres(median) + " " + at;
    if (median >= kPlausibleDepthMinM && median <= kPlausibleDepthMaxM) {
      add("units", DoctorLevel::Ok, title + ": plausible", detail);
      return;
    }
    const auto better = suggested_depth_scale(median, scale, s_.float_depth);
    std::string hint;
    if (better && !s_.float_depth && !s_.own_scale) {
      hint = "depth.scale: " + num(*better) + " would make it " + metres(median * *better / scale);
      suggest("depth.scale", num(*better));
    } else if (better && s_.float_depth) {
      hint = "the files seem to hold units of " + num(*better) + " m, not metres";
    }
    add("units", DoctorLevel::Warning,
        title + ": implausible for an RGB-D scene (expected " + metres(kPlausibleDepthMinM) + " to " +
            metres(kPlausibleDepthMaxM) + ")",
        detail, hint);
  }

  void intrinsics() {
    const auto& formats = cfg().output.formats;
    const bool ply = std::find(formats.begin(), formats.end(), OutputFormat::Ply) != formats.end();
    const FrameEntry& f = in_.listing.frames[r_.sample.empty() ? 0 : r_.sample.front()];
    const std::optional<Intrinsics> k = frame_intrinsics(cfg(), f);
    const DoctorLevel need = ply ? DoctorLevel::Error : DoctorLevel::Warning;
    const std::string needs = ply ? "output.format 'ply' needs them to backproject the depth"
                                  : "no configured output needs them (output.format 'ply' would)";
    std::string geometry;
    if (geometry_)
      geometry = "\nthe depth is registered with the camera geometry of the dataset (depth K, color K, extrinsic)";
    if (!k) {
      add("intrinsics", ply ? DoctorLevel::Error : DoctorLevel::Info, "no camera intrinsics", needs + geometry,
          "set input.intrinsics (a file, or {fx, fy, cx, cy})");
      return;
    }
    const std::string text = "fx " + num(k->fx) + ", fy " + num(k->fy) + ", cx " + num(k->cx) + ", cy " + num(k->cy) +
                             (k->width > 0 ? ", for " + size_text(k->width, k->height) + " images" : "") +
                             (f.intrinsics ? " (frame " + f.id + "'s own)" : "");
    if (!(k->valid() && std::isfinite(k->fx) && std::isfinite(k->fy) && std::isfinite(k->cx) && std::isfinite(k->cy))) {
      add("intrinsics", need, "intrinsics unusable: " + text, "focal lengths must be positive and finite; " + needs,
          "fix input.intrinsics");
      return;
    }
    const cv::Size grid = s_.first_grid;
    if (grid.area() == 0) {
      add("intrinsics", DoctorLevel::Ok, "intrinsics " + text, "not checked against an image: no frame decoded");
      return;
    }
    const std::string against =
        "against frame " + s_.first_grid_id + "'s " + size_text(grid.width, grid.height) + " output";
    if ((k->width > 0 && k->width != grid.width) || (k->height > 0 && k->height != grid.height)) {
      add("intrinsics", need, "intrinsics are for another image size: " + text, against + "; " + needs,
          "set input.intrinsics for " + size_text(grid.width, grid.height) + " images");
      return;
    }
    // Plausible for the image: a horizontal field of view of 15 to 150 degrees (every RGB-D camera
    // lies well inside) and the principal point within the middle half of the image.
    const double fov = 2.0 * std::atan(grid.width / (2.0 * k->fx)) * 180.0 / 3.14159265358979323846;
    const bool fov_ok = fov >= 15.0 && fov <= 150.0;
    const bool centre_ok = std::abs(k->cx - grid.width / 2.0) <= grid.width / 4.0 &&
                           std::abs(k->cy - grid.height / 2.0) <= grid.height / 4.0;
    const std::string detail = against + ": horizontal field of view " + fmt("%.0f", fov) +
                               " degrees, principal point " + fmt("(%.1f, %.1f)", k->cx, k->cy) + " in a " +
                               size_text(grid.width, grid.height) + " image" + geometry;
    if (fov_ok && centre_ok) {
      add("intrinsics", DoctorLevel::Ok, "intrinsics " + text, detail);
      return;
    }
    add("intrinsics", DoctorLevel::Warning, "intrinsics look wrong for the image size: " + text,
        detail + "\nexpected a field of view of 15 to 150 degrees and the principal point near the image centre",
        "check that input.intrinsics belong to this camera and resolution");
  }

  // The mask values seen against the rule: labels never seen, a rule that keeps nothing or everything.
  void mask_rule() {
    if (s_.passes == 0) return;
    const MaskConfig& m = cfg().mask;
    std::vector<std::pair<uint64_t, uint32_t>> seen;  // count, value
    for (size_t v = 0; v < s_.mask_hist.size(); ++v)
      if (s_.mask_hist[v]) seen.emplace_back(s_.mask_hist[v], static_cast<uint32_t>(v));
    std::sort(seen.rbegin(), seen.rend());
    std::string values;
    for (size_t i = 0; i < seen.size() && i < 12; ++i)
      values += (i ? ", " : "") + std::to_string(seen[i].second) + " (" + percent(seen[i].first, s_.mask_pixels) + ")";
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
    std::string detail = s_.mask_frames ? "values seen: " + values + "\n" : "";
    if (s_.mask_frames)
      detail += "the mask test passes " + percent(s_.mask_pass, s_.mask_pixels) + " of the mask pixels; ";
    detail += "kept after the depth rule: " + percent(s_.kept, s_.out_pixels) + " of the output pixels, in " +
              std::to_string(s_.passes - s_.passes_keeping_nothing) + " of " + std::to_string(s_.passes) +
              " sampled masks";

    if (!m.labels.empty() && s_.mask_frames) {
      std::vector<uint32_t> never;
      for (uint32_t l : m.labels)
        if (l >= s_.mask_hist.size() || s_.mask_hist[l] == 0) never.push_back(l);
      if (!never.empty())
        add("labels", DoctorLevel::Warning,
            "mask.labels " + list_text(never) + (never.size() == 1 ? " is" : " are") + " in no sampled mask",
            "values seen: " + values, "check mask.labels against the dataset's label ids");
      else
        add("labels", DoctorLevel::Ok,
            "every label of mask.labels " + list_text(m.labels) + " is in the sampled masks");
    }

    if (s_.passes_keeping_nothing == s_.passes) {
      std::string hint;
      if (s_.mask_frames && s_.mask_pass == 0 && !m.invert) {
        if (!m.labels.empty() && !nonzero.empty()) {
          hint = "mask.labels: " + list_text(nonzero) + " (the nonzero values seen)";
          suggest("mask.labels", list_text(nonzero));
        } else if (m.labels.empty() && !m.threshold_fraction && !nonzero.empty()) {
          hint = "mask.threshold: 0 keeps every nonzero mask value";
          suggest("mask.threshold", "0");
        }
      } else if (s_.mask_frames && s_.mask_pass > 0) {
        hint =
            "the mask test passes pixels but the depth rule drops them all: check depth.min, depth.max and "
            "depth.scale";
      }
      add("mask_rule", DoctorLevel::Error,
          "the rule (" + rule + ") keeps nothing in any of the " + plural(s_.passes, "sampled mask", "sampled masks"),
          detail, hint);
      return;
    }
    if (s_.mask_frames && s_.frames_mask_all == s_.mask_frames) {
      add("mask_rule", DoctorLevel::Warning,
          "the mask test (" + rule + ") keeps every pixel of every sampled mask: the mask masks nothing", detail,
          m.labels.empty() ? "raise mask.threshold or set mask.labels" : "check mask.labels and mask.invert");
      return;
    }
    add("mask_rule", DoctorLevel::Ok, "the rule (" + rule + ") keeps pixels", detail);
  }

  const Config& given_;
  DoctorOptions o_;
  DoctorReport r_;
  ResolvedInput in_;
  std::optional<CameraGeometry> geometry_;
  SampleStats s_;
};

}  // namespace

DoctorLevel DoctorReport::worst() const {
  DoctorLevel w = DoctorLevel::Ok;
  for (const DoctorCheck& c : checks) w = std::max(w, c.level);
  return w;
}

int DoctorReport::exit_code(bool strict) const {
  const DoctorLevel w = worst();
  return w == DoctorLevel::Error || (strict && w == DoctorLevel::Warning) ? 1 : 0;
}

std::string DoctorReport::to_text() const {
  static const char* const kMark[] = {"ok   ", "info ", "WARN ", "ERROR"};
  std::string s = "depthmask doctor: " + root + "\n";
  for (const DoctorCheck& c : checks) {
    s += "  " + std::string(kMark[static_cast<int>(c.level)]) + " " + c.title + "\n";
    size_t at = 0;
    while (at < c.detail.size()) {
      const size_t nl = c.detail.find('\n', at);
      const size_t end = nl == std::string::npos ? c.detail.size() : nl;
      s += "          " + c.detail.substr(at, end - at) + "\n";
      at = end + 1;
    }
    if (!c.hint.empty()) s += "          -> " + c.hint + "\n";
  }
  size_t errors = 0, warnings = 0;
  for (const DoctorCheck& c : checks) {
    errors += c.level == DoctorLevel::Error ? 1 : 0;
    warnings += c.level == DoctorLevel::Warning ? 1 : 0;
  }
  const size_t tweaks = suggested.size() > 2 ? suggested.size() - 2 : 0;  // besides input.root/layout
  if (tweaks) {
    s += "suggested keys (--write-config FILE saves them):\n";
    for (size_t i = 2; i < suggested.size(); ++i) s += "  " + suggested[i].first + ": " + suggested[i].second + "\n";
  }
  s += fmt("%s, %s in %.2f s (%zu frames listed, %zu decoded, %zu headers read)\n",
           plural(errors, "error", "errors").c_str(), plural(warnings, "warning", "warnings").c_str(), seconds, frames,
           decoded, headers_read);
  return s;
}

std::string DoctorReport::to_json() const {
  nlohmann::ordered_json j;
  j["version"] = 1;
  j["root"] = root;
  j["layout"] = layout;
  j["layout_reason"] = layout_reason;
  j["frames"] = frames;
  j["decoded"] = decoded;
  j["headers_read"] = headers_read;
  j["sample"] = sample;
  j["seconds"] = seconds;
  j["worst"] = std::string(to_string(worst()));
  j["exit_code"] = exit_code(false);
  j["exit_code_strict"] = exit_code(true);
  j["checks"] = nlohmann::ordered_json::array();
  for (const DoctorCheck& c : checks)
    j["checks"].push_back({{"id", c.id},
                           {"level", std::string(to_string(c.level))},
                           {"title", c.title},
                           {"detail", c.detail},
                           {"hint", c.hint}});
  j["suggested"] = nlohmann::ordered_json::object();
  for (const auto& [k, v] : suggested) j["suggested"][k] = v;
  return j.dump(2) + "\n";
}

std::string DoctorReport::suggested_yaml() const {
  std::string s = "# Suggested by `depthmask doctor` for " + root +
                  ".\n# Run: depthmask run --config THIS_FILE --output DIR (or copy the keys into your "
                  "configuration)\n";
  // Group the dotted keys by section, in the order they came.
  std::vector<std::string> sections;
  for (const auto& kv : suggested) {
    const std::string sec = kv.first.substr(0, kv.first.find('.'));
    if (std::find(sections.begin(), sections.end(), sec) == sections.end()) sections.push_back(sec);
  }
  for (const std::string& sec : sections) {
    s += sec + ":\n";
    for (const auto& [k, v] : suggested)
      if (k.compare(0, sec.size() + 1, sec + ".") == 0) s += "  " + k.substr(sec.size() + 1) + ": " + v + "\n";
  }
  return s;
}

DoctorReport diagnose(const Config& config, const DoctorOptions& options) { return Doctor(config, options).run(); }

}  // namespace depthmask
