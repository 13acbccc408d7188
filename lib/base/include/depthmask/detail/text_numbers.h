// Numbers in small text files (camera files, K matrices, threshold files, TUM lists): tokens read in
// the C locale whatever the global locale is.
#pragma once

#include <cstddef>
#include <filesystem>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace depthmask::detail {

// Parses all of `token` as one number in the C locale; false when any of it is not part of a number.
bool parse_number(const std::string& token, double& value);

// One whitespace-separated number of a line, with the token it was read from (for messages).
struct LineNumber {
  std::string token;
  double value = 0;
};

// The numbers of one line. A token that is not a number throws InputError
// "<file> line <lineno>: '<token>' is not a number<expected>", where `file` names the file as the
// message shows it (e.g. "intrinsics file 'K.txt'") and `expected` is empty or "; expected ...".
std::vector<LineNumber> line_numbers(const std::string& line, const std::string& file, int lineno,
                                     const std::string& expected = "");

// A decimal number without sign, spaces or leading '+' (at most 19 digits); nullopt otherwise.
std::optional<unsigned long long> parse_decimal(std::string_view s);

}  // namespace depthmask::detail
