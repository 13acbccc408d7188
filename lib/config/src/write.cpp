// Writing the configuration (--print-config) and the settings hash's text, through the tables.
#include "table.h"

namespace fs = std::filesystem;

namespace depthmask {

namespace {

using detail::Key;
using detail::Section;
using detail::Writer;

void write_map(Writer& w, const Section& s, const Config& c) {
  w.e << YAML::BeginMap;
  for (const Key& k : s.keys) {
    if (w.for_hash && (!k.in_hash_text || (k.in_hash_text_if && !k.in_hash_text_if(c)))) continue;
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

// One value as written (by itself, paths absolute), to compare with the default's.
std::string written_value(const Key& k, const Config& c) {
  YAML::Emitter e;
  const std::optional<fs::path> absolute;
  Writer w{e, absolute, false};
  k.write(w, c);
  return e.c_str();
}

// Whether section `s` of `c` writes differently from the defaults' (a null map against a map counts).
bool section_differs(const Section& s, const Config& c, const Config& d) {
  for (const Key& k : s.keys) {
    if (!k.section) {
      if (written_value(k, c) != written_value(k, d)) return true;
      continue;
    }
    const auto null = k.section->written_as_null;
    if (null && null(c) != null(d)) return true;
    if (!(null && null(c)) && section_differs(*k.section, c, d)) return true;
  }
  return false;
}

// write_map() with only the keys that differ from `d`'s.
void write_changed(Writer& w, const Section& s, const Config& c, const Config& d) {
  w.e << YAML::BeginMap;
  for (const Key& k : s.keys) {
    if (!k.section) {
      if (written_value(k, c) == written_value(k, d)) continue;
      w.e << YAML::Key << k.name << YAML::Value;
      k.write(w, c);
      continue;
    }
    const auto null = k.section->written_as_null;
    const bool c_null = null && null(c);
    if (c_null && null(d)) continue;
    if (!c_null && !(null && null(d)) && !section_differs(*k.section, c, d)) continue;
    w.e << YAML::Key << k.name << YAML::Value;
    if (c_null)
      w.e << YAML::Null;
    else if (null && null(d))
      write_map(w, *k.section, c);  // from no map to a map: all of it
    else
      write_changed(w, *k.section, c, d);
  }
  w.e << YAML::EndMap;
}

std::string write_yaml(const Config& c, const std::optional<fs::path>& relative_to, bool for_hash) {
  YAML::Emitter e;
  Writer w{e, relative_to, for_hash};
  write_map(w, detail::config_table(), c);
  return std::string(e.c_str()) + "\n";
}

}  // namespace

std::string to_yaml(const Config& c, const std::optional<fs::path>& relative_to) {
  return write_yaml(c, relative_to, false);
}

std::string to_yaml_changed(const Config& c, const std::optional<fs::path>& relative_to) {
  YAML::Emitter e;
  Writer w{e, relative_to, false};
  write_changed(w, detail::config_table(), c, Config{});
  return std::string(e.c_str()) + "\n";
}

std::string settings_yaml(const Config& c) {
  // Every key outside the hash at its default (output.dir at "."), as manifests of format 1 hashed it.
  Config baseline;
  baseline.output.dir = ".";
  // live.overflow's default was drop_oldest then (auto came later): the text keeps that word.
  baseline.live.overflow = Overflow::DropOldest;
  Config n = c;
  for (const Key* k : detail::value_keys())
    if (!k->hashed) k->copy(n, baseline);
  return write_yaml(n, std::nullopt, true);
}

}  // namespace depthmask
