// Numbers in small text files (camera files, K matrices, threshold files, TUM lists): tokens read in
// the C locale whatever the global locale is, and a 3x3 pinhole K turned into Intrinsics.
#pragma once

#include <string>
#include <vector>

#include "depthmask/intrinsics.h"

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

// The Intrinsics of a 3x3 row-major K [fx 0 cx; 0 fy cy; 0 0 1] with positive fx and fy. Anything
// else throws InputError "<file>[ <where>]: ..." naming the count found or the pinhole form: `file`
// names the file as the message shows it, `where` the place in it (e.g. "line 3: block 'K'") or "".
Intrinsics pinhole_from_k(const std::vector<double>& v9, const std::string& file, const std::string& where);

}  // namespace depthmask::detail
