#include "depthmask/intrinsics.h"

#include <fstream>
#include <sstream>
#include <vector>

#include "depthmask/config.h"
#include "depthmask/errors.h"

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
    std::istringstream ls(line);
    ls.imbue(std::locale::classic());
    std::string tok;
    while (ls >> tok) {
      std::istringstream ts(tok);
      ts.imbue(std::locale::classic());
      double x = 0;
      DM_EXPECT((ts >> x) && ts.eof(), InputError,
                "intrinsics file '" << file.string() << "' line " << lineno << ": '" << tok
                                    << "' is not a number; expected a 3x3 row-major K matrix");
      v.push_back(x);
    }
  }
  DM_EXPECT(v.size() == 9, InputError,
            "intrinsics file '" << file.string() << "': expected 9 numbers (a 3x3 row-major K matrix), found " << v.size());
  Intrinsics k;
  k.fx = v[0];
  k.cx = v[2];
  k.fy = v[4];
  k.cy = v[5];
  DM_EXPECT(k.fx > 0 && k.fy > 0 && v[1] == 0 && v[3] == 0 && v[6] == 0 && v[7] == 0 && v[8] == 1, InputError,
            "intrinsics file '" << file.string()
                                << "': not a pinhole K matrix [fx 0 cx; 0 fy cy; 0 0 1] with positive fx and fy");
  return k;
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
