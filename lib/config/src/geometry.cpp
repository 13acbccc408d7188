#include "depthmask/geometry.h"

#include <fstream>
#include <sstream>
#include <string>

#include "depthmask/detail/read_file.h"
#include "depthmask/detail/text_numbers.h"
#include "depthmask/errors.h"
#include "pinhole.h"

namespace depthmask {

namespace {

struct Block {
  std::string title;
  int first_line = 0;
  std::vector<double> values;
};

Intrinsics intrinsics_from(const Block& b, const std::filesystem::path& file) {
  return detail::pinhole_from_k(b.values, "'" + file.string() + "'",
                                "line " + std::to_string(b.first_line) + ": block '" + b.title + "'");
}

}  // namespace

CameraGeometry read_apc_cam_info(const std::filesystem::path& file) {
  return parse_apc_cam_info(detail::read_file_bounded(file, detail::kMaxTextFileBytes, "camera file"), file);
}

CameraGeometry parse_apc_cam_info(const std::string& text, const std::filesystem::path& file) {
  std::istringstream in(text);
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
    for (const detail::LineNumber& n : detail::line_numbers(line, "'" + file.string() + "'", lineno))
      blocks.back().values.push_back(n.value);
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
