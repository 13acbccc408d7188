#include "depthmask/intrinsics.h"

#include <fstream>
#include <sstream>
#include <vector>

#include "depthmask/config.h"
#include "depthmask/errors.h"
#include "detail/text_numbers.h"

namespace depthmask {

Intrinsics read_intrinsics_k_text(const std::filesystem::path& file) {
  std::ifstream in(file);
  DM_EXPECT(in, InputError, "cannot read intrinsics file '" << file.string() << "': no such file or not readable");
  std::vector<double> v;
  std::string line;
  int lineno = 0;
  while (std::getline(in, line)) {
    ++lineno;
    if (const auto hash = line.find('#'); hash != std::string::npos) line.resize(hash);
    for (char& ch : line)
      if (ch == ',' || ch == '[' || ch == ']' || ch == ';') ch = ' ';
    for (const detail::LineNumber& n : detail::line_numbers(line, "intrinsics file '" + file.string() + "'", lineno,
                                                            "; expected a 3x3 row-major K matrix"))
      v.push_back(n.value);
  }
  return detail::pinhole_from_k(v, "intrinsics file '" + file.string() + "'", "");
}

Intrinsics read_intrinsics_file(const std::filesystem::path& file) {
  const std::string ext = file.extension().string();
  if (ext == ".yaml" || ext == ".yml") {
    std::ifstream in(file, std::ios::binary);
    DM_EXPECT(in, InputError, "cannot read intrinsics file '" << file.string() << "': no such file or not readable");
    std::ostringstream ss;
    ss << in.rdbuf();
    return parse_intrinsics_yaml(ss.str(), file.string());
  }
  return read_intrinsics_k_text(file);
}

}  // namespace depthmask
