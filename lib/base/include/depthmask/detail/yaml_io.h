// The YAML side of the configuration and of the small YAML files beside it (intrinsics): reading
// scalars with messages that name the key, where it came from (file and line, or the override) and
// what was expected; writing numbers that read back as the same double. The only yaml-cpp users are
// lib/src/config/ and intrinsics.cpp.
#pragma once

#include <yaml-cpp/yaml.h>

#include <algorithm>
#include <cstdint>
#include <filesystem>
#include <optional>
#include <string>
#include <vector>

namespace depthmask::detail {

// Where a value came from.
struct YamlOrigin {
  std::string name;            // the file as given, or the override text
  std::filesystem::path base;  // relative paths resolve against this
  bool is_file = true;
};

class YamlReader {
 public:
  explicit YamlReader(const YamlOrigin& o) : o_(o) {}

  // "at <file> line <n>" or "in <override>".
  std::string where(const YAML::Node& n) const;
  // ConfigError "config key '<key>' <where>: <what>".
  [[noreturn]] void fail(const std::string& key, const YAML::Node& n, const std::string& what) const;
  // "'text'", "a list", "a map" or "nothing": how messages show a value.
  static std::string scalar_text(const YAML::Node& n);
  static std::string lower(std::string s);

  void expect_map(const std::string& key, const YAML::Node& n) const;
  // Calls f(subkey, full key, value) for each entry of a map; a key not in `allowed` is a ConfigError
  // naming it, where it is, and the allowed keys.
  template <class F>
  void each(const std::string& prefix, const YAML::Node& map, const std::vector<std::string>& allowed, F&& f) const {
    expect_map(prefix, map);
    for (const auto& kv : map) {
      const std::string k = kv.first.IsScalar() ? kv.first.Scalar() : "?";
      std::string full = prefix;
      if (!full.empty()) full += '.';
      full += k;
      if (std::find(allowed.begin(), allowed.end(), k) == allowed.end()) unknown_key(prefix, full, kv.first, allowed);
      f(k, full, kv.second);
    }
  }

  std::string str(const std::string& key, const YAML::Node& n) const;
  double number(const std::string& key, const YAML::Node& n) const;  // also nan, .inf, -.inf
  double finite_number(const std::string& key, const YAML::Node& n) const;
  int64_t integer(const std::string& key, const YAML::Node& n, int64_t lo, int64_t hi) const;
  bool boolean(const std::string& key, const YAML::Node& n) const;  // true/yes/on, false/no/off
  // A path: relative ones resolve against the origin's base; normalised, without a trailing separator.
  std::filesystem::path path(const std::string& key, const YAML::Node& n) const;

 private:
  [[noreturn]] void unknown_key(const std::string& prefix, const std::string& full, const YAML::Node& n,
                                const std::vector<std::string>& allowed) const;
  const YamlOrigin& o_;
};

// YAML::Load with a syntax error as ConfigError "<name> line <n>: YAML syntax error: ...".
YAML::Node load_yaml_text(const std::string& text, const std::string& name);

// The shortest of 15 or 17 significant digits that reads back as the same double; .nan for NaN.
void emit_number(YAML::Emitter& e, double v);

// A path as --print-config shows it: relative to `relative_to` when given (and possible), else as is.
std::string show_path(const std::filesystem::path& p, const std::optional<std::filesystem::path>& relative_to);

}  // namespace depthmask::detail
