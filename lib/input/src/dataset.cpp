#include "depthmask/dataset.h"

#include <algorithm>
#include <regex>
#include <string>
#include <system_error>
#include <unordered_set>

#include "depthmask/detail/dataset_patterns.h"
#include "depthmask/errors.h"

namespace fs = std::filesystem;

namespace depthmask {

bool natural_less(const std::string& a, const std::string& b) {
  size_t i = 0, j = 0;
  while (i < a.size() && j < b.size()) {
    const bool da = a[i] >= '0' && a[i] <= '9', db = b[j] >= '0' && b[j] <= '9';
    if (da && db) {
      size_t ie = i, je = j;
      while (ie < a.size() && a[ie] >= '0' && a[ie] <= '9') ++ie;
      while (je < b.size() && b[je] >= '0' && b[je] <= '9') ++je;
      // Compare digit runs by value: skip leading zeros, then longer is larger, then lexically.
      size_t is = i, js = j;
      while (is + 1 < ie && a[is] == '0') ++is;
      while (js + 1 < je && b[js] == '0') ++js;
      if (ie - is != je - js) return ie - is < je - js;
      const int c = a.compare(is, ie - is, b, js, je - js);
      if (c != 0) return c < 0;
      if (ie - i != je - j) return ie - i < je - j;  // "01" after "1": fewer leading zeros first
      i = ie;
      j = je;
    } else {
      if (a[i] != b[j]) return static_cast<unsigned char>(a[i]) < static_cast<unsigned char>(b[j]);
      ++i;
      ++j;
    }
  }
  return a.size() - i < b.size() - j;
}

std::string substitute_id(const std::string& pattern, const std::string& id) {
  std::string s = pattern;
  const auto pos = s.find("{id}");
  if (pos != std::string::npos) s.replace(pos, 4, id);
  return s;
}

namespace {

std::string regex_escape(const std::string& s) {
  static const std::string special = R"(\^$.|?*+()[]{})";
  std::string out;
  for (char c : s) {
    if (special.find(c) != std::string::npos) out += '\\';
    out += c;
  }
  return out;
}

// A compiled `{id}` pattern: the fixed folder before the first component holding `{id}`, how many
// path components follow it, and a regex over the path relative to that folder.
struct CompiledPattern {
  fs::path base;     // relative to root
  size_t depth = 1;  // components after base
  std::regex re;
};

CompiledPattern compile(const std::string& pattern) {
  CompiledPattern c;
  const fs::path p(pattern);
  std::vector<std::string> parts;
  for (const auto& part : p) parts.push_back(part.string());
  size_t k = 0;
  while (k < parts.size() && parts[k].find("{id}") == std::string::npos) c.base /= parts[k++];
  std::string rel;
  for (size_t i = k; i < parts.size(); ++i) rel += (rel.empty() ? "" : "/") + parts[i];
  c.depth = parts.size() - k;
  const auto pos = rel.find("{id}");
  DM_EXPECT(pos != std::string::npos, InputError, "file pattern '" << pattern << "' has no '{id}'");
  c.re = std::regex(regex_escape(rel.substr(0, pos)) + "([^/]+)" + regex_escape(rel.substr(pos + 4)));
  return c;
}

// Files (regular, following links) under dir, at most `depth` components down, as paths relative to dir.
std::vector<std::string> files_under(const fs::path& dir, size_t depth) {
  std::vector<std::string> out;
  std::error_code ec;
  if (!fs::is_directory(dir, ec)) return out;
  fs::recursive_directory_iterator it(
      dir, fs::directory_options::follow_directory_symlink | fs::directory_options::skip_permission_denied, ec);
  for (; !ec && it != fs::recursive_directory_iterator(); it.increment(ec)) {
    if (static_cast<size_t>(it.depth()) + 1 >= depth) it.disable_recursion_pending();
    std::error_code e2;
    if (it->is_regular_file(e2) && static_cast<size_t>(it.depth()) + 1 == depth)
      out.push_back(it->path().lexically_relative(dir).generic_string());
  }
  return out;
}

}  // namespace

namespace detail {

std::vector<std::pair<std::string, fs::path>> pattern_matches(const fs::path& root, const std::string& pattern) {
  const CompiledPattern p = compile(pattern);
  const fs::path base = root / p.base;
  std::vector<std::pair<std::string, fs::path>> found;
  for (const auto& rel : files_under(base, p.depth)) {
    std::smatch m;
    if (std::regex_match(rel, m, p.re)) found.emplace_back(m[1].str(), (base / rel).lexically_normal());
  }
  return found;
}

}  // namespace detail

DatasetListing list_frames(const InputConfig& input, const std::function<bool(const fs::path&)>& is_layout_file) {
  std::error_code ec;
  DM_EXPECT(fs::is_directory(input.root, ec), InputError,
            "input folder '" << input.root.string() << "' does not exist or is not a folder (input.root)");

  std::vector<std::pair<std::string, fs::path>> found = detail::pattern_matches(input.root, input.depth);  // id, path
  DM_EXPECT(!found.empty(), InputError,
            "no input frames: no file under '" << input.root.string() << "' matches the depth pattern '" << input.depth
                                               << "' (input.depth)");
  std::sort(found.begin(), found.end(), [](const auto& a, const auto& b) { return natural_less(a.first, b.first); });

  DatasetListing out;
  // Every path below is lexically normal, so its string is the path: hashing strings keeps a listing
  // of 100,000 frames from spending seconds comparing fs::path component by component.
  std::unordered_set<std::string> used;
  used.reserve(found.size() * 3);
  for (size_t i = 0; i < found.size(); ++i) {
    FrameEntry f;
    f.index = i;
    f.id = found[i].first;
    f.depth = found[i].second;
    f.mask = (input.root / substitute_id(input.mask, f.id)).lexically_normal();
    f.relative = f.depth.lexically_relative(input.root.lexically_normal());  // output.layout: mirror
    if (!input.color.empty()) {
      const fs::path c = (input.root / substitute_id(input.color, f.id)).lexically_normal();
      if (fs::exists(c, ec)) f.color = c;
    }
    used.insert(f.depth.native());
    used.insert(f.mask.native());
    if (!f.color.empty()) used.insert(f.color.native());
    out.frames.push_back(std::move(f));
  }

  // Files in the folders the patterns read from, that no frame uses.
  std::unordered_set<std::string> scanned;
  for (const std::string* pat : {&input.depth, &input.mask, &input.color}) {
    if (pat->empty()) continue;
    const CompiledPattern cp = compile(*pat);
    const fs::path base = (input.root / cp.base).lexically_normal();
    for (const auto& rel : files_under(base, cp.depth)) {
      const fs::path p = (base / rel).lexically_normal();
      if (!scanned.insert(p.native()).second || used.count(p.native()) > 0) continue;
      // Files the run itself writes or reads as configuration are not strays.
      const std::string ext = p.extension().string();
      if (ext == ".yaml" || ext == ".yml") continue;
      if (is_layout_file && is_layout_file(p)) continue;
      ++out.unmatched_files;
      if (out.unmatched_examples.size() < 5) out.unmatched_examples.push_back(p);
    }
  }
  return out;
}

}  // namespace depthmask
