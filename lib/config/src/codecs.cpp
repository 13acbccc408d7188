// The codecs of codecs.h whose reading takes more than a line.
#include "codecs.h"

#include <algorithm>

#include "depthmask/kernels/color_key.h"
#include "intrinsics_yaml.h"

namespace fs = std::filesystem;

namespace depthmask::detail {

void Formats::read(const YamlReader& r, const std::string& k, const YAML::Node& v, std::vector<OutputFormat>& f) const {
  const Enum<OutputFormat> format = one_of(kOutputFormats);
  std::vector<OutputFormat> out;
  auto one = [&](const YAML::Node& e) {
    const OutputFormat x = format.parse(r, k, e);
    if (std::find(out.begin(), out.end(), x) == out.end()) out.push_back(x);
  };
  if (v.IsSequence())
    for (const auto& e : v) one(e);
  else
    one(v);
  if (out.empty()) r.fail(k, v, "needs at least one format; allowed values: " + format.allowed());
  f = out;
}

void Formats::write(Writer& w, const std::vector<OutputFormat>& f) const {
  if (f.size() == 1) {
    w.e << std::string(to_string(f[0]));
    return;
  }
  w.e << YAML::Flow << YAML::BeginSeq;
  for (auto x : f) w.e << std::string(to_string(x));
  w.e << YAML::EndSeq;
}

void Word::read(const YamlReader& r, const std::string& k, const YAML::Node& v, std::string& f) const {
  const std::string s = fold_case ? YamlReader::lower(r.str(k, v)) : r.str(k, v);
  if (std::find(words.begin(), words.end(), s) == words.end()) {
    std::string list;
    for (const auto& w : words) list += (list.empty() ? "" : ", ") + w;
    r.fail(k, v, "invalid value '" + v.Scalar() + "'; allowed values: " + list);
  }
  f = s;
}

void Text::read(const YamlReader& r, const std::string& k, const YAML::Node& v, std::string& f) const {
  const std::string s = null_reads_empty && v.IsNull() ? std::string() : r.str(k, v);
  if (valid && !valid(s)) r.fail(k, v, std::string(expected) + ", got '" + s + "'");
  f = s;
}

void Text::write(Writer& w, const std::string& f) const {
  if (empty_writes_null && f.empty()) {
    w.e << YAML::Null;
    return;
  }
  if (quoted) w.e << YAML::DoubleQuoted;
  w.e << f;
}

void TextList::read(const YamlReader& r, const std::string& k, const YAML::Node& v, std::vector<std::string>& f) const {
  std::vector<std::string> out;
  if (v.IsSequence()) {
    for (const YAML::Node& e : v) out.push_back(r.str(k, e));
  } else if (!v.IsNull()) {
    out.push_back(r.str(k, v));
  }
  for (const std::string& s : out)
    if (s.empty()) r.fail(k, v, "expected topic names such as /seg/mask, got an empty one");
  f = std::move(out);
}

void Pattern::read(const YamlReader& r, const std::string& k, const YAML::Node& v, std::string& f) const {
  if (optional && v.IsNull()) {
    f.clear();
    return;
  }
  const std::string s = r.str(k, v);
  if (s.empty() && optional) {
    f = s;
    return;
  }
  size_t count = 0;
  for (size_t pos = s.find("{id}"); pos != std::string::npos; pos = s.find("{id}", pos + 4)) ++count;
  if (count != 1) r.fail(k, v, "a file pattern needs exactly one '{id}', got '" + s + "'");
  if (fs::path(s).is_absolute()) r.fail(k, v, "a file pattern is relative to input.root, got the absolute '" + s + "'");
  f = s;
}

void Pattern::write(Writer& w, const std::string& f) const {
  if (optional && f.empty())
    w.e << YAML::Null;
  else
    w.e << YAML::DoubleQuoted << f;
}

void Path::read(const YamlReader& r, const std::string& k, const YAML::Node& v, fs::path& f) const {
  if (optional && (v.IsNull() || (v.IsScalar() && v.Scalar().empty())))
    f.clear();
  else
    f = r.path(k, v);
}

void Path::write(Writer& w, const fs::path& f) const {
  if (optional && f.empty())
    w.e << YAML::Null;
  else
    w.e << detail::show_path(f, w.relative_to);
}

void RawList::read(const YamlReader& r, const std::string& k, const YAML::Node& v, std::vector<uint32_t>& f) const {
  f.clear();
  if (v.IsNull()) return;
  if (v.IsScalar()) {
    f.push_back(static_cast<uint32_t>(r.integer(k, v, 0, 65535)));
    return;
  }
  if (!v.IsSequence())
    r.fail(k, v, std::string("expected a list of ") + example + ", got " + YamlReader::scalar_text(v));
  if (v.size() > static_cast<size_t>(max_count))
    r.fail(k, v,
           "at most " + std::to_string(max_count) + " " + noun + " are supported, got " + std::to_string(v.size()));
  for (const auto& e : v) f.push_back(static_cast<uint32_t>(r.integer(k, e, 0, 65535)));
}

void Fraction::read(const YamlReader& r, const std::string& k, const YAML::Node& v, std::optional<double>& f) const {
  if (v.IsNull()) {
    f.reset();
    return;
  }
  const double x = r.finite_number(k, v);
  if (x < 0 || x > 1) r.fail(k, v, "expected a fraction of the mask's full scale in [0, 1], got " + v.Scalar());
  f = x;
}

void Fraction::write(Writer& w, const std::optional<double>& f) const {
  if (f)
    detail::emit_number(w.e, *f);
  else
    w.e << YAML::Null;
}

void Coeffs::read(const YamlReader& r, const std::string& k, const YAML::Node& v, std::array<double, 5>& f) const {
  if (!v.IsSequence() || v.size() != 5)
    r.fail(k, v,
           "expected a list of the 5 coefficients [k1, k2, p1, p2, k3], got " +
               (v.IsSequence() ? std::to_string(v.size()) + " numbers" : YamlReader::scalar_text(v)));
  for (size_t i = 0; i < 5; ++i) f[i] = r.finite_number(k, v[i]);
}

void Coeffs::write(Writer& w, const std::array<double, 5>& f) const {
  w.e << YAML::Flow << YAML::BeginSeq;
  for (double x : f) detail::emit_number(w.e, x);
  w.e << YAML::EndSeq;
}

void Band::read(const YamlReader& r, const std::string& k, const YAML::Node& v,
                std::optional<LiveMaskConfig::DepthBand>& f) const {
  if (v.IsNull()) {
    f.reset();
    return;
  }
  if (!v.IsSequence() || v.size() != 2)
    r.fail(k, v,
           "expected [min, max] in metres such as [0.4, 1.2], got " +
               (v.IsSequence() ? std::to_string(v.size()) + " numbers" : YamlReader::scalar_text(v)));
  const double lo = r.finite_number(k, v[0]), hi = r.finite_number(k, v[1]);
  if (!(lo < hi)) r.fail(k, v, "expected min < max metres, got [" + v[0].Scalar() + ", " + v[1].Scalar() + "]");
  f = LiveMaskConfig::DepthBand{lo, hi};
}

void Band::write(Writer& w, const std::optional<LiveMaskConfig::DepthBand>& f) const {
  if (!f) {
    w.e << YAML::Null;
    return;
  }
  w.e << YAML::Flow << YAML::BeginSeq;
  detail::emit_number(w.e, f->min);
  detail::emit_number(w.e, f->max);
  w.e << YAML::EndSeq;
}

void ColorKeyRange::read(const YamlReader& r, const std::string& key, const YAML::Node& n,
                         std::optional<LiveMaskConfig::ColorKey>& out) const {
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
               "invalid value " + YamlReader::scalar_text(v) +
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
                 (v.IsSequence() ? std::to_string(v.size()) + " numbers" : YamlReader::scalar_text(v)));
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

void ColorKeyRange::write(Writer& w, const std::optional<LiveMaskConfig::ColorKey>& f) const {
  if (!f) {
    w.e << YAML::Null;
    return;
  }
  const LiveMaskConfig::ColorKey& k = *f;
  YAML::Emitter& e = w.e;
  e << YAML::Flow << YAML::BeginMap;
  e << YAML::Key << "h" << YAML::Value << YAML::Flow << YAML::BeginSeq << k.h[0] << k.h[1] << YAML::EndSeq;
  e << YAML::Key << "s" << YAML::Value << YAML::Flow << YAML::BeginSeq << k.s[0] << k.s[1] << YAML::EndSeq;
  e << YAML::Key << "v" << YAML::Value << YAML::Flow << YAML::BeginSeq << k.v[0] << k.v[1] << YAML::EndSeq;
  e << YAML::Key << "keep" << YAML::Value << (k.keep_inside ? "inside" : "outside");
  e << YAML::EndMap;
}

// input.intrinsics: ~ (none), an inline {fx, fy, cx, cy[, width, height]} map, or a file (read by
// load_config once every source is applied, so an override may replace it unread).
Key intrinsics_key(const char* doc) {
  Key k;
  k.name = "intrinsics";
  k.doc = doc;
  k.override_text = Key::OverrideText::StringOrMap;  // a file as written, or {fx: ...}
  k.read = [](const YamlReader& r, const std::string& full, const YAML::Node& v, Config& c) {
    InputConfig& in = c.input;
    if (v.IsNull())
      in.intrinsics_file.clear(), in.intrinsics.reset();
    else if (v.IsMap())
      in.intrinsics_file.clear(), in.intrinsics = detail::read_intrinsics_map(r, full, v);
    else
      in.intrinsics_file = r.path(full, v), in.intrinsics.reset();
  };
  k.write = [](Writer& w, const Config& c) {
    // The settings hash counts the values, not the file's name.
    if (!c.input.intrinsics_file.empty() && !w.for_hash) {
      w.e << detail::show_path(c.input.intrinsics_file, w.relative_to);
    } else if (c.input.intrinsics) {
      w.e << YAML::Flow;
      detail::emit_intrinsics_map(w.e, *c.input.intrinsics);
    } else {
      w.e << YAML::Null;
    }
  };
  k.copy = [](Config& to, const Config& from) {
    to.input.intrinsics_file = from.input.intrinsics_file;
    to.input.intrinsics = from.input.intrinsics;
  };
  k.holds = [](const Config& c, const void* p, std::type_index t) {
    return (p == &c.input.intrinsics && t == std::type_index(typeid(std::optional<Intrinsics>))) ||
           (p == &c.input.intrinsics_file && t == std::type_index(typeid(fs::path)));
  };
  return k;
}

}  // namespace depthmask::detail
