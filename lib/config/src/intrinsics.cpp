// Intrinsics files: a 3x3 K text file, or a small YAML file {fx, fy, cx, cy[, width, height]} whose
// map reader the configuration's inline input.intrinsics shares (detail/intrinsics_yaml.h).
#include "depthmask/intrinsics.h"

#include <sstream>
#include <vector>

#include "depthmask/detail/read_file.h"
#include "depthmask/detail/text_numbers.h"
#include "depthmask/detail/yaml_io.h"
#include "depthmask/errors.h"
#include "intrinsics_yaml.h"
#include "pinhole.h"

namespace depthmask {

namespace detail {

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

}  // namespace detail

Intrinsics read_intrinsics_k_text(const std::filesystem::path& file) {
  return parse_intrinsics_k_text(detail::read_file_bounded(file, detail::kMaxTextFileBytes, "intrinsics file"),
                                 file.string());
}

Intrinsics parse_intrinsics_k_text(const std::string& text, const std::string& name) {
  const std::string& file = name;
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
    return parse_intrinsics_yaml(detail::read_file_bounded(file, detail::kMaxTextFileBytes, "intrinsics file"),
                                 file.string());
  }
  return read_intrinsics_k_text(file);
}

std::string intrinsics_to_yaml(const Intrinsics& k) {
  YAML::Emitter e;
  detail::emit_intrinsics_map(e, k);
  return std::string(e.c_str()) + "\n";
}

Intrinsics parse_intrinsics_yaml(const std::string& text, const std::string& name) {
  YAML::Node root;
  try {
    root = YAML::Load(text);
  } catch (const YAML::ParserException& ex) {
    throw InputError("intrinsics file '" + name + "' line " + std::to_string(ex.mark.line + 1) +
                     ": YAML syntax error: " + ex.msg);
  }
  try {
    const detail::YamlOrigin o{name, {}, true};
    return detail::read_intrinsics_map(detail::YamlReader(o), "", root);
  } catch (const ConfigError& ex) {
    throw InputError("intrinsics file '" + name + "': " + ex.what());
  }
}

namespace detail {

Intrinsics read_intrinsics_map(const YamlReader& r, const std::string& prefix, const YAML::Node& n) {
  Intrinsics k;
  bool seen[4] = {false, false, false, false};
  r.each(prefix, n, {"fx", "fy", "cx", "cy", "width", "height"},
         [&](const std::string& sub, const std::string& full, const YAML::Node& v) {
           if (sub == "fx")
             k.fx = r.finite_number(full, v), seen[0] = true;
           else if (sub == "fy")
             k.fy = r.finite_number(full, v), seen[1] = true;
           else if (sub == "cx")
             k.cx = r.finite_number(full, v), seen[2] = true;
           else if (sub == "cy")
             k.cy = r.finite_number(full, v), seen[3] = true;
           else if (sub == "width")
             k.width = static_cast<int>(r.integer(full, v, 0, 1 << 20));
           else
             k.height = static_cast<int>(r.integer(full, v, 0, 1 << 20));
         });
  const char* names[] = {"fx", "fy", "cx", "cy"};
  for (int i = 0; i < 4; ++i)
    if (!seen[i]) r.fail(prefix, n, std::string("intrinsics need fx, fy, cx and cy; '") + names[i] + "' is missing");
  if (!(k.fx > 0) || !(k.fy > 0)) r.fail(prefix, n, "fx and fy must be positive");
  return k;
}

void emit_intrinsics_map(YAML::Emitter& e, const Intrinsics& k) {
  e << YAML::BeginMap;
  e << YAML::Key << "fx" << YAML::Value;
  emit_number(e, k.fx);
  e << YAML::Key << "fy" << YAML::Value;
  emit_number(e, k.fy);
  e << YAML::Key << "cx" << YAML::Value;
  emit_number(e, k.cx);
  e << YAML::Key << "cy" << YAML::Value;
  emit_number(e, k.cy);
  if (k.width > 0) e << YAML::Key << "width" << YAML::Value << k.width;
  if (k.height > 0) e << YAML::Key << "height" << YAML::Value << k.height;
  e << YAML::EndMap;
}

}  // namespace detail

}  // namespace depthmask
