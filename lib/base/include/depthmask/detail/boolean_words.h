// The booleans a person writes, read one way everywhere: the configuration's YAML values
// (YamlReader::boolean) and the live source URIs' options (loop, color). Defined in yaml_io.cpp.
#pragma once

#include <optional>
#include <string_view>

namespace depthmask::detail {

// true/yes/on → true, false/no/off → false, in any case; nullopt for anything else.
std::optional<bool> parse_boolean_word(std::string_view s);

// The words parse_boolean_word() accepts, for messages.
inline constexpr const char* kBooleanWords = "true/false, yes/no or on/off (any case)";

}  // namespace depthmask::detail
