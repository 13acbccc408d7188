// All YAML parsing, validation and printing of depthmask's configuration: the one file that uses
// yaml-cpp. Errors name the key (dotted path), where it came from (file and line, or the override)
// and, for enums, the allowed values.
#include "depthmask/config.h"

#include <yaml-cpp/yaml.h>

#include <algorithm>
#include <cctype>
#include <cmath>
#include <fstream>
#include <limits>
#include <sstream>

#include "depthmask/errors.h"
#include "depthmask/kernels/color_key.h"
#include "depthmask/kernels/mask_rule.h"

namespace fs = std::filesystem;

namespace depthmask {

// ---------------------------------------------------------------------------------------------------
// enums

std::string_view to_string(BackendKind k) {
  switch (k) {
    case BackendKind::Auto:
      return "auto";
    case BackendKind::Copy:
      return "copy";
    case BackendKind::ZeroCopy:
      return "zero_copy";
    case BackendKind::Managed:
      return "managed";
    case BackendKind::Cpu:
      return "cpu";
  }
  return "?";
}
std::string_view to_string(OnError e) { return e == OnError::Skip ? "skip" : "stop"; }
std::string_view to_string(OutputFormat f) {
  switch (f) {
    case OutputFormat::Tiff:
      return "tiff";
    case OutputFormat::Npy:
      return "npy";
    case OutputFormat::Exr:
      return "exr";
    case OutputFormat::Png16:
      return "png16";
    case OutputFormat::Ply:
      return "ply";
    case OutputFormat::Json:
      return "json";
  }
  return "?";
}
std::string_view to_string(InputLayout l) {
  switch (l) {
    case InputLayout::Auto:
      return "auto";
    case InputLayout::Pattern:
      return "pattern";
    case InputLayout::Apc:
      return "apc";
    case InputLayout::SevenScenes:
      return "7scenes";
    case InputLayout::Bop:
      return "bop";
    case InputLayout::Tum:
      return "tum";
    case InputLayout::YcbInEOAT:
      return "ycbineoat";
  }
  return "?";
}
std::string_view to_string(DepthEncoding e) { return e == DepthEncoding::Plain ? "plain" : "apc"; }
std::string_view to_string(RegistrationMode m) {
  switch (m) {
    case RegistrationMode::Auto:
      return "auto";
    case RegistrationMode::None:
      return "none";
    case RegistrationMode::Resample:
      return "resample";
    case RegistrationMode::Reproject:
      return "reproject";
  }
  return "?";
}
std::string_view to_string(OutputLayout l) { return l == OutputLayout::Flat ? "flat" : "mirror"; }
std::string_view to_string(Overflow o) { return o == Overflow::DropOldest ? "drop_oldest" : "block"; }
std::string_view to_string(DistortionModel m) { return m == DistortionModel::None ? "none" : "inverse_brown_conrady"; }

std::optional<BackendKind> parse_backend_kind(std::string_view s) {
  for (auto k : {BackendKind::Auto, BackendKind::Copy, BackendKind::ZeroCopy, BackendKind::Managed, BackendKind::Cpu})
    if (s == to_string(k)) return k;
  return std::nullopt;
}
std::optional<OnError> parse_on_error(std::string_view s) {
  for (auto e : {OnError::Skip, OnError::Stop})
    if (s == to_string(e)) return e;
  return std::nullopt;
}
std::optional<OutputFormat> parse_output_format(std::string_view s) {
  for (auto f : {OutputFormat::Tiff, OutputFormat::Npy, OutputFormat::Exr, OutputFormat::Png16, OutputFormat::Ply,
                 OutputFormat::Json})
    if (s == to_string(f)) return f;
  return std::nullopt;
}
std::optional<InputLayout> parse_input_layout(std::string_view s) {
  for (auto l : {InputLayout::Auto, InputLayout::Pattern, InputLayout::Apc, InputLayout::SevenScenes, InputLayout::Bop,
                 InputLayout::Tum, InputLayout::YcbInEOAT})
    if (s == to_string(l)) return l;
  return std::nullopt;
}
std::optional<DepthEncoding> parse_depth_encoding(std::string_view s) {
  for (auto e : {DepthEncoding::Plain, DepthEncoding::Apc})
    if (s == to_string(e)) return e;
  return std::nullopt;
}
std::optional<RegistrationMode> parse_registration_mode(std::string_view s) {
  for (auto m :
       {RegistrationMode::Auto, RegistrationMode::None, RegistrationMode::Resample, RegistrationMode::Reproject})
    if (s == to_string(m)) return m;
  return std::nullopt;
}
std::optional<DistortionModel> parse_distortion_model(std::string_view s) {
  for (auto m : {DistortionModel::None, DistortionModel::InverseBrownConrady})
    if (s == to_string(m)) return m;
  return std::nullopt;
}
std::optional<OutputLayout> parse_output_layout(std::string_view s) {
  for (auto l : {OutputLayout::Flat, OutputLayout::Mirror})
    if (s == to_string(l)) return l;
  return std::nullopt;
}
std::optional<Overflow> parse_overflow(std::string_view s) {
  for (auto o : {Overflow::DropOldest, Overflow::Block})
    if (s == to_string(o)) return o;
  return std::nullopt;
}
std::optional<double> depth_scale_preset(std::string_view name) {
  if (name == "mm") return 0.001;
  if (name == "0.1mm") return 0.0001;
  if (name == "tum") return 1.0 / 5000.0;
  if (name == "d405") return 0.0001;
  return std::nullopt;
}
std::string allowed_backend_kinds() { return "auto, copy, zero_copy, managed, cpu"; }

namespace {

const char* const kLogLevels[] = {"trace", "debug", "info", "warn", "error", "off"};

// ---------------------------------------------------------------------------------------------------
// where a value came from

struct Origin {
  std::string name;  // the file as given, or the override text
  fs::path base;     // relative paths resolve against this
  bool is_file = true;
};

class Reader {
 public:
  explicit Reader(const Origin& o, std::set<std::string>* seen = nullptr) : o_(o), seen_(seen) {}

