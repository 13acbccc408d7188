// How a configuration value is read from YAML (with its limits and messages) and written back: one
// small codec per kind of value, each with
//   void read(const YamlReader&, const std::string& key, const YAML::Node&, T& field) const;
//   void write(Writer&, const T& field) const;
// The tables (keys.cpp) pair each key's field with one of these.
#pragma once

#include <cmath>
#include <cstdint>
#include <limits>
#include <string>
#include <vector>

#include "depthmask/errors.h"
#include "enum_names.h"
#include "table.h"

namespace depthmask::detail {

struct Flag {
  void read(const YamlReader& r, const std::string& k, const YAML::Node& v, bool& f) const { f = r.boolean(k, v); }
  void write(Writer& w, bool f) const { w.e << f; }
};

// An integer in [lo, hi].
template <class T>
struct Int {
  int64_t lo, hi;
  void read(const YamlReader& r, const std::string& k, const YAML::Node& v, T& f) const {
    f = static_cast<T>(r.integer(k, v, lo, hi));
  }
  void write(Writer& w, T f) const { w.e << f; }
};

// A finite number within bounds; outside them the message is "<what>, got <value>".
struct Bounds {
  double lo = -std::numeric_limits<double>::infinity(), hi = std::numeric_limits<double>::infinity();
  bool lo_open = false;
  bool contains(double x) const { return (lo_open ? x > lo : x >= lo) && x <= hi; }
};
inline Bounds above(double lo) { return {lo, std::numeric_limits<double>::infinity(), true}; }
inline Bounds at_least(double lo) { return {lo, std::numeric_limits<double>::infinity(), false}; }
inline Bounds within(double lo, double hi) { return {lo, hi, false}; }

struct Number {
  Bounds bounds;
  const char* what;
  void read(const YamlReader& r, const std::string& k, const YAML::Node& v, double& f) const {
    const double x = r.finite_number(k, v);
    if (!bounds.contains(x)) r.fail(k, v, std::string(what) + ", got " + v.Scalar());
    f = x;
  }
  void write(Writer& w, double f) const { detail::emit_number(w.e, f); }
};

// depth.scale: metres per raw unit, positive, or one of the preset names.
struct DepthScale {
  void read(const YamlReader& r, const std::string& k, const YAML::Node& v, double& f) const {
    if (v.IsScalar()) {
      for (const auto& p : kDepthScalePresets)
        if (v.Scalar() == p.name) {
          f = p.metres_per_unit;
          return;
        }
      try {
        (void)r.number(k, v);
      } catch (const ConfigError&) {
        r.fail(k, v,
               "expected a number (metres per raw unit) or a preset (" + names_list(kDepthScalePresets) + "), got '" +
                   v.Scalar() + "'");
      }
    }
    const double x = r.finite_number(k, v);
    if (!(x > 0)) r.fail(k, v, "metres per raw unit must be positive, got " + v.Scalar());
    f = x;
  }
  void write(Writer& w, double f) const { detail::emit_number(w.e, f); }
};

// output.invalid: 0, nan or any number a float holds.
struct Float32 {
  void read(const YamlReader& r, const std::string& k, const YAML::Node& v, float& f) const {
    const double x = r.number(k, v);
    // Beyond float's range the conversion below would be undefined behaviour (UBSan).
    if (std::isinf(x) || std::fabs(x) > std::numeric_limits<float>::max())
      r.fail(k, v, "expected 0, nan or a finite 32-bit float number, got '" + v.Scalar() + "'");
    f = static_cast<float>(x);
  }
  void write(Writer& w, float f) const { detail::emit_number(w.e, f); }
};

template <class E>
struct Enum {
  const EnumName<E>* names;
  size_t count;
  std::string allowed() const {
    std::string s;
    for (size_t i = 0; i < count; ++i) s += (i ? ", " : "") + std::string(names[i].name);
    return s;
  }
  E parse(const YamlReader& r, const std::string& k, const YAML::Node& v) const {
    if (v.IsScalar())
      for (size_t i = 0; i < count; ++i)
        if (names[i].name == v.Scalar()) return names[i].value;
    r.fail(k, v, "invalid value " + YamlReader::scalar_text(v) + "; allowed values: " + allowed());
  }
  void read(const YamlReader& r, const std::string& k, const YAML::Node& v, E& f) const { f = parse(r, k, v); }
  void write(Writer& w, E f) const {
    for (size_t i = 0; i < count; ++i)
      if (names[i].value == f) w.e << std::string(names[i].name);
  }
};
template <class E, size_t N>
Enum<E> one_of(const EnumName<E> (&names)[N]) {
  return Enum<E>{names, N};
}

// output.format: one format or a list of them (duplicates dropped); written as one word or a list.
struct Formats {
  void read(const YamlReader& r, const std::string& k, const YAML::Node& v, std::vector<OutputFormat>& f) const;
  void write(Writer& w, const std::vector<OutputFormat>& f) const;
};

// A string that is one of `words` (compared lower-cased when fold_case; logging.level).
struct Word {
  std::vector<std::string> words;
  bool fold_case = false;
  void read(const YamlReader& r, const std::string& k, const YAML::Node& v, std::string& f) const;
  void write(Writer& w, const std::string& f) const { w.e << f; }
};

// A string: `~` may read as the empty string, the empty string may be written as `~`, the text may be
// written double-quoted, and a check may refuse it ("<expected>, got '<value>'").
struct Text {
  bool null_reads_empty = false;
  bool empty_writes_null = false;
  bool quoted = false;
  bool (*valid)(const std::string&) = nullptr;
  const char* expected = "";
  void read(const YamlReader& r, const std::string& k, const YAML::Node& v, std::string& f) const;
  void write(Writer& w, const std::string& f) const;
};

// An input file pattern relative to input.root with exactly one {id}; `optional`: ~ or "" is none
// (written as ~). Always written double-quoted.
struct Pattern {
  bool optional = false;
  void read(const YamlReader& r, const std::string& k, const YAML::Node& v, std::string& f) const;
  void write(Writer& w, const std::string& f) const;
};

// A path (relative to the file's folder, or to the working folder for an override); `optional`:
// ~ or "" is none (written as ~).
struct Path {
  bool optional = false;
  void read(const YamlReader& r, const std::string& k, const YAML::Node& v, std::filesystem::path& f) const;
  void write(Writer& w, const std::filesystem::path& f) const;
};

// A list of raw 16-bit values (a single value is a list of one; ~ is none), at most max_count.
struct RawList {
  int max_count;
  const char* example;  // "raw values such as [65535]"
  const char* noun;     // "invalid raw values"
  void read(const YamlReader& r, const std::string& k, const YAML::Node& v, std::vector<uint32_t>& f) const;
  void write(Writer& w, const std::vector<uint32_t>& f) const { w.e << YAML::Flow << f; }
};

// A list of strings (a single string is a list of one; ~ or [] is none): input.topics.mask.
struct TextList {
  void read(const YamlReader& r, const std::string& k, const YAML::Node& v, std::vector<std::string>& f) const;
  void write(Writer& w, const std::vector<std::string>& f) const { w.e << YAML::Flow << f; }
};

// mask.threshold_fraction: ~ or a fraction in [0, 1].
struct Fraction {
  void read(const YamlReader& r, const std::string& k, const YAML::Node& v, std::optional<double>& f) const;
  void write(Writer& w, const std::optional<double>& f) const;
};

// registration.depth_distortion.coeffs: [k1, k2, p1, p2, k3].
struct Coeffs {
  void read(const YamlReader& r, const std::string& k, const YAML::Node& v, std::array<double, 5>& f) const;
  void write(Writer& w, const std::array<double, 5>& f) const;
};

// live.mask.depth_band: ~ or [min, max] metres, min < max.
struct Band {
  void read(const YamlReader& r, const std::string& k, const YAML::Node& v,
            std::optional<LiveMaskConfig::DepthBand>& f) const;
  void write(Writer& w, const std::optional<LiveMaskConfig::DepthBand>& f) const;
};

// live.mask.color_key: ~ or {h: [min, max], s: [min, max], v: [min, max], keep: inside|outside}. A map
// merges into a key set earlier (an override may change h alone); a new key needs h, s and v.
struct ColorKeyRange {
  void read(const YamlReader& r, const std::string& k, const YAML::Node& v,
            std::optional<LiveMaskConfig::ColorKey>& f) const;
  void write(Writer& w, const std::optional<LiveMaskConfig::ColorKey>& f) const;
};

// input.intrinsics (two fields: the file it names, and the values inline or read from it).
Key intrinsics_key(const char* doc);

}  // namespace depthmask::detail
