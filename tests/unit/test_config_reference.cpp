// docs/CONFIGURATION.md cannot drift from the configuration table: every key the reader accepts
// (config_keys(), the rows of lib/src/config/keys.cpp) has one row there, with its default as
// to_yaml (--print-config) writes it for the built-in defaults, and the page has no row for a key the
// reader does not accept. Beside it, the relative links of README.md and docs/ lead to files and
// headings that exist, so moving a section between pages cannot leave a dead link behind.
#include <gtest/gtest.h>

#include <cctype>
#include <map>
#include <set>
#include <sstream>
#include <string>
#include <vector>

#include "depthmask/config.h"
#include "test_support.h"

namespace dm = depthmask;
namespace fs = std::filesystem;

namespace {

std::string read_text(const fs::path& p) {
  const std::vector<uint8_t> bytes = dmtest::read_bytes(p);
  EXPECT_FALSE(bytes.empty()) << "cannot read " << p;
  return {bytes.begin(), bytes.end()};
}

std::vector<std::string> lines_of(const std::string& text) {
  std::vector<std::string> out;
  std::istringstream is(text);
  for (std::string line; std::getline(is, line);) out.push_back(line);
  return out;
}

// Each key's default as --print-config shows it for the built-in defaults: the text after "key: " on
// its line of to_yaml, which writes maps in block style and every value (lists included) on one line.
// A key under a map written as `~` (registration.depth_distortion when there is no model) shows `~`:
// that is all the printout says of it.
std::map<std::string, std::string> printed_defaults() {
  std::map<std::string, std::string> printed;        // dotted name -> value text, for every line of to_yaml
  std::vector<std::pair<size_t, std::string>> open;  // the maps around the line: indent, dotted name
  for (const std::string& l : lines_of(dm::to_yaml(dm::Config{}))) {
    const size_t indent = l.find_first_not_of(' ');
    const size_t colon = l.find(':');
    if (indent == std::string::npos || colon == std::string::npos) continue;
    while (!open.empty() && open.back().first >= indent) open.pop_back();
    const std::string name = l.substr(indent, colon - indent);
    const std::string dotted = open.empty() ? name : open.back().second + "." + name;
    if (colon + 1 == l.size())
      open.emplace_back(indent, dotted);
    else
      printed[dotted] = l.substr(colon + 2);
  }
  std::map<std::string, std::string> out;
  for (const dm::ConfigKeyInfo& k : dm::config_keys()) {
    std::string text;
    for (size_t dot = k.name.find('.'); text.empty(); dot = k.name.find('.', dot + 1)) {
      const auto it = printed.find(k.name.substr(0, dot));  // a map above the key, then the key itself
      if (it != printed.end() && (dot == std::string::npos || it->second == "~")) text = it->second;
      if (dot == std::string::npos) break;
    }
    EXPECT_FALSE(text.empty()) << "to_yaml of the defaults has no line for '" << k.name << "'";
    out[k.name] = text;
  }
  return out;
}

struct Row {
  std::string key, default_text;
  size_t line = 0;
};

// The rows of the page's key tables: `| `dotted.key` | `default` | meaning |`. Only rows whose first
// cell is one code span count; the meaning may hold anything.
std::vector<Row> reference_rows(const std::string& text) {
  std::vector<Row> rows;
  const std::vector<std::string> lines = lines_of(text);
  for (size_t i = 0; i < lines.size(); ++i) {
    const std::string& l = lines[i];
    if (l.rfind("| `", 0) != 0) continue;
    const size_t key_end = l.find('`', 3);
    const size_t default_start = l.find("| `", key_end);
    const size_t default_end = l.find("` |", default_start + 3);
    EXPECT_TRUE(key_end != std::string::npos && default_start == key_end + 2 && default_end != std::string::npos)
        << "docs/CONFIGURATION.md:" << i + 1 << ": a key row is | `key` | `default` | meaning |: " << l;
    if (key_end == std::string::npos || default_start != key_end + 2 || default_end == std::string::npos) continue;
    rows.push_back({l.substr(3, key_end - 3), l.substr(default_start + 3, default_end - default_start - 3), i + 1});
  }
  return rows;
}

// The pages are the checkout's: a GPU bundle (scripts/make-gpu-bundle.sh) carries the binaries,
// config/ and data/ only, so there these tests say so and skip.
#define DM_REQUIRE_CHECKOUT()                                                                               \
  do {                                                                                                      \
    if (!fs::exists(dmtest::source_dir() / "CMakeLists.txt") || !fs::exists(dmtest::source_dir() / "docs")) \
      GTEST_SKIP() << "no checkout at " << dmtest::source_dir()                                             \
                   << " (no CMakeLists.txt or docs/): the pages are not here";                              \
  } while (0)

TEST(ConfigReference, EveryKeyOnceWithItsPrintedDefaultAndNoOther) {
  DM_REQUIRE_CHECKOUT();
  const fs::path page = dmtest::source_dir() / "docs" / "CONFIGURATION.md";
  const std::map<std::string, std::string> defaults = printed_defaults();
  ASSERT_FALSE(defaults.empty());
  std::map<std::string, std::vector<Row>> seen;
  for (const Row& r : reference_rows(read_text(page))) seen[r.key].push_back(r);

  for (const auto& [key, printed] : defaults) {
    const auto it = seen.find(key);
    if (it == seen.end()) {
      ADD_FAILURE() << "docs/CONFIGURATION.md has no row for the key '" << key << "' (default `" << printed
                    << "`): add | `" << key << "` | `" << printed << "` | meaning |";
      continue;
    }
    EXPECT_EQ(it->second.size(), 1u) << "docs/CONFIGURATION.md has " << it->second.size() << " rows for '" << key
                                     << "' (lines " << it->second.front().line << ", " << it->second.back().line
                                     << "); one row per key";
    for (const Row& r : it->second)
      EXPECT_EQ(r.default_text, printed) << "docs/CONFIGURATION.md:" << r.line << ": the default of '" << key
                                         << "' is `" << r.default_text << "` on the page but --print-config prints `"
                                         << printed << "`";
  }
  for (const auto& [key, rows] : seen)
    EXPECT_TRUE(defaults.count(key)) << "docs/CONFIGURATION.md:" << rows.front().line << ": '" << key
                                     << "' is not a key the configuration reader accepts (lib/src/config/keys.cpp)";
}

// The reference's check sees a wrong row: the parser must not skip what it cannot read.
TEST(ConfigReference, RowsAreReadAsWritten) {
  const std::vector<Row> rows =
      reference_rows("text\n| key | default | meaning |\n| `depth.scale` | `0.001` | metres | or a preset |\n");
  ASSERT_EQ(rows.size(), 1u);
  EXPECT_EQ(rows[0].key, "depth.scale");
  EXPECT_EQ(rows[0].default_text, "0.001");
  EXPECT_EQ(rows[0].line, 3u);
}

// GitHub's anchor of a heading: lower case, spaces to '-', other punctuation (and anything beyond
// ASCII, such as an em dash) dropped; a repeated heading gets -1, -2, ...
std::set<std::string> anchors_of(const std::string& text) {
  std::set<std::string> out;
  std::map<std::string, int> count;
  bool fenced = false;
  for (const std::string& l : lines_of(text)) {
    if (l.rfind("```", 0) == 0) fenced = !fenced;
    if (fenced || l.empty() || l[0] != '#') continue;
    const size_t start = l.find_first_not_of('#');
    if (start == std::string::npos || l[start] != ' ') continue;
    std::string slug;
    for (char ch : l.substr(start + 1)) {
      const auto c = static_cast<unsigned char>(ch);
      if (c >= 0x80) continue;
      if (std::isalnum(c) || c == '-' || c == '_')
        slug += static_cast<char>(std::tolower(c));
      else if (c == ' ')
        slug += '-';
    }
    const int n = count[slug]++;
    out.insert(n == 0 ? slug : slug + "-" + std::to_string(n));
  }
  return out;
}

TEST(DocLinks, RelativeLinksLeadToFilesAndHeadings) {
  DM_REQUIRE_CHECKOUT();
  const fs::path repo = dmtest::source_dir();
  std::vector<fs::path> pages = {repo / "README.md"};
  for (const fs::path& dir : {repo / "docs", repo / "docs" / "reliability"})
    for (const auto& e : fs::directory_iterator(dir))
      if (e.path().extension() == ".md") pages.push_back(e.path());
  ASSERT_GT(pages.size(), 10u);
  size_t checked = 0;
  for (const fs::path& page : pages) {
    const std::string text = read_text(page);
    const std::vector<std::string> lines = lines_of(text);
    bool fenced = false;
    for (size_t i = 0; i < lines.size(); ++i) {
      const std::string& l = lines[i];
      if (l.rfind("```", 0) == 0) fenced = !fenced;
      if (fenced) continue;
      for (size_t at = l.find("]("); at != std::string::npos; at = l.find("](", at + 2)) {
        const size_t end = l.find(')', at + 2);
        if (end == std::string::npos) break;
        const std::string target = l.substr(at + 2, end - at - 2);
        if (target.empty() || target.find("://") != std::string::npos || target.rfind("mailto:", 0) == 0) continue;
        const size_t hash = target.find('#');
        const std::string file = target.substr(0, hash);
        const std::string anchor = hash == std::string::npos ? "" : target.substr(hash + 1);
        const fs::path to = file.empty() ? page : (page.parent_path() / file).lexically_normal();
        const std::string where = fs::relative(page, repo).string() + ":" + std::to_string(i + 1);
        ++checked;
        if (!fs::exists(to)) {
          ADD_FAILURE() << where << ": the link (" << target << ") leads to " << fs::relative(to, repo)
                        << ", which does not exist";
          continue;
        }
        if (!anchor.empty() && to.extension() == ".md") {
          EXPECT_TRUE(anchors_of(read_text(to)).count(anchor))
              << where << ": the link (" << target << ") names a heading '#" << anchor << "' that "
              << fs::relative(to, repo) << " does not have";
        }
      }
    }
  }
  EXPECT_GT(checked, 20u);
}

TEST(DocLinks, AnchorsAreGitHubs) {
  const std::set<std::string> a = anchors_of(
      "# depthmask\n## Batch beside a Python process pool (whole processes)\n```\n# not a heading\n```\n"
      "## Live mode: `depthmask live`\n## Notes — two\n## Notes — two\n");
  EXPECT_EQ(a, (std::set<std::string>{"depthmask", "batch-beside-a-python-process-pool-whole-processes",
                                      "live-mode-depthmask-live", "notes--two", "notes--two-1"}));
}

}  // namespace