  std::string where(const YAML::Node& n) const {
    if (!o_.is_file) return "in " + o_.name;
    const YAML::Mark m = n.Mark();
    if (m.is_null()) return "in " + o_.name;
    return "at " + o_.name + " line " + std::to_string(m.line + 1);
  }

  [[noreturn]] void fail(const std::string& key, const YAML::Node& n, const std::string& what) const {
    throw ConfigError("config key '" + key + "' " + where(n) + ": " + what);
  }

  static std::string scalar_text(const YAML::Node& n) {
    if (n.IsScalar()) return "'" + n.Scalar() + "'";
    if (n.IsSequence()) return "a list";
    if (n.IsMap()) return "a map";
    return "nothing";
  }

  void expect_map(const std::string& key, const YAML::Node& n) const {
    if (!n.IsMap()) fail(key, n, "expected a map of keys, got " + scalar_text(n));
  }

  // Calls f(subkey, value) for each entry of a map, rejecting keys not in `allowed`.
  template <class F>
  void each(const std::string& prefix, const YAML::Node& map, std::initializer_list<const char*> allowed, F&& f) const {
    expect_map(prefix, map);
    for (const auto& kv : map) {
      const std::string k = kv.first.IsScalar() ? kv.first.Scalar() : "?";
      const std::string full = prefix.empty() ? k : prefix + "." + k;
      if (std::find_if(allowed.begin(), allowed.end(), [&](const char* a) { return k == a; }) == allowed.end()) {
        std::string list;
        for (const char* a : allowed) list += (list.empty() ? "" : ", ") + std::string(a);
        throw ConfigError("unknown config key '" + full + "' " + where(kv.first) + "; allowed keys" +
                          (prefix.empty() ? "" : " in '" + prefix + "'") + ": " + list);
      }
      if (seen_) seen_->insert(full);
      f(k, full, kv.second);
    }
  }

  std::string str(const std::string& key, const YAML::Node& n) const {
    if (!n.IsScalar()) fail(key, n, "expected a string, got " + scalar_text(n));
    return n.Scalar();
  }

  double number(const std::string& key, const YAML::Node& n) const {
    if (!n.IsScalar()) fail(key, n, "expected a number, got " + scalar_text(n));
    const std::string s = lower(n.Scalar());
    if (s == "nan" || s == ".nan") return std::numeric_limits<double>::quiet_NaN();
    if (s == ".inf" || s == "inf" || s == "+.inf") return std::numeric_limits<double>::infinity();
    if (s == "-.inf" || s == "-inf") return -std::numeric_limits<double>::infinity();
    std::istringstream is(n.Scalar());
    is.imbue(std::locale::classic());
    double v = 0;
    if (!(is >> v) || !(is >> std::ws).eof()) fail(key, n, "expected a number, got '" + n.Scalar() + "'");
    return v;
  }

  double finite_number(const std::string& key, const YAML::Node& n) const {
    const double v = number(key, n);
    if (!std::isfinite(v)) fail(key, n, "expected a finite number, got '" + n.Scalar() + "'");
    return v;
  }

  int64_t integer(const std::string& key, const YAML::Node& n, int64_t lo, int64_t hi) const {
    if (!n.IsScalar()) fail(key, n, "expected an integer, got " + scalar_text(n));
    std::istringstream is(n.Scalar());
    int64_t v = 0;
    if (!(is >> v) || !(is >> std::ws).eof()) fail(key, n, "expected an integer, got '" + n.Scalar() + "'");
    if (v < lo || v > hi)
      fail(key, n,
           "expected an integer in [" + std::to_string(lo) + ", " + std::to_string(hi) + "], got " + std::to_string(v));
    return v;
  }

  bool boolean(const std::string& key, const YAML::Node& n) const {
    if (n.IsScalar()) {
      const std::string s = lower(n.Scalar());
      if (s == "true" || s == "yes" || s == "on") return true;
      if (s == "false" || s == "no" || s == "off") return false;
    }
    fail(key, n, "expected true or false, got " + scalar_text(n));
  }

  template <class E, class P>
  E enumeration(const std::string& key, const YAML::Node& n, P parse, const std::string& allowed) const {
    if (n.IsScalar())
      if (auto v = parse(n.Scalar())) return *v;
    fail(key, n, "invalid value " + scalar_text(n) + "; allowed values: " + allowed);
  }

  fs::path path(const std::string& key, const YAML::Node& n) const {
    const std::string s = str(key, n);
    if (s.empty()) fail(key, n, "expected a path, got an empty string");
    fs::path p(s);
    p = p.is_absolute() ? p.lexically_normal() : (o_.base / p).lexically_normal();
    // "dir/." normalises to "dir/": drop the trailing separator so equal folders compare equal.
    if (!p.has_filename() && p.has_parent_path() && p != p.root_path()) p = p.parent_path();
    return p;
  }

  static std::string lower(std::string s) {
    std::transform(s.begin(), s.end(), s.begin(), [](unsigned char c) { return static_cast<char>(std::tolower(c)); });
    return s;
  }

