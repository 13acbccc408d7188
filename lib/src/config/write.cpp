// Writing the configuration (--print-config) and the settings hash's text, through the tables.
#include "config/table.h"

namespace fs = std::filesystem;

namespace depthmask {

namespace {

using config_detail::Key;
using config_detail::Section;
using config_detail::Writer;

void write_map(Writer& w, const Section& s, const Config& c) {
  w.e << YAML::BeginMap;
  for (const Key& k : s.keys) {
    w.e << YAML::Key << k.name << YAML::Value;
    if (!k.section)
      k.write(w, c);
    else if (k.section->written_as_null && k.section->written_as_null(c))
      w.e << YAML::Null;
    else
      write_map(w, *k.section, c);
  }
  w.e << YAML::EndMap;
}

std::string write_yaml(const Config& c, const std::optional<fs::path>& relative_to, bool for_hash) {
  YAML::Emitter e;
  Writer w{e, relative_to, for_hash};
  write_map(w, config_detail::config_table(), c);
  return std::string(e.c_str()) + "\n";
}

}  // namespace

std::string to_yaml(const Config& c, const std::optional<fs::path>& relative_to) {
  return write_yaml(c, relative_to, false);
}

std::string settings_yaml(const Config& c) {
  // Every key outside the hash at its default (output.dir at "."), as manifests of format 1 hashed it.
  Config baseline;
  baseline.output.dir = ".";
  Config n = c;
  for (const Key* k : config_detail::value_keys())
    if (!k->hashed) k->copy(n, baseline);
  return write_yaml(n, std::nullopt, true);
}

}  // namespace depthmask
