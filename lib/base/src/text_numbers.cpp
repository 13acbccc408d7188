#include "depthmask/detail/text_numbers.h"

#include <fstream>
#include <locale>
#include <sstream>

#include "depthmask/errors.h"

namespace depthmask::detail {

std::string read_text_file(const std::filesystem::path& file, const std::string& what) {
  std::ifstream in(file, std::ios::binary);
  DM_EXPECT(in, InputError, "cannot read " << what << " '" << file.string() << "': no such file or not readable");
  std::string text;
  char chunk[1 << 16];
  while (in.read(chunk, sizeof chunk) || in.gcount() > 0) {
    text.append(chunk, static_cast<size_t>(in.gcount()));
    DM_EXPECT(text.size() <= kMaxTextFileBytes, InputError,
              what << " '" << file.string() << "' is larger than " << (kMaxTextFileBytes >> 20)
                   << " MiB; expected a small text file");
  }
  DM_EXPECT(in.eof(), InputError, "cannot read " << what << " '" << file.string() << "': read error");
  return text;
}

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

Intrinsics pinhole_from_k(const std::vector<double>& v, const std::string& file, const std::string& where) {
  const std::string at = where.empty() ? file : file + " " + where;
  DM_EXPECT(v.size() == 9, InputError,
            at << ": expected 9 numbers, found " << v.size()
               << " (expected a 3x3 matrix: the row-major K [fx 0 cx; 0 fy cy; 0 0 1])");
  DM_EXPECT(v[0] > 0 && v[4] > 0 && v[1] == 0 && v[3] == 0 && v[6] == 0 && v[7] == 0 && v[8] == 1, InputError,
            at << ": not a pinhole K matrix [fx 0 cx; 0 fy cy; 0 0 1] with positive fx and fy");
  Intrinsics k;
  k.fx = v[0];
  k.cx = v[2];
  k.fy = v[4];
  k.cy = v[5];
  return k;
}

}  // namespace depthmask::detail