 private:
  const Origin& o_;
  std::set<std::string>* seen_;
};

std::string check_pattern(const Reader& r, const std::string& key, const YAML::Node& n, bool allow_empty) {
  const std::string s = r.str(key, n);
  if (s.empty() && allow_empty) return s;
  size_t count = 0;
  for (size_t pos = s.find("{id}"); pos != std::string::npos; pos = s.find("{id}", pos + 4)) ++count;
  if (count != 1) r.fail(key, n, "a file pattern needs exactly one '{id}', got '" + s + "'");
  if (fs::path(s).is_absolute())
    r.fail(key, n, "a file pattern is relative to input.root, got the absolute '" + s + "'");
  return s;
}

Intrinsics read_intrinsics_map(const Reader& r, const std::string& prefix, const YAML::Node& n) {
  Intrinsics k;
  bool seen[4] = {false, false, false, false};
  r.each(prefix, n, {"fx", "fy", "cx", "cy", "width", "height"},
         [&](const std::string& sub, const std::string& full, const YAML::Node& v) {
           if (sub == "fx")
             k.fx = r.finite_number(full, v), seen[0] = true;
           else if (sub == "fy")
             k.fy = r.finite_number(full, v), seen[1] = true;
           else if (sub == "cx")
             k.cx = r.finite_number(full, v), seen[2] = true;
           else if (sub == "cy")
             k.cy = r.finite_number(full, v), seen[3] = true;
           else if (sub == "width")
             k.width = static_cast<int>(r.integer(full, v, 0, 1 << 20));
           else
             k.height = static_cast<int>(r.integer(full, v, 0, 1 << 20));
         });
  const char* names[] = {"fx", "fy", "cx", "cy"};
  for (int i = 0; i < 4; ++i)
    if (!seen[i]) r.fail(prefix, n, std::string("intrinsics need fx, fy, cx and cy; '") + names[i] + "' is missing");
  if (!(k.fx > 0) || !(k.fy > 0)) r.fail(prefix, n, "fx and fy must be positive");
  return k;
}

// live.mask.color_key: {h: [min, max], s: [min, max], v: [min, max], keep: inside|outside}. A map
// merges into a key set earlier (an override may change h alone); a new key needs h, s and v. ~ = none.
void read_color_key(const Reader& r, const std::string& key, const YAML::Node& n,
                    std::optional<LiveMaskConfig::ColorKey>& out) {
  if (n.IsNull()) {
    out.reset();
    return;
  }
  LiveMaskConfig::ColorKey k = out.value_or(LiveMaskConfig::ColorKey{});
  bool seen[3] = {out.has_value(), out.has_value(), out.has_value()};
  r.each(key, n, {"h", "s", "v", "keep"}, [&](const std::string& sub, const std::string& full, const YAML::Node& v) {
    if (sub == "keep") {
      const std::string word = v.IsScalar() ? v.Scalar() : std::string();
      if (word != "inside" && word != "outside")
        r.fail(full, v,
               "invalid value " + Reader::scalar_text(v) +
                   "; allowed values: inside (keep the colours in the range), "
                   "outside (keep the others: green-screen removal)");
      k.keep_inside = word == "inside";
      return;
    }
    const bool hue = sub == "h";
    const int hi = hue ? kHueMax : 255;
    const std::string what = hue ? "hue in 0.." + std::to_string(kHueMax) + " (OpenCV's 8-bit H: degrees / 2)"
                                 : std::string(sub == "s" ? "saturation" : "value") + " in 0..255";
    if (!v.IsSequence() || v.size() != 2)
      r.fail(full, v,
             "expected [min, max], " + what + ", got " +
                 (v.IsSequence() ? std::to_string(v.size()) + " numbers" : Reader::scalar_text(v)));
    const int64_t lo_v = r.integer(full, v[0], -65536, 65536), hi_v = r.integer(full, v[1], -65536, 65536);
    const std::string got = "got [" + v[0].Scalar() + ", " + v[1].Scalar() + "]";
    if (lo_v < 0 || lo_v > hi || hi_v < 0 || hi_v > hi) r.fail(full, v, "expected [min, max], " + what + ", " + got);
    if (!hue && lo_v > hi_v)
      r.fail(full, v, "expected min <= max, " + what + ", " + got + " (only the hue range wraps)");
    int* dst = hue ? k.h : sub == "s" ? k.s : k.v;
    dst[0] = static_cast<int>(lo_v), dst[1] = static_cast<int>(hi_v);
    seen[hue ? 0 : sub == "s" ? 1 : 2] = true;
  });
  const char* names[] = {"h", "s", "v"};
  for (int i = 0; i < 3; ++i)
    if (!seen[i])
      r.fail(key, n,
             std::string("a colour key needs h, s and v ranges ([0, 179] / [0, 255] for any); '") + names[i] +
                 "' is missing");
  out = k;
}

void apply(Config& c, const YAML::Node& root, const Origin& o) {
  const Reader r(o, &c.explicit_keys);
  if (!root || root.IsNull()) return;  // an empty file: defaults
  r.each(
      "", root, {"input", "depth", "mask", "registration", "output", "backend", "run", "live", "logging"},
      [&](const std::string& section, const std::string&, const YAML::Node& s) {
        if (s.IsNull()) return;  // "mask:" with nothing under it: no changes
        if (section == "input") {
          r.each("input", s,
                 {"layout", "root", "depth", "mask", "color", "intrinsics", "max_time_diff", "object", "bop_masks",
                  "allow_paths_outside_root", "max_file_bytes", "max_image_pixels"},
                 [&](const std::string& k, const std::string& full, const YAML::Node& v) {
                   if (k == "layout")
                     c.input.layout = r.enumeration<InputLayout>(full, v, parse_input_layout,
                                                                 "auto, pattern, apc, 7scenes, bop, tum, ycbineoat");
                   else if (k == "max_time_diff") {
                     c.input.max_time_diff = r.finite_number(full, v);
                     if (!(c.input.max_time_diff > 0)) r.fail(full, v, "must be > 0 seconds, got " + v.Scalar());
                   } else if (k == "object")
                     c.input.object = v.IsNull() ? std::string() : r.str(full, v);
                   else if (k == "bop_masks") {
                     c.input.bop_masks = r.str(full, v);
                     if (c.input.bop_masks != "mask_visib" && c.input.bop_masks != "mask")
                       r.fail(full, v, "invalid value '" + v.Scalar() + "'; allowed values: mask_visib, mask");
                   } else if (k == "allow_paths_outside_root")
                     c.input.allow_paths_outside_root = r.boolean(full, v);
                   else if (k == "max_file_bytes")
                     c.input.max_file_bytes =
                         static_cast<uint64_t>(r.integer(full, v, 1, std::numeric_limits<int32_t>::max()));
                   else if (k == "max_image_pixels")
                     c.input.max_image_pixels =
                         static_cast<uint64_t>(r.integer(full, v, 1, std::numeric_limits<int32_t>::max()));
                   else if (k == "root")
                     c.input.root = r.path(full, v);
                   else if (k == "depth")
                     c.input.depth = check_pattern(r, full, v, false);
                   else if (k == "mask")
                     c.input.mask = check_pattern(r, full, v, false);
                   else if (k == "color")
                     c.input.color = v.IsNull() ? std::string() : check_pattern(r, full, v, true);
                   else if (v.IsNull())
                     c.input.intrinsics_file.clear(), c.input.intrinsics.reset();
                   else if (v.IsMap())
                     c.input.intrinsics_file.clear(), c.input.intrinsics = read_intrinsics_map(r, full, v);
                   else
                     c.input.intrinsics_file = r.path(full, v), c.input.intrinsics.reset();
                 });
        } else if (section == "depth") {
          r.each("depth", s, {"scale", "min", "max", "encoding", "invalid_values"},
                 [&](const std::string& k, const std::string& full, const YAML::Node& v) {
                   if (k == "encoding") {
                     c.depth.encoding = r.enumeration<DepthEncoding>(full, v, parse_depth_encoding, "plain, apc");
                     return;
                   }
                   if (k == "invalid_values") {
                     c.depth.invalid_values.clear();
                     if (v.IsNull()) return;
                     if (v.IsScalar())
                       c.depth.invalid_values.push_back(static_cast<uint32_t>(r.integer(full, v, 0, 65535)));
                     else if (!v.IsSequence())
                       r.fail(full, v, "expected a list of raw values such as [65535], got " + Reader::scalar_text(v));
                     else
                       for (const auto& e : v)
                         c.depth.invalid_values.push_back(static_cast<uint32_t>(r.integer(full, e, 0, 65535)));
                     if (c.depth.invalid_values.size() > 4)
                       r.fail(full, v, "at most 4 invalid raw values are supported");
                     return;
                   }
                   if (k == "scale" && v.IsScalar()) {
                     if (const auto preset = depth_scale_preset(v.Scalar())) {
                       c.depth.scale = *preset;
                       return;
                     }
                     try {
                       (void)r.number(full, v);
                     } catch (const ConfigError&) {
                       r.fail(full, v,
                              "expected a number (metres per raw unit) or a preset (mm, 0.1mm, tum, d405), got '" +
                                  v.Scalar() + "'");
                     }
                   }
                   const double x = r.finite_number(full, v);
                   if (k == "scale") {
                     if (!(x > 0)) r.fail(full, v, "metres per raw unit must be positive, got " + v.Scalar());
                     c.depth.scale = x;
                   } else if (k == "min") {
                     if (x < 0) r.fail(full, v, "must be >= 0 metres, got " + v.Scalar());
                     c.depth.min = x;
                   } else {
                     if (!(x > 0)) r.fail(full, v, "must be > 0 metres, got " + v.Scalar());
                     c.depth.max = x;
                   }
                 });
        } else if (section == "mask") {
          r.each("mask", s, {"threshold", "threshold_fraction", "labels", "invert", "erode", "per_instance"},
                 [&](const std::string& k, const std::string& full, const YAML::Node& v) {
                   if (k == "threshold")
                     c.mask.threshold = static_cast<uint32_t>(r.integer(full, v, 0, 65535));
                   else if (k == "threshold_fraction") {
                     if (v.IsNull()) {
                       c.mask.threshold_fraction.reset();
                       return;
                     }
                     const double x = r.finite_number(full, v);
                     if (x < 0 || x > 1)
                       r.fail(full, v, "expected a fraction of the mask's full scale in [0, 1], got " + v.Scalar());
                     c.mask.threshold_fraction = x;
                   } else if (k == "erode")
                     c.mask.erode = static_cast<int>(r.integer(full, v, 0, 16));
                   else if (k == "per_instance")
                     c.mask.per_instance = r.boolean(full, v);
                   else if (k == "invert")
                     c.mask.invert = r.boolean(full, v);
                   else {
                     c.mask.labels.clear();
                     if (v.IsNull()) return;
                     if (v.IsScalar()) {
                       c.mask.labels.push_back(static_cast<uint32_t>(r.integer(full, v, 0, 65535)));
                       return;
                     }
                     if (!v.IsSequence())
                       r.fail(full, v,
                              "expected a list of label values such as [48, 114], got " + Reader::scalar_text(v));
                     if (v.size() > static_cast<size_t>(kMaxLabels))
                       r.fail(full, v,
                              "at most " + std::to_string(kMaxLabels) + " labels are supported, got " +
                                  std::to_string(v.size()));
                     for (const auto& e : v)
                       c.mask.labels.push_back(static_cast<uint32_t>(r.integer(full, e, 0, 65535)));
                   }
                 });
        } else if (section == "registration") {
          r.each("registration", s, {"mode", "depth_distortion"},
                 [&](const std::string& k, const std::string& full, const YAML::Node& v) {
                   if (k == "mode") {
                     c.registration.mode = r.enumeration<RegistrationMode>(full, v, parse_registration_mode,
                                                                           "auto, none, resample, reproject");
                     return;
                   }
                   Distortion& d = c.registration.depth_distortion;
                   if (v.IsNull()) {  // depth_distortion: ~ -> no distortion
                     d = Distortion{};
                     return;
                   }
                   // A map merges into what earlier sources set, so an override may change the model or the
                   // coefficients alone; load_config() checks the combination.
                   r.each(full, v, {"model", "coeffs"},
                          [&](const std::string& dk, const std::string& dfull, const YAML::Node& dv) {
                            if (dk == "model") {
                              d.model = r.enumeration<DistortionModel>(dfull, dv, parse_distortion_model,
                                                                       "none, inverse_brown_conrady");
                              return;
                            }
                            if (!dv.IsSequence() || dv.size() != 5)
                              r.fail(dfull, dv,
                                     "expected a list of the 5 coefficients [k1, k2, p1, p2, k3], got " +
                                         (dv.IsSequence() ? std::to_string(dv.size()) + " numbers"
                                                          : Reader::scalar_text(dv)));
                            for (size_t i = 0; i < 5; ++i) d.coeffs[i] = r.finite_number(dfull, dv[i]);
                          });
                 });
        } else if (section == "output") {
          r.each("output", s, {"dir", "format", "invalid", "preview", "fsync", "layout"},
                 [&](const std::string& k, const std::string& full, const YAML::Node& v) {
                   if (k == "layout")
                     c.output.layout = r.enumeration<OutputLayout>(full, v, parse_output_layout, "flat, mirror");
                   else if (k == "dir")
                     c.output.dir = r.path(full, v);
                   else if (k == "preview")
                     c.output.preview = r.boolean(full, v);
                   else if (k == "fsync")
                     c.output.fsync = r.boolean(full, v);
                   else if (k == "invalid") {
                     const double x = r.number(full, v);
                     // Beyond float's range the conversion below would be undefined behaviour (UBSan).
                     if (std::isinf(x) || std::fabs(x) > std::numeric_limits<float>::max())
                       r.fail(full, v, "expected 0, nan or a finite 32-bit float number, got '" + v.Scalar() + "'");
                     c.output.invalid = static_cast<float>(x);
                   } else {
                     std::vector<OutputFormat> f;
                     auto one = [&](const YAML::Node& e) {
                       const auto x = r.enumeration<OutputFormat>(full, e, parse_output_format,
                                                                  "tiff, npy, exr, png16, ply, json");
                       if (std::find(f.begin(), f.end(), x) == f.end()) f.push_back(x);
                     };
                     if (v.IsSequence())
                       for (const auto& e : v) one(e);
                     else
                       one(v);
                     if (f.empty())
                       r.fail(full, v, "needs at least one format; allowed values: tiff, npy, exr, png16, ply, json");
                     c.output.formats = f;
                   }
                 });
        } else if (section == "backend") {
          r.each("backend", s, {"kind", "device", "memory_limit_mb"},
                 [&](const std::string& k, const std::string& full, const YAML::Node& v) {
                   if (k == "kind")
                     c.backend.kind = r.enumeration<BackendKind>(full, v, parse_backend_kind, allowed_backend_kinds());
                   else if (k == "memory_limit_mb")
                     c.backend.memory_limit_mb = r.integer(full, v, 0, int64_t{1} << 30);
                   else
                     c.backend.device = static_cast<int>(r.integer(full, v, 0, 1023));
                 });
        } else if (section == "run") {
          r.each("run", s, {"on_error", "force", "frames_in_flight", "threads"},
                 [&](const std::string& k, const std::string& full, const YAML::Node& v) {
                   if (k == "force")
                     c.run.force = r.boolean(full, v);
                   else if (k == "frames_in_flight")
                     c.run.frames_in_flight = static_cast<int>(r.integer(full, v, 0, 256));
                   else if (k == "threads")
                     c.run.threads = static_cast<int>(r.integer(full, v, 0, 256));
                   else
                     c.run.on_error = r.enumeration<OnError>(full, v, parse_on_error, "skip, stop");
                 });
        } else if (section == "live") {
          r.each(
              "live", s,
              {"source", "overflow", "buffers", "output_every", "publish", "stats_interval", "reconnect_max", "mask",
               "sync", "preview"},
              [&](const std::string& k, const std::string& full, const YAML::Node& v) {
                if (k == "source") {
                  c.live.source = r.str(full, v);
                  if (c.live.source.find("://") == std::string::npos)
                    r.fail(
                        full, v,
                        "expected a source URI such as synthetic://?size=640x480&fps=30 or replay:///data/seq, got '" +
                            c.live.source + "'");
                } else if (k == "overflow")
                  c.live.overflow = r.enumeration<Overflow>(full, v, parse_overflow, "drop_oldest, block");
                else if (k == "buffers")
                  c.live.buffers = static_cast<int>(r.integer(full, v, 2, 64));
                else if (k == "output_every")
                  c.live.output_every = static_cast<int>(r.integer(full, v, 0, 1000000));
                else if (k == "publish") {
                  c.live.publish = v.IsNull() ? std::string() : r.str(full, v);
                  const std::string& e = c.live.publish;
                  if (!e.empty() && e.rfind("tcp://", 0) != 0 && e.rfind("ipc://", 0) != 0 &&
                      e.rfind("inproc://", 0) != 0)
                    r.fail(full, v,
                           "expected a ZeroMQ endpoint (tcp://HOST:PORT, ipc://PATH or inproc://NAME) or empty (off), "
                           "got '" +
                               e + "'");
                } else if (k == "stats_interval") {
                  c.live.stats_interval = r.finite_number(full, v);
                  if (c.live.stats_interval < 0)
                    r.fail(full, v, "expected seconds >= 0 (0 = no stats lines), got " + v.Scalar());
                } else if (k == "mask") {
                  if (v.IsNull()) return;  // "mask:" with nothing under it: no changes
                  r.each(full, v, {"static", "depth_band", "color_key"},
                         [&](const std::string& mk, const std::string& mfull, const YAML::Node& mv) {
                           if (mk == "color_key") {
                             read_color_key(r, mfull, mv, c.live.mask.color_key);
                             return;
                           }
                           if (mk == "static") {
                             c.live.mask.static_file =
                                 mv.IsNull() || (mv.IsScalar() && mv.Scalar().empty()) ? fs::path() : r.path(mfull, mv);
                             return;
                           }
                           if (mv.IsNull()) {
                             c.live.mask.depth_band.reset();
                             return;
                           }
                           if (!mv.IsSequence() || mv.size() != 2)
                             r.fail(mfull, mv,
                                    "expected [min, max] in metres such as [0.4, 1.2], got " +
                                        (mv.IsSequence() ? std::to_string(mv.size()) + " numbers"
                                                         : Reader::scalar_text(mv)));
                           const double lo = r.finite_number(mfull, mv[0]), hi = r.finite_number(mfull, mv[1]);
                           if (!(lo < hi))
                             r.fail(mfull, mv,
                                    "expected min < max metres, got [" + mv[0].Scalar() + ", " + mv[1].Scalar() + "]");
                           c.live.mask.depth_band = LiveMaskConfig::DepthBand{lo, hi};
                         });
                } else if (k == "sync") {
                  if (v.IsNull()) return;
                  r.each(full, v, {"tolerance_ms"},
                         [&](const std::string&, const std::string& sfull, const YAML::Node& sv) {
                           c.live.sync.tolerance_ms = r.finite_number(sfull, sv);
                           if (c.live.sync.tolerance_ms < 0 || c.live.sync.tolerance_ms > 10000)
                             r.fail(sfull, sv,
                                    "expected milliseconds in [0, 10000] (how far apart paired frames' timestamps may "
                                    "be), got " +
                                        sv.Scalar());
                         });
                } else if (k == "preview") {
                  c.live.preview = r.boolean(full, v);
                } else {
                  c.live.reconnect_max = r.finite_number(full, v);
                  if (c.live.reconnect_max < 0.1 || c.live.reconnect_max > 3600)
                    r.fail(full, v,
                           "expected seconds in [0.1, 3600] (the back-off starts at 0.1 s), got " + v.Scalar());
                }
              });
        } else {
          r.each("logging", s, {"level"}, [&](const std::string&, const std::string& full, const YAML::Node& v) {
            const std::string lv = Reader::lower(r.str(full, v));
            if (std::find(std::begin(kLogLevels), std::end(kLogLevels), lv) == std::end(kLogLevels))
              r.fail(full, v,
                     "invalid value '" + v.Scalar() + "'; allowed values: trace, debug, info, warn, error, off");
            c.logging.level = lv;
          });
        }
      });
}

YAML::Node load_yaml_text(const std::string& text, const std::string& name) {
  try {
    return YAML::Load(text);
  } catch (const YAML::ParserException& e) {
    throw ConfigError(name + " line " + std::to_string(e.mark.line + 1) + ": YAML syntax error: " + e.msg);
  }
}

std::string read_text(const fs::path& file, const char* what) {
  std::ifstream in(file, std::ios::binary);
  if (!in)
    throw ConfigError(std::string("cannot read ") + what + " '" + file.string() + "': no such file or not readable");
  std::ostringstream ss;
  ss << in.rdbuf();
  return ss.str();
}

}  // namespace

Override parse_override(const std::string& text, const std::string& origin) {
  const auto eq = text.find('=');
  if (eq == std::string::npos || eq == 0)
    throw ConfigError(origin + " '" + text + "': expected key.path=value, e.g. --set mask.labels=[48,114]");
  return Override{text.substr(0, eq), text.substr(eq + 1), origin};
}

namespace {

// A configuration file's text, its name as messages show it and the folder its relative paths resolve against.
struct ConfigText {
  const std::string& yaml;
  const std::string& name;
  const fs::path& base;
};

Config build_config(const ConfigText* file, const std::vector<Override>& overrides, const fs::path& cwd) {
  Config c;
  c.input.root = cwd;
  c.output.dir = cwd / "out";
  if (file) {
    const YAML::Node root = load_yaml_text(file->yaml, file->name);
    if (root && !root.IsNull() && !root.IsMap())
      throw ConfigError(
          file->name +
          ": the top level must be a map of sections (input, depth, mask, output, backend, run, live, logging)");
    const fs::path& base = file->base;
    c.input.root = base;
    c.output.dir = base / "out";
    apply(c, root, Origin{file->name, base, true});
  }
  for (const Override& ov : overrides) {
    // A key=value expression is quoted whole; a literal (a dedicated flag) by its origin and value.
    const std::string label = ov.literal ? ov.origin + " " + ov.value : ov.origin + " " + ov.key + "=" + ov.value;
    if (ov.key.empty() || ov.key.front() == '.' || ov.key.back() == '.' || ov.key.find("..") != std::string::npos)
      throw ConfigError("in " + label + ": '" + ov.key + "' is not a key path such as mask.labels");
    if (ov.value.empty())
      throw ConfigError(ov.literal ? ov.origin + " needs a value" : "in " + label + ": no value after '='");
    YAML::Node value = ov.literal ? YAML::Node(ov.value) : load_yaml_text(ov.value, label);
    // Nest the value under the dotted key: a.b.c=v becomes {a: {b: {c: v}}}.
    std::vector<std::string> parts;
    for (size_t start = 0;;) {
      const size_t dot = ov.key.find('.', start);
      parts.push_back(ov.key.substr(start, dot - start));
      if (dot == std::string::npos) break;
      start = dot + 1;
    }
    YAML::Node node = value;
    for (auto it = parts.rbegin(); it != parts.rend(); ++it) {
      YAML::Node m(YAML::NodeType::Map);
      m[*it] = node;
      node = m;
    }
    apply(c, node, Origin{label, cwd, false});
  }
  {
    const Distortion& d = c.registration.depth_distortion;
    const bool any = std::any_of(d.coeffs.begin(), d.coeffs.end(), [](double x) { return x != 0.0; });
    if (d.model == DistortionModel::None && any)
      throw ConfigError(
          "config key 'registration.depth_distortion': coeffs are given but the model is none; set "
          "registration.depth_distortion.model (allowed values: inverse_brown_conrady)");
    if (d.model != DistortionModel::None && !any)
      throw ConfigError("config key 'registration.depth_distortion': model " + std::string(to_string(d.model)) +
                        " needs the depth camera's coefficients [k1, k2, p1, p2, k3] in "
                        "registration.depth_distortion.coeffs (all zero is no distortion: leave the key out)");
  }
  if (c.depth.min > c.depth.max)
    throw ConfigError("config keys 'depth.min' (" + std::to_string(c.depth.min) + ") and 'depth.max' (" +
                      std::to_string(c.depth.max) + "): min must not exceed max");
  if (!c.input.intrinsics_file.empty()) {
    try {
      c.input.intrinsics = read_intrinsics_file(c.input.intrinsics_file);
    } catch (const Error& e) {
      throw ConfigError(std::string("config key 'input.intrinsics': ") + e.what());
    }
  }
  return c;
}

}  // namespace

Config load_config(const std::optional<fs::path>& file, const std::vector<Override>& overrides, const fs::path& cwd) {
  if (!file) return build_config(nullptr, overrides, cwd);
  const fs::path abs = file->is_absolute() ? *file : (cwd / *file);
  return load_config_text(read_text(abs, "config file"), file->string(), abs.parent_path(), overrides, cwd);
}

Config load_config_text(const std::string& yaml, const std::string& name, const fs::path& base_dir,
                        const std::vector<Override>& overrides, const fs::path& cwd) {
  const ConfigText text{yaml, name, base_dir};
  return build_config(&text, overrides, cwd);
}

namespace {
std::string show_path(const fs::path& p, const std::optional<fs::path>& rel) {
  if (!rel) return p.string();
  const fs::path r = p.lexically_relative(*rel);
  return r.empty() ? p.string() : r.string();
}

void emit_number(YAML::Emitter& e, double v) {
  if (std::isnan(v)) {
    e << ".nan";
    return;
  }
  // The shortest of 15 or 17 significant digits that reads back as the same double (0.001 stays 0.001).
  for (int digits : {15, 17}) {
    std::ostringstream os;
    os.imbue(std::locale::classic());
    os.precision(digits);
    os << v;
    std::istringstream back(os.str());
    back.imbue(std::locale::classic());
    double r = 0;
    if ((back >> r && r == v) || digits == 17) {
      e << os.str();
      return;
    }
  }
}
}  // namespace

std::string to_yaml(const Config& c, const std::optional<fs::path>& relative_to) {
  YAML::Emitter e;
  e << YAML::BeginMap;
  e << YAML::Key << "input" << YAML::Value << YAML::BeginMap;
  e << YAML::Key << "layout" << YAML::Value << std::string(to_string(c.input.layout));
  e << YAML::Key << "root" << YAML::Value << show_path(c.input.root, relative_to);
  e << YAML::Key << "depth" << YAML::Value << YAML::DoubleQuoted << c.input.depth;
  e << YAML::Key << "mask" << YAML::Value << YAML::DoubleQuoted << c.input.mask;
  e << YAML::Key << "color" << YAML::Value;
  if (c.input.color.empty())
    e << YAML::Null;
  else
    e << YAML::DoubleQuoted << c.input.color;
  e << YAML::Key << "intrinsics" << YAML::Value;
  if (!c.input.intrinsics_file.empty()) {
    e << show_path(c.input.intrinsics_file, relative_to);
  } else if (c.input.intrinsics) {
    const Intrinsics& k = *c.input.intrinsics;
    e << YAML::Flow << YAML::BeginMap;
    e << YAML::Key << "fx" << YAML::Value;
    emit_number(e, k.fx);
    e << YAML::Key << "fy" << YAML::Value;
    emit_number(e, k.fy);
    e << YAML::Key << "cx" << YAML::Value;
    emit_number(e, k.cx);
    e << YAML::Key << "cy" << YAML::Value;
    emit_number(e, k.cy);
    if (k.width > 0) e << YAML::Key << "width" << YAML::Value << k.width;
    if (k.height > 0) e << YAML::Key << "height" << YAML::Value << k.height;
    e << YAML::EndMap;
  } else {
    e << YAML::Null;
  }
  e << YAML::Key << "max_time_diff" << YAML::Value;
  emit_number(e, c.input.max_time_diff);
  e << YAML::Key << "object" << YAML::Value;
  if (c.input.object.empty())
    e << YAML::Null;
  else
    e << c.input.object;
  e << YAML::Key << "bop_masks" << YAML::Value << c.input.bop_masks;
  e << YAML::Key << "allow_paths_outside_root" << YAML::Value << c.input.allow_paths_outside_root;
  e << YAML::Key << "max_file_bytes" << YAML::Value << c.input.max_file_bytes;
  e << YAML::Key << "max_image_pixels" << YAML::Value << c.input.max_image_pixels;
  e << YAML::EndMap;
  e << YAML::Key << "depth" << YAML::Value << YAML::BeginMap;
  e << YAML::Key << "scale" << YAML::Value;
  emit_number(e, c.depth.scale);
  e << YAML::Key << "min" << YAML::Value;
  emit_number(e, c.depth.min);
  e << YAML::Key << "max" << YAML::Value;
  emit_number(e, c.depth.max);
  e << YAML::Key << "encoding" << YAML::Value << std::string(to_string(c.depth.encoding));
  e << YAML::Key << "invalid_values" << YAML::Value << YAML::Flow << c.depth.invalid_values;
  e << YAML::EndMap;
  e << YAML::Key << "mask" << YAML::Value << YAML::BeginMap;
  e << YAML::Key << "threshold" << YAML::Value << c.mask.threshold;
  e << YAML::Key << "labels" << YAML::Value << YAML::Flow << c.mask.labels;
  e << YAML::Key << "threshold_fraction" << YAML::Value;
  if (c.mask.threshold_fraction)
    emit_number(e, *c.mask.threshold_fraction);
  else
    e << YAML::Null;
  e << YAML::Key << "invert" << YAML::Value << c.mask.invert;
  e << YAML::Key << "erode" << YAML::Value << c.mask.erode;
  e << YAML::Key << "per_instance" << YAML::Value << c.mask.per_instance;
  e << YAML::EndMap;
  e << YAML::Key << "registration" << YAML::Value << YAML::BeginMap;
  e << YAML::Key << "mode" << YAML::Value << std::string(to_string(c.registration.mode));
  e << YAML::Key << "depth_distortion" << YAML::Value;
  if (c.registration.depth_distortion.model == DistortionModel::None) {
    e << YAML::Null;
  } else {
    e << YAML::BeginMap;
    e << YAML::Key << "model" << YAML::Value << std::string(to_string(c.registration.depth_distortion.model));
    e << YAML::Key << "coeffs" << YAML::Value << YAML::Flow << YAML::BeginSeq;
    for (double x : c.registration.depth_distortion.coeffs) emit_number(e, x);
    e << YAML::EndSeq << YAML::EndMap;
  }
  e << YAML::EndMap;
  e << YAML::Key << "output" << YAML::Value << YAML::BeginMap;
  e << YAML::Key << "dir" << YAML::Value << show_path(c.output.dir, relative_to);
  e << YAML::Key << "format" << YAML::Value;
  if (c.output.formats.size() == 1) {
    e << std::string(to_string(c.output.formats[0]));
  } else {
    e << YAML::Flow << YAML::BeginSeq;
    for (auto f : c.output.formats) e << std::string(to_string(f));
    e << YAML::EndSeq;
  }
  e << YAML::Key << "invalid" << YAML::Value;
  emit_number(e, c.output.invalid);
  e << YAML::Key << "preview" << YAML::Value << c.output.preview;
  e << YAML::Key << "fsync" << YAML::Value << c.output.fsync;
  e << YAML::Key << "layout" << YAML::Value << std::string(to_string(c.output.layout));
  e << YAML::EndMap;
  e << YAML::Key << "backend" << YAML::Value << YAML::BeginMap;
  e << YAML::Key << "kind" << YAML::Value << std::string(to_string(c.backend.kind));
  e << YAML::Key << "device" << YAML::Value << c.backend.device;
  e << YAML::Key << "memory_limit_mb" << YAML::Value << c.backend.memory_limit_mb;
  e << YAML::EndMap;
  e << YAML::Key << "run" << YAML::Value << YAML::BeginMap;
  e << YAML::Key << "on_error" << YAML::Value << std::string(to_string(c.run.on_error));
  e << YAML::Key << "force" << YAML::Value << c.run.force;
  e << YAML::Key << "frames_in_flight" << YAML::Value << c.run.frames_in_flight;
  e << YAML::Key << "threads" << YAML::Value << c.run.threads;
  e << YAML::EndMap;
  e << YAML::Key << "live" << YAML::Value << YAML::BeginMap;
  e << YAML::Key << "source" << YAML::Value << YAML::DoubleQuoted << c.live.source;
  e << YAML::Key << "overflow" << YAML::Value << std::string(to_string(c.live.overflow));
  e << YAML::Key << "buffers" << YAML::Value << c.live.buffers;
  e << YAML::Key << "output_every" << YAML::Value << c.live.output_every;
  e << YAML::Key << "publish" << YAML::Value << YAML::DoubleQuoted << c.live.publish;
  e << YAML::Key << "stats_interval" << YAML::Value;
  emit_number(e, c.live.stats_interval);
  e << YAML::Key << "reconnect_max" << YAML::Value;
  emit_number(e, c.live.reconnect_max);
  e << YAML::Key << "sync" << YAML::Value << YAML::BeginMap << YAML::Key << "tolerance_ms" << YAML::Value;
  emit_number(e, c.live.sync.tolerance_ms);
  e << YAML::EndMap;
  e << YAML::Key << "preview" << YAML::Value << c.live.preview;
  e << YAML::Key << "mask" << YAML::Value << YAML::BeginMap;
  e << YAML::Key << "static" << YAML::Value;
  if (c.live.mask.static_file.empty())
    e << YAML::Null;
  else
    e << show_path(c.live.mask.static_file, relative_to);
  e << YAML::Key << "depth_band" << YAML::Value;
  if (!c.live.mask.depth_band) {
    e << YAML::Null;
  } else {
    e << YAML::Flow << YAML::BeginSeq;
    emit_number(e, c.live.mask.depth_band->min);
    emit_number(e, c.live.mask.depth_band->max);
    e << YAML::EndSeq;
  }
  e << YAML::Key << "color_key" << YAML::Value;
  if (!c.live.mask.color_key) {
    e << YAML::Null;
  } else {
    const LiveMaskConfig::ColorKey& k = *c.live.mask.color_key;
    e << YAML::Flow << YAML::BeginMap;
    e << YAML::Key << "h" << YAML::Value << YAML::Flow << YAML::BeginSeq << k.h[0] << k.h[1] << YAML::EndSeq;
    e << YAML::Key << "s" << YAML::Value << YAML::Flow << YAML::BeginSeq << k.s[0] << k.s[1] << YAML::EndSeq;
    e << YAML::Key << "v" << YAML::Value << YAML::Flow << YAML::BeginSeq << k.v[0] << k.v[1] << YAML::EndSeq;
    e << YAML::Key << "keep" << YAML::Value << (k.keep_inside ? "inside" : "outside");
    e << YAML::EndMap;
  }
  e << YAML::EndMap;
  e << YAML::EndMap;
  e << YAML::Key << "logging" << YAML::Value << YAML::BeginMap;
  e << YAML::Key << "level" << YAML::Value << c.logging.level;
  e << YAML::EndMap;
  e << YAML::EndMap;
  return std::string(e.c_str()) + "\n";
}

std::string intrinsics_to_yaml(const Intrinsics& k) {
  YAML::Emitter e;
  e << YAML::BeginMap;
  e << YAML::Key << "fx" << YAML::Value;
  emit_number(e, k.fx);
  e << YAML::Key << "fy" << YAML::Value;
  emit_number(e, k.fy);
  e << YAML::Key << "cx" << YAML::Value;
  emit_number(e, k.cx);
  e << YAML::Key << "cy" << YAML::Value;
  emit_number(e, k.cy);
  if (k.width > 0) e << YAML::Key << "width" << YAML::Value << k.width;
  if (k.height > 0) e << YAML::Key << "height" << YAML::Value << k.height;
  e << YAML::EndMap;
  return std::string(e.c_str()) + "\n";
}

Intrinsics parse_intrinsics_yaml(const std::string& text, const std::string& name) {
  YAML::Node root;
  try {
    root = YAML::Load(text);
  } catch (const YAML::ParserException& ex) {
    throw InputError("intrinsics file '" + name + "' line " + std::to_string(ex.mark.line + 1) +
                     ": YAML syntax error: " + ex.msg);
  }
  try {
    const Origin o{name, {}, true};
    return read_intrinsics_map(Reader(o), "", root);
  } catch (const ConfigError& ex) {
    throw InputError("intrinsics file '" + name + "': " + ex.what());
  }
}

}  // namespace depthmask
