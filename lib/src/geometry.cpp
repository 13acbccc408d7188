#include "depthmask/geometry.h"

#include <fstream>
#include <sstream>
#include <string>

#include "depthmask/errors.h"

namespace depthmask {

namespace {

struct Block {
  std::string title;
  int first_line = 0;
  std::vector<double> values;
};

Intrinsics intrinsics_from(const Block& b, const std::filesystem::path& file) {
  DM_EXPECT(b.values.size() == 9, InputError,
            "'" << file.string() << "' line " << b.first_line << ": block '" << b.title << "' has " << b.values.size()
                << " numbers; expected a 3x3 matrix");
  const auto& v = b.values;
  DM_EXPECT(v[0] > 0 && v[4] > 0 && v[1] == 0 && v[3] == 0 && v[6] == 0 && v[7] == 0 && v[8] == 1, InputError,
            "'" << file.string() << "' line " << b.first_line << ": block '" << b.title
                << "' is not a pinhole K matrix [fx 0 cx; 0 fy cy; 0 0 1]");
  Intrinsics k;
  k.fx = v[0];
  k.cx = v[2];
  k.fy = v[4];
  k.cy = v[5];
  return k;
}

}  // namespace

CameraGeometry read_apc_cam_info(const std::filesystem::path& file) {
  std::ifstream in(file);
  DM_EXPECT(in, InputError, "cannot read camera file '" << file.string() << "': no such file or not readable");
  std::vector<Block> blocks;
  std::string line;
  int lineno = 0;
  while (std::getline(in, line)) {
    ++lineno;
    const auto first = line.find_first_not_of(" \t\r");
    if (first == std::string::npos) continue;
    if (line[first] == '#') {
      blocks.push_back(Block{line.substr(first + 1), lineno + 1, {}});
      continue;
    }
    DM_EXPECT(!blocks.empty(), InputError,
              "'" << file.string() << "' line " << lineno << ": numbers before any '#' block title");
    std::istringstream ls(line);
    ls.imbue(std::locale::classic());
    std::string tok;
    while (ls >> tok) {
      std::istringstream ts(tok);
      ts.imbue(std::locale::classic());
      double x = 0;
      DM_EXPECT((ts >> x) && ts.eof(), InputError,
                "'" << file.string() << "' line " << lineno << ": '" << tok << "' is not a number");
      blocks.back().values.push_back(x);
    }
  }
  auto find = [&](const char* key) -> const Block& {
    for (const Block& b : blocks)
      if (b.title.find(key) != std::string::npos && !b.values.empty()) return b;
    throw InputError("'" + file.string() + "': no '# ..." + key + "...' block");
  };
  CameraGeometry g;
  g.color = intrinsics_from(find("Color camera intrinsic"), file);
  g.depth = intrinsics_from(find("Depth camera intrinsic"), file);
  const Block& e = find("Depth-to-color");
  DM_EXPECT(e.values.size() == 16, InputError,
            "'" << file.string() << "' line " << e.first_line << ": the depth-to-color block has " << e.values.size()
                << " numbers; expected a 4x4 matrix");
  for (size_t i = 0; i < 16; ++i) g.depth_to_color[i] = e.values[i];
  return g;
}

}  // namespace depthmask
