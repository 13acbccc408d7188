// The configuration tables' types: a Key is one row (its name, doc line, whether it enters the
// settings hash, the layouts it applies to, and how its field is read, written and copied); a Section
// is a map of keys (input, depth, ..., and nested maps such as live.mask). keys.cpp holds the rows;
// read.cpp and write.cpp walk them.
#pragma once

#include <cstdint>
#include <functional>
#include <initializer_list>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <type_traits>
#include <typeindex>
#include <vector>

#include "depthmask/config.h"
#include "depthmask/detail/yaml_io.h"

namespace depthmask::detail {

using detail::YamlReader;

// Where a key writes: the emitter, the folder paths are shown relative to, and whether this is the
// settings hash's text (intrinsics by value, not by file name).
struct Writer {
  YAML::Emitter& e;
  const std::optional<std::filesystem::path>& relative_to;
  bool for_hash = false;
};

// The struct of each section inside Config: part<DepthConfig>(c) is c.depth.
template <class S>
struct Part;
#define DEPTHMASK_CONFIG_PART(S, member) \
  template <>                            \
  struct Part<S> {                       \
    template <class C>                   \
    static auto& of(C& c) {              \
      return c.member;                   \
    }                                    \
  }
DEPTHMASK_CONFIG_PART(InputConfig, input);
DEPTHMASK_CONFIG_PART(InputConfig::Topics, input.topics);
DEPTHMASK_CONFIG_PART(DepthConfig, depth);
DEPTHMASK_CONFIG_PART(MaskConfig, mask);
DEPTHMASK_CONFIG_PART(RegistrationConfig, registration);
DEPTHMASK_CONFIG_PART(Distortion, registration.depth_distortion);
DEPTHMASK_CONFIG_PART(OutputConfig, output);
DEPTHMASK_CONFIG_PART(OutputConfig::Mcap, output.mcap);
DEPTHMASK_CONFIG_PART(BackendConfig, backend);
DEPTHMASK_CONFIG_PART(RunConfig, run);
DEPTHMASK_CONFIG_PART(LiveConfig, live);
DEPTHMASK_CONFIG_PART(LiveConfig::Sync, live.sync);
DEPTHMASK_CONFIG_PART(LiveMaskConfig, live.mask);
DEPTHMASK_CONFIG_PART(LoggingConfig, logging);
#undef DEPTHMASK_CONFIG_PART

template <class S, class C>
auto& part(C& c) {
  return Part<S>::of(c);
}

struct Section;

// One row of a table: a key with a value, or (section set) a nested map of keys.
struct Key {
  std::string name;  // within its section: "scale"
  std::string doc;   // one line: what the value means
  bool hashed = true;
  // Written into the settings hash's text (at its default when not hashed). Keys added after manifests
  // existed and outside the hash are left out of it, so that adding them changes no settings hash:
  // every manifest written before stays resumable.
  bool in_hash_text = true;
  // In the hash and its text only where this holds of the configuration (a section that only shapes
  // the outputs of a format added after manifests existed: output.mcap); null: always.
  bool (*in_hash_text_if)(const Config&) = nullptr;
  uint32_t layouts = 0;  // bit (1 << InputLayout) per layout the key applies to; 0: every layout
  // How an override's text is read (override_value in read.cpp): as YAML, or (a string or path field)
  // as written unless it opens with a quote or is null, so `input.depth={id}.png` needs no YAML quotes;
  // StringOrMap (input.intrinsics): a value opening with '{' is YAML's inline map.
  enum class OverrideText { Yaml, String, StringOrMap };
  OverrideText override_text = OverrideText::Yaml;
  // A value: read it from YAML into its field, write it, copy it from another Config, and tell
  // whether an address (and type) is its field (Config::set).
  std::function<void(const YamlReader&, const std::string& key, const YAML::Node&, Config&)> read;
  std::function<void(Writer&, const Config&)> write;
  std::function<void(Config& to, const Config& from)> copy;
  std::function<bool(const Config&, const void*, std::type_index)> holds;
  std::shared_ptr<Section> section;
  // Filled when the table is built (keys.cpp): the dotted name and the set-by-user bit.
  std::string dotted;
  int bit = -1;

  // Modifiers of a row: keys outside the settings hash (not output-shaping), keys that apply to some
  // layouts only (a "has no effect" warning for the others).
  Key not_hashed() && {
    hashed = false;
    return std::move(*this);
  }
  // A key outside the hash that is not in its text either (in_hash_text).
  Key not_in_hash_text() && {
    hashed = false;
    in_hash_text = false;
    return std::move(*this);
  }
  // A key (or section) in the hash and its text only where `when` holds (in_hash_text_if).
  Key in_hash_text_only_if(bool (*when)(const Config&)) && {
    in_hash_text_if = when;
    return std::move(*this);
  }
  Key only(std::initializer_list<InputLayout> ls) && {
    for (InputLayout l : ls) layouts |= 1u << static_cast<unsigned>(l);
    return std::move(*this);
  }
};

struct Section {
  std::vector<Key> keys;
  std::vector<std::string> names;  // the keys' names in order, for the "allowed keys" of messages
  // `name: ~`: nothing changes (a section left empty), or (null_resets) every key takes its default and
  // the map is written as ~ when written_as_null says so (registration.depth_distortion: no model).
  bool null_resets = false;
  bool (*written_as_null)(const Config&) = nullptr;

  const Key* find(std::string_view name) const {
    for (const Key& k : keys)
      if (k.name == name) return &k;
    return nullptr;
  }
};

// A row for a field of a section struct, read and written by `codec` (codecs.h):
//   key("scale", &DepthConfig::scale, DepthScale{}, "metres per raw unit (16-bit input) or a preset")
template <class S, class T, class Codec>
Key key(const char* name, T S::*field, Codec codec, const char* doc) {
  Key k;
  k.name = name;
  k.doc = doc;
  if constexpr (std::is_same_v<T, std::string> || std::is_same_v<T, std::filesystem::path>)
    k.override_text = Key::OverrideText::String;
  k.read = [field, codec](const YamlReader& r, const std::string& full, const YAML::Node& v, Config& c) {
    codec.read(r, full, v, part<S>(c).*field);
  };
  k.write = [field, codec](Writer& w, const Config& c) { codec.write(w, part<S>(c).*field); };
  k.copy = [field](Config& to, const Config& from) { part<S>(to).*field = part<S>(from).*field; };
  k.holds = [field](const Config& c, const void* p, std::type_index t) {
    return p == &(part<S>(c).*field) && t == std::type_index(typeid(T));
  };
  return k;
}

// A row holding a nested map of keys (live.mask, live.sync, registration.depth_distortion).
inline Key map_key(const char* name, std::vector<Key> keys, const char* doc, bool null_resets = false,
                   bool (*written_as_null)(const Config&) = nullptr) {
  auto s = std::make_shared<Section>();
  s->keys = std::move(keys);
  s->null_resets = null_resets;
  s->written_as_null = written_as_null;
  Key k;
  k.name = name;
  k.doc = doc;
  k.section = std::move(s);
  return k;
}

// The whole configuration: a Section of the sections, numbered (bits) and named (dotted) on first use.
const Section& config_table();
// Every key with a value, in table order (--print-config's order).
const std::vector<const Key*>& value_keys();
// The key with this dotted name, or nullptr.
const Key* find_value_key(std::string_view dotted);

// Sets a key's set-by-user bit (the YAML reader, for each key a file or override names).
struct SetByUser {
  static void mark(Config& c, const Key& k) { c.set_by_user_.set(static_cast<size_t>(k.bit)); }
};

}  // namespace depthmask::detail
