#include "depthmask/detail/text_numbers.h"

#include <charconv>
#include <locale>
#include <sstream>

#include "depthmask/errors.h"

namespace depthmask::detail {

bool parse_number(const std::string& token, double& value) {
  std::istringstream ts(token);
  ts.imbue(std::locale::classic());
  double x = 0;
  if (!(ts >> x) || !ts.eof()) return false;
  value = x;
  return true;
}

std::vector<LineNumber> line_numbers(const std::string& line, const std::string& file, int lineno,
                                     const std::string& expected) {
  std::vector<LineNumber> out;
  std::istringstream ls(line);
  ls.imbue(std::locale::classic());
  std::string tok;
  while (ls >> tok) {
    double x = 0;
    DM_EXPECT(parse_number(tok, x), InputError,
              file << " line " << lineno << ": '" << tok << "' is not a number" << expected);
    out.push_back({tok, x});
  }
  return out;
}

std::optional<unsigned long long> parse_decimal(std::string_view s) {
  if (s.empty() || s.size() > 19) return std::nullopt;
  unsigned long long v = 0;
  const auto [end, ec] = std::from_chars(s.data(), s.data() + s.size(), v);
  if (ec != std::errc() || end != s.data() + s.size()) return std::nullopt;
  return v;
}

}  // namespace depthmask::detail
