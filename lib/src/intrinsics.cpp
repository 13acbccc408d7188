#include "depthmask/intrinsics.h"

#include <fstream>
#include <sstream>
#include <vector>

#include "depthmask/config.h"
#include "depthmask/errors.h"
#include "detail/text_numbers.h"

namespace depthmask {

Intrinsics read_intrinsics_k_text(const std::filesystem::path& file) {
  return parse_intrinsics_k_text(detail::read_text_file(file, "intrinsics file"), file.string());
}

Intrinsics parse_intrinsics_k_text(const std::string& text, const std::string& name) {
  const std::string file = name;
  std::istringstream in(text);
  std::vector<double> v;
  std::string line;
  int lineno = 0;
  while (std::getline(in, line)) {
    ++lineno;
    if (const auto hash = line.find('#'); hash != std::string::npos) line.resize(hash);
    for (char& ch : line)
      if (ch == ',' || ch == '[' || ch == ']' || ch == ';') ch = ' ';
    for (const detail::LineNumber& n :
         detail::line_numbers(line, "intrinsics file '" + file + "'", lineno, "; expected a 3x3 row-major K matrix"))
      v.push_back(n.value);
  }
  return detail::pinhole_from_k(v, "intrinsics file '" + file + "'", "");
}

Intrinsics read_intrinsics_file(const std::filesystem::path& file) {
  const std::string ext = file.extension().string();
  if (ext == ".yaml" || ext == ".yml") {
    return parse_intrinsics_yaml(detail::read_text_file(file, "intrinsics file"), file.string());
  }
  return read_intrinsics_k_text(file);
}

}  // namespace depthmask
