#include "depthmask/detail/yaml_io.h"

#include <algorithm>
#include <cctype>
#include <cmath>
#include <limits>
#include <sstream>

#include "depthmask/detail/boolean_words.h"
#include "depthmask/errors.h"

namespace fs = std::filesystem;

namespace depthmask::detail {

std::string YamlReader::where(const YAML::Node& n) const {
  if (!o_.is_file) return "in " + o_.name;
  const YAML::Mark m = n.Mark();
  if (m.is_null()) return "in " + o_.name;
  return "at " + o_.name + " line " + std::to_string(m.line + 1);
}

void YamlReader::fail(const std::string& key, const YAML::Node& n, const std::string& what) const {
  throw ConfigError("config key '" + key + "' " + where(n) + ": " + what);
}

std::string YamlReader::scalar_text(const YAML::Node& n) {
  if (n.IsScalar()) return "'" + n.Scalar() + "'";
  if (n.IsSequence()) return "a list";
  if (n.IsMap()) return "a map";
  return "nothing";
}

std::string YamlReader::lower(std::string s) {
  std::transform(s.begin(), s.end(), s.begin(), [](unsigned char c) { return static_cast<char>(std::tolower(c)); });
  return s;
}

void YamlReader::expect_map(const std::string& key, const YAML::Node& n) const {
  if (!n.IsMap()) fail(key, n, "expected a map of keys, got " + scalar_text(n));
}

void YamlReader::unknown_key(const std::string& prefix, const std::string& full, const YAML::Node& n,
                             const std::vector<std::string>& allowed) const {
  std::string list;
  for (const std::string& a : allowed) list += (list.empty() ? "" : ", ") + a;
  throw ConfigError("unknown config key '" + full + "' " + where(n) + "; allowed keys" +
                    (prefix.empty() ? "" : " in '" + prefix + "'") + ": " + list);
}

std::string YamlReader::str(const std::string& key, const YAML::Node& n) const {
  if (!n.IsScalar()) fail(key, n, "expected a string, got " + scalar_text(n));
  return n.Scalar();
}

double YamlReader::number(const std::string& key, const YAML::Node& n) const {
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

double YamlReader::finite_number(const std::string& key, const YAML::Node& n) const {
  const double v = number(key, n);
  if (!std::isfinite(v)) fail(key, n, "expected a finite number, got '" + n.Scalar() + "'");
  return v;
}

int64_t YamlReader::integer(const std::string& key, const YAML::Node& n, int64_t lo, int64_t hi) const {
  if (!n.IsScalar()) fail(key, n, "expected an integer, got " + scalar_text(n));
  std::istringstream is(n.Scalar());
  int64_t v = 0;
  if (!(is >> v) || !(is >> std::ws).eof()) fail(key, n, "expected an integer, got '" + n.Scalar() + "'");
  if (v < lo || v > hi)
    fail(key, n,
         "expected an integer in [" + std::to_string(lo) + ", " + std::to_string(hi) + "], got " + std::to_string(v));
  return v;
}

std::optional<bool> parse_boolean_word(std::string_view s) {
  const std::string w = YamlReader::lower(std::string(s));
  if (w == "true" || w == "yes" || w == "on") return true;
  if (w == "false" || w == "no" || w == "off") return false;
  return std::nullopt;
}

bool YamlReader::boolean(const std::string& key, const YAML::Node& n) const {
  if (n.IsScalar())
    if (const std::optional<bool> b = parse_boolean_word(n.Scalar())) return *b;
  fail(key, n, "expected true or false, got " + scalar_text(n));
}

fs::path YamlReader::path(const std::string& key, const YAML::Node& n) const {
  const std::string s = str(key, n);
  if (s.empty()) fail(key, n, "expected a path, got an empty string");
  fs::path p(s);
  p = p.is_absolute() ? p.lexically_normal() : (o_.base / p).lexically_normal();
  // "dir/." normalises to "dir/": drop the trailing separator so equal folders compare equal.
  if (!p.has_filename() && p.has_parent_path() && p != p.root_path()) p = p.parent_path();
  return p;
}

YAML::Node load_yaml_text(const std::string& text, const std::string& name) {
  try {
    return YAML::Load(text);
  } catch (const YAML::ParserException& e) {
    throw ConfigError(name + " line " + std::to_string(e.mark.line + 1) + ": YAML syntax error: " + e.msg);
  }
}

void emit_number(YAML::Emitter& e, double v) {
  if (std::isnan(v)) {
    e << ".nan";
    return;
  }
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

std::string show_path(const fs::path& p, const std::optional<fs::path>& relative_to) {
  if (!relative_to) return p.string();
  const fs::path r = p.lexically_relative(*relative_to);
  return r.empty() ? p.string() : r.string();
}

}  // namespace depthmask::detail
