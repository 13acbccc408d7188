// Reading the configuration: defaults < the YAML file < the overrides, each walked through the
// tables (keys.cpp), then the checks across keys and the intrinsics file. Errors name the key (dotted
// path), where it came from (file and line, or the override) and, for enums, the allowed values.
#include <algorithm>

#include "depthmask/detail/read_file.h"
#include "depthmask/errors.h"
#include "table.h"

namespace fs = std::filesystem;

namespace depthmask {

namespace {

using detail::Key;
using detail::Section;
using detail::YamlOrigin;
using detail::YamlReader;

// Reads a map of keys into `c`, setting the set-by-user bit of each key it names.
void read_map(const YamlReader& r, const Section& s, const std::string& prefix, const YAML::Node& map, Config& c) {
  r.each(prefix, map, s.names, [&](const std::string& name, const std::string& full, const YAML::Node& v) {
    const Key& k = *s.find(name);
    if (k.section) {
      if (!v.IsNull())
        read_map(r, *k.section, full, v, c);
      else if (k.section->null_resets)  // registration.depth_distortion: ~ -> every key at its default
        for (const Key& sub : k.section->keys) {
          if (sub.section) continue;  // (no nested maps below such a key today)
          sub.copy(c, Config{});
          detail::SetByUser::mark(c, sub);
        }
      return;  // "mask:" with nothing under it: no changes
    }
    detail::SetByUser::mark(c, k);
    k.read(r, full, v, c);
  });
}

void apply(Config& c, const YAML::Node& root, const YamlOrigin& o) {
  if (!root || root.IsNull()) return;  // an empty file: defaults
  read_map(YamlReader(o), detail::config_table(), "", root, c);
}

// A configuration file's text; a file that cannot be read is the configuration's error (exit code 2).
std::string read_text(const fs::path& file, const char* what) {
  try {
    return detail::read_file_bounded(file, detail::kMaxTextFileBytes, what);
  } catch (const InputError& e) {
    throw ConfigError(e.what());
  }
}

// A configuration file's text, its name as messages show it and the folder its relative paths resolve against.
struct ConfigText {
  const std::string& yaml;
  const std::string& name;
  const fs::path& base;
};

// An override's value as a YAML node. For a key whose field is a string or a path, the text as
// written (a pattern such as {id}-depth.exr would read as a YAML flow map), except a value opening with
// a quote (a YAML quoted scalar, as before) and null or ~ (none, for an optional key); input.intrinsics
// also takes an inline {fx: ...} map; other keys read it as YAML.
YAML::Node override_value(const Override& ov, const std::string& label) {
  if (ov.literal) return YAML::Node(ov.value);
  using Text = Key::OverrideText;
  const Key* k = detail::find_value_key(ov.key);
  const std::string& v = ov.value;
  if (!k || k->override_text == Text::Yaml || v.front() == '"' || v.front() == '\'' ||
      (k->override_text == Text::StringOrMap && v.front() == '{'))
    return detail::load_yaml_text(v, label);
  if (v == "null" || v == "Null" || v == "NULL" || v == "~") return YAML::Node(YAML::NodeType::Null);
  return YAML::Node(v);
}

// `a.b.c=v` as the map {a: {b: {c: v}}}.
YAML::Node override_node(const Override& ov, const std::string& label) {
  YAML::Node node = override_value(ov, label);
  std::vector<std::string> parts;
  for (size_t start = 0;;) {
    const size_t dot = ov.key.find('.', start);
    parts.push_back(ov.key.substr(start, dot - start));
    if (dot == std::string::npos) break;
    start = dot + 1;
  }
  for (auto it = parts.rbegin(); it != parts.rend(); ++it) {
    YAML::Node m(YAML::NodeType::Map);
    m[*it] = node;
    node = m;
  }
  return node;
}

// The checks that involve more than one key, once every source is applied.
void check_across_keys(const Config& c) {
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
  if (c.depth.min > c.depth.max)
    throw ConfigError("config keys 'depth.min' (" + std::to_string(c.depth.min) + ") and 'depth.max' (" +
                      std::to_string(c.depth.max) + "): min must not exceed max");
}

Config build_config(const ConfigText* file, const std::vector<Override>& overrides, const fs::path& cwd) {
  Config c;
  c.input.root = cwd;
  c.output.dir = cwd / "out";
  if (file) {
    const YAML::Node root = detail::load_yaml_text(file->yaml, file->name);
    if (root && !root.IsNull() && !root.IsMap())
      throw ConfigError(
          file->name +
          ": the top level must be a map of sections (input, depth, mask, output, backend, run, live, logging)");
    c.input.root = file->base;
    c.output.dir = file->base / "out";
    apply(c, root, YamlOrigin{file->name, file->base, true});
  }
  apply_overrides(c, overrides, cwd);
  return c;
}

}  // namespace

void apply_overrides(Config& c, const std::vector<Override>& overrides, const fs::path& cwd) {
  for (const Override& ov : overrides) {
    // A key=value expression is quoted whole; a literal (a dedicated flag) by its origin and value.
    const std::string label = ov.literal ? ov.origin + " " + ov.value : ov.origin + " " + ov.key + "=" + ov.value;
    if (ov.key.empty() || ov.key.front() == '.' || ov.key.back() == '.' || ov.key.find("..") != std::string::npos)
      throw ConfigError("in " + label + ": '" + ov.key + "' is not a key path such as mask.labels");
    if (ov.value.empty())
      throw ConfigError(ov.literal ? ov.origin + " needs a value" : "in " + label + ": no value after '='");
    apply(c, override_node(ov, label), YamlOrigin{label, cwd, false});
  }
  check_across_keys(c);
  // The intrinsics file, once: an override may have replaced the file's key.
  if (!c.input.intrinsics_file.empty()) {
    try {
      c.input.intrinsics = read_intrinsics_file(c.input.intrinsics_file);
    } catch (const Error& e) {
      throw ConfigError(std::string("config key 'input.intrinsics': ") + e.what());
    }
  }
}

Override parse_override(const std::string& text, const std::string& origin) {
  const auto eq = text.find('=');
  if (eq == std::string::npos || eq == 0)
    throw ConfigError(origin + " '" + text + "': expected key.path=value, e.g. --set mask.labels=[48,114]");
  return Override{text.substr(0, eq), text.substr(eq + 1), origin};
}

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

}  // namespace depthmask
