// An enum as one array of rows, each with the value and its word ({value, name}, or a wider row with
// more columns): to_string, parsing and the "allowed values" of messages all read the array, so a new
// value is one row. The configuration's enums (lib/config/src/enum_names.h), the doctor's levels, the
// image roles, the facade's pixel and memory kinds use it.
#pragma once

#include <cstddef>
#include <optional>
#include <string>
#include <string_view>

namespace depthmask::detail {

template <class E>
struct EnumName {
  E value;
  std::string_view name;
};

// The word of `value` in `rows` (any row type with members `value` and `name`); `unknown` for a value
// no row has (one cast from a number).
template <class Row, size_t N>
constexpr std::string_view name_of(const Row (&rows)[N], decltype(Row::value) value, std::string_view unknown = "?") {
  for (const Row& r : rows)
    if (r.value == value) return r.name;
  return unknown;
}

// The value whose word is `word` (compared exactly); nullopt for a word no row has.
template <class Row, size_t N>
constexpr std::optional<decltype(Row::value)> value_of(const Row (&rows)[N], std::string_view word) {
  for (const Row& r : rows)
    if (r.name == word) return r.value;
  return std::nullopt;
}

// The row of `value` (for its other columns); nullptr for a value no row has.
template <class Row, size_t N>
constexpr const Row* row_of(const Row (&rows)[N], decltype(Row::value) value) {
  for (const Row& r : rows)
    if (r.value == value) return &r;
  return nullptr;
}

// "a, b, c": the words of an array of rows with a `name`.
template <class Row, size_t N>
std::string names_list(const Row (&rows)[N]) {
  std::string s;
  for (const Row& r : rows) s += (s.empty() ? "" : ", ") + std::string(r.name);
  return s;
}

}  // namespace depthmask::detail
