// Intrinsics as a YAML map {fx, fy, cx, cy[, width, height]}: the inline input.intrinsics of the
// configuration and the small intrinsics files (intrinsics.h) share this reader and writer
// (intrinsics.cpp).
#pragma once

#include <string>

#include "depthmask/detail/yaml_io.h"
#include "depthmask/intrinsics.h"

namespace depthmask::detail {

// Reads the map; ConfigError (through `r`) naming `prefix`.<key> for an unknown key, a value that is
// not a number, a missing fx/fy/cx/cy, or fx/fy that are not positive.
Intrinsics read_intrinsics_map(const YamlReader& r, const std::string& prefix, const YAML::Node& n);
// Writes the map (block style unless the emitter was given YAML::Flow); width/height only when known.
void emit_intrinsics_map(YAML::Emitter& e, const Intrinsics& k);

}  // namespace depthmask::detail
