// The doctor's proposal for a folder no layout knows (detail/doctor_propose.h): which groups are the
// depth, mask, colour and intrinsics, why, the `--set` lines and suggested keys that name them, and a
// second pass of the doctor over the proposed keys.
#include <algorithm>
#include <cctype>
#include <cstdio>
#include <set>

#include "depthmask/errors.h"
#include "doctor_propose.h"

namespace fs = std::filesystem;

namespace depthmask::detail {

namespace {

// Groups classified, at most this many of images and of text files: the largest groups first, so a
// folder of thousands of unrelated files decodes a few dozen of them, not all.
constexpr size_t kMaxClassified = 24;
// Groups of files the proposal does not use, listed one a line up to this many.
constexpr size_t kMaxUnusedLines = 8;

using Words = std::set<std::string>;

// The lower-case runs of letters of a pattern, its `{id}` aside: what tells `-transparent-` files
// from `-opaque-` ones.
Words words_of(const std::string& pattern) {
  Words w;
  std::string cur;
  const std::string& s = pattern;
  for (size_t i = 0; i <= s.size(); ++i) {
    if (i < s.size() && s.compare(i, 4, "{id}") == 0) {
      i += 3;
      if (!cur.empty()) w.insert(cur), cur.clear();
      continue;
    }
    if (i < s.size() && std::isalpha(static_cast<unsigned char>(s[i]))) {
      cur += static_cast<char>(std::tolower(static_cast<unsigned char>(s[i])));
    } else if (!cur.empty()) {
      w.insert(cur);
      cur.clear();
    }
  }
  return w;
}

// The words of `g` that not every one of `peers` has (its variant words among them).
Words variant_words(const FileGroup& g, const std::vector<const FileGroup*>& peers) {
  Words common = words_of(g.pattern), out;
  for (const FileGroup* p : peers) {
    const Words w = words_of(p->pattern);
    Words keep;
    std::set_intersection(common.begin(), common.end(), w.begin(), w.end(), std::inserter(keep, keep.end()));
    common = std::move(keep);
  }
  const Words mine = words_of(g.pattern);
  std::set_difference(mine.begin(), mine.end(), common.begin(), common.end(), std::inserter(out, out.end()));
  return out;
}

// The first of `a` that `b` holds too, or "".
std::string shared_word(const Words& a, const Words& b) {
  for (const std::string& w : a)
    if (b.count(w)) return w;
  return {};
}

size_t shared_ids(const FileGroup& g, const std::set<std::string>& ids) {
  size_t n = 0;
  for (const auto& [id, file] : g.ids) n += ids.count(id);
  return n;
}

std::vector<const FileGroup*> of_kind(const std::vector<FileGroup>& groups, GroupKind kind) {
  std::vector<const FileGroup*> out;
  for (const FileGroup& g : groups)
    if (g.kind == kind && (kind == GroupKind::Intrinsics || g.pattern.find("{id}") != std::string::npos))
      out.push_back(&g);
  return out;
}

std::string percent(double share) {
  char buf[32];
  std::snprintf(buf, sizeof buf, "%.0f%%", share * 100.0);
  return buf;
}

std::string files_text(const FileGroup& g) {
  std::string s = std::to_string(g.ids.size()) + (g.ids.size() == 1 ? " file" : " files");
  if (g.ids.size() > 1) s += " (ids " + g.ids.front().first + " to " + g.ids.back().first + ")";
  return s;
}

std::string yaml_quoted(const std::string& s) {
  std::string q = "\"";
  for (char ch : s) {
    if (ch == '"' || ch == '\\') q += '\\';
    q += ch;
  }
  return q + "\"";
}

// A shell word: as is when it holds nothing a shell reads, else single-quoted.
std::string shell_word(const std::string& s) {
  const bool plain = std::all_of(s.begin(), s.end(), [](char ch) {
    return std::isalnum(static_cast<unsigned char>(ch)) || std::string("_./{}:=,+@%-").find(ch) != std::string::npos;
  });
  if (plain && !s.empty()) return s;
  std::string q = "'";
  for (char ch : s) q += ch == '\'' ? std::string("'\\''") : std::string(1, ch);
  return q + "'";
}

// What the proposal picked, and why.
struct Choice {
  const FileGroup* depth = nullptr;
  const FileGroup* mask = nullptr;
  const FileGroup* color = nullptr;
  const FileGroup* intrinsics = nullptr;
  std::vector<const FileGroup*> other_depths;  // the depth groups not taken, best first
  std::string why_depth;                       // empty with one depth group
};

// Depth: the group sharing a variant word with a colour group, then the one with more valid pixels,
// then the one with more files.
void choose_depth(const std::vector<FileGroup>& groups, Choice& c) {
  std::vector<const FileGroup*> depths = of_kind(groups, GroupKind::Depth);
  if (depths.empty()) return;
  const std::vector<const FileGroup*> colors = of_kind(groups, GroupKind::Color);
  struct Ranked {
    const FileGroup* g;
    std::string word, color;  // the variant word it shares with the colour group `color`
  };
  std::vector<Ranked> r;
  for (const FileGroup* d : depths) {
    Ranked x{d, {}, {}};
    const Words mine = variant_words(*d, depths);
    for (const FileGroup* col : colors)
      if (x.word.empty() && depths.size() > 1) {
        x.word = shared_word(mine, words_of(col->pattern));
        if (!x.word.empty()) x.color = col->pattern;
      }
    r.push_back(x);
  }
  std::stable_sort(r.begin(), r.end(), [](const Ranked& a, const Ranked& b) {
    if (a.word.empty() != b.word.empty()) return !a.word.empty();
    if (a.g->valid != b.g->valid) return a.g->valid > b.g->valid;
    return a.g->ids.size() > b.g->ids.size();
  });
  c.depth = r.front().g;
  for (size_t i = 1; i < r.size(); ++i) c.other_depths.push_back(r[i].g);
  if (r.size() < 2) return;
  const Ranked &best = r[0], &next = r[1];
  c.why_depth = "depth: " + best.g->pattern + " rather than " + next.g->pattern + ": ";
  if (!best.word.empty() && next.word.empty())
    c.why_depth += "it shares the word '" + best.word + "' with the colour files " + best.color;
  else if (best.g->valid != next.g->valid)
    c.why_depth += std::string(best.word.empty() ? "" : "both share a word with colour files; ") +
                   "it has more valid (finite, non-zero) pixels: " + percent(best.g->valid) + " against " +
                   percent(next.g->valid) + " in the sampled files";
  else
    c.why_depth += "it has as many valid pixels and at least as many files";
}

// The group of `candidates` that best goes with the depth: sharing its variant word, then sharing
// more of its ids, then (masks) fewer values.
const FileGroup* partner(const std::vector<const FileGroup*>& candidates, const FileGroup& depth) {
  std::set<std::string> ids;
  for (const auto& [id, file] : depth.ids) ids.insert(id);
  const Words depth_words = words_of(depth.pattern);
  const FileGroup* best = nullptr;
  bool best_word = false;
  size_t best_shared = 0;
  for (const FileGroup* g : candidates) {
    const size_t shared = shared_ids(*g, ids);
    if (shared == 0) continue;
    const bool word = candidates.size() > 1 && !shared_word(variant_words(*g, candidates), depth_words).empty();
    const bool better = !best || (word != best_word       ? word
                                  : shared != best_shared ? shared > best_shared
                                                          : g->values < best->values);
    if (better) best = g, best_word = word, best_shared = shared;
  }
  return best;
}

// Intrinsics: one file the run reads, sharing the depth's variant word, else named like intrinsics,
// else the first.
const FileGroup* choose_intrinsics(const std::vector<FileGroup>& groups, const FileGroup& depth) {
  const std::vector<const FileGroup*> ks = of_kind(groups, GroupKind::Intrinsics);
  const Words depth_words = words_of(depth.pattern);
  auto score = [&](const FileGroup* g) {
    const Words w = words_of(g->pattern);
    int s = 0;
    if (ks.size() > 1 && !shared_word(variant_words(*g, ks), depth_words).empty()) s += 4;
    for (const char* hint : {"intrinsics", "intrinsic", "camera", "cam", "calib", "k", "info"})
      if (w.count(hint)) {
        s += 2;
        break;
      }
    return s;
  };
  const FileGroup* best = nullptr;
  for (const FileGroup* g : ks)
    if (!best || score(g) > score(best)) best = g;
  return best;
}

void classify_some(std::vector<FileGroup>& groups, const Config& given) {
  size_t images = 0, texts = 0;
  for (FileGroup& g : groups) {
    const std::string ext = fs::path(g.pattern).extension().string();
    const bool text = ext == ".yaml" || ext == ".yml" || ext == ".txt";
    size_t& n = text ? texts : images;
    if (n >= kMaxClassified) continue;
    ++n;
    classify(g, given);
  }
}

// An intrinsics group's file (one of a group with ids: `run` takes one), relative to the root.
std::string intrinsics_name(const FileGroup& g, const fs::path& root) {
  return g.ids.front().second.lexically_relative(root).generic_string();
}

std::string group_line(const std::string& role, const FileGroup& g, const fs::path& root) {
  std::string s = role + std::string(12 - std::min<size_t>(11, role.size()), ' ');
  s += g.kind == GroupKind::Intrinsics ? intrinsics_name(g, root) : g.pattern;
  s += ": " + files_text(g) + ", " + (g.what.empty() ? std::string("not read") : g.what);
  if (g.kind == GroupKind::Depth) s += ", " + percent(g.valid) + " valid";
  return s;
}

// The keys, the lines that explain them and the level of the `patterns` check.
struct Proposal {
  std::vector<std::pair<std::string, std::string>> keys;  // dotted key, value as written on the command line
  std::string detail, hint;
  DoctorLevel level = DoctorLevel::Info;
};

void no_mask(const Choice& c, Proposal& p) {
  p.level = DoctorLevel::Warning;
  p.detail +=
      "no mask group: no files hold a mask (one channel of 8 or 16 bits with at most 64 values, or an indexed "
      "PNG); `run` reads one mask per frame (input.mask)\n";
  if (c.depth->sixteen) {
    p.detail +=
        "without masks: the proposal names the 16-bit depth files as their own mask (input.mask = input.depth): "
        "mask.threshold 0 keeps every pixel with a depth, so depth.min and depth.max (metres) alone decide "
        "(a depth range only)\n";
  } else {
    p.detail +=
        "without masks there is no mask option for this folder: its depth is float and a mask is 8- or 16-bit, "
        "so the depth files cannot be their own mask\n";
  }
  p.detail += "with masks (a segmentation network's, one file per frame, nonzero = keep): set input.mask to them\n";
}

Proposal propose(const Config& given, const std::vector<FileGroup>& groups, const Choice& c) {
  Proposal p;
  const fs::path& root = given.input.root;
  p.keys.emplace_back("input.depth", c.depth->pattern);
  p.detail += group_line("depth", *c.depth, root) + "\n";
  if (c.mask) {
    p.keys.emplace_back("input.mask", c.mask->pattern);
    p.detail += group_line("mask", *c.mask, root) + "\n";
  } else if (c.depth->sixteen) {
    p.keys.emplace_back("input.mask", c.depth->pattern);  // a depth range only (no_mask says so)
  }
  if (c.color) {
    p.keys.emplace_back("input.color", c.color->pattern);
    p.detail += group_line("color", *c.color, root) + "\n";
  } else {
    p.keys.emplace_back("input.color", "null");
  }
  if (c.intrinsics) {
    p.keys.emplace_back("input.intrinsics", (root / intrinsics_name(*c.intrinsics, root)).generic_string());
    p.detail += group_line("intrinsics", *c.intrinsics, root) + "\n";
    if (c.intrinsics->ids.size() > 1)
      p.detail += "intrinsics: the first of " + std::to_string(c.intrinsics->ids.size()) +
                  " files; `run` takes one input.intrinsics for every frame\n";
  }
  if (!c.why_depth.empty()) p.detail += c.why_depth + "\n";
  if (!c.mask) no_mask(c, p);
  size_t unused = 0;
  for (const FileGroup& g : groups) {
    if (&g == c.depth || &g == c.mask || &g == c.color || &g == c.intrinsics) continue;
    if (++unused <= kMaxUnusedLines)
      p.detail +=
          group_line(g.kind == GroupKind::Other ? "not used" : std::string("also ") + to_string(g.kind), g, root) +
          "\n";
  }
  if (unused > kMaxUnusedLines)
    p.detail += "and " + std::to_string(unused - kMaxUnusedLines) + " more groups of files not used\n";
  p.detail += "run it:\n  depthmask run --input " + shell_word(root.generic_string()) + " --output OUT";
  for (const auto& [k, v] : p.keys) {
    p.detail += " \\\n      --set ";
    std::string set = k;
    set += '=';
    set += v;
    p.detail += shell_word(set);
  }
  // Another depth, with the colour that goes with it when that is another one.
  for (const FileGroup* d : c.other_depths) {
    p.detail += "\nor the other depth:\n      --set " + shell_word("input.depth=" + d->pattern);
    const FileGroup* color = partner(of_kind(groups, GroupKind::Color), *d);
    if (color && color != c.color) p.detail += " --set " + shell_word("input.color=" + color->pattern);
  }
  p.hint = "--write-config FILE saves these keys; then `depthmask run --config FILE --output OUT`";
  return p;
}

void suggest(DoctorReport& r, const std::string& key, const std::string& value) {
  for (auto& kv : r.suggested)
    if (kv.first == key) {
      kv.second = value;
      return;
    }
  r.suggested.emplace_back(key, value);
}

// The doctor again over the proposed keys: its findings as one `proposal` check, its fixes as
// suggestions.
void second_pass(const Config& given, const DoctorOptions& options, const Proposal& p, DoctorReport& report) {
  std::vector<Override> ov{{"input.layout", "pattern", "doctor"}};
  for (const auto& [k, v] : p.keys) ov.push_back({k, v, "doctor", v != "null"});
  DoctorReport again;
  try {
    Config c = given;
    apply_overrides(c, ov, given.input.root);
    DoctorOptions o = options;
    o.propose = false;
    again = diagnose(c, o);
  } catch (const Error& e) {
    report.checks.push_back({"proposal", DoctorLevel::Error, "the proposed keys do not load", e.what(), {}});
    return;
  }
  std::string detail;
  size_t findings = 0;
  for (const DoctorCheck& ch : again.checks) {
    if (ch.level < DoctorLevel::Warning) continue;
    ++findings;
    detail += std::string(ch.level == DoctorLevel::Error ? "error: " : "warning: ") + ch.title +
              (ch.hint.empty() ? "" : " (" + ch.hint + ")") + "\n";
  }
  if (!detail.empty()) detail.pop_back();
  const std::string title = "with the proposed keys: " + std::to_string(again.frames) + " frames listed, " +
                            std::to_string(again.decoded) + " decoded and masked" +
                            (findings ? "; " + std::to_string(findings) + " finding(s)" : "; every check passes");
  report.checks.push_back({"proposal", findings ? again.worst() : DoctorLevel::Ok, title, detail, {}});
  for (const auto& [k, v] : again.suggested)
    if (k != "input.root" && k != "input.layout") suggest(report, k, v);
}

}  // namespace

void propose_patterns(const Config& given, const DoctorOptions& options, DoctorReport& report) {
  const fs::path& root = given.input.root;
  std::vector<FileGroup> groups = group_names(list_names(root), root);
  classify_some(groups, given);
  Choice c;
  choose_depth(groups, c);
  if (!c.depth) {
    std::string detail;
    for (const FileGroup& g : groups)
      detail += (detail.empty() ? "" : "\n") + g.pattern + ": " + files_text(g) + ", " +
                (g.what.empty() ? std::string("not read") : g.what);
    report.checks.push_back({"patterns", DoctorLevel::Warning,
                             "no patterns to propose: no files hold depth (one channel of 16 bits or float, or "
                             "three equal ones)",
                             detail, "name the depth files in input.depth (DATASETS.md: Patterns)"});
    return;
  }
  c.mask = partner(of_kind(groups, GroupKind::Mask), *c.depth);
  c.color = partner(of_kind(groups, GroupKind::Color), *c.depth);
  c.intrinsics = choose_intrinsics(groups, *c.depth);
  const Proposal p = propose(given, groups, c);
  std::string title = "patterns proposed for this folder: depth";
  title += c.mask ? ", mask" : "";
  title += c.color ? ", color" : "";
  title += c.intrinsics ? ", intrinsics" : "";
  title += " (" + std::to_string(c.depth->ids.size()) + " frames)";
  report.checks.push_back({"patterns", p.level, title, p.detail, p.hint});
  std::error_code ec;
  const fs::path abs = fs::weakly_canonical(fs::absolute(root, ec), ec);
  suggest(report, "input.root", yaml_quoted((ec ? root : abs).generic_string()));
  suggest(report, "input.layout", "pattern");
  for (const auto& [k, v] : p.keys) suggest(report, k, v == "null" ? "~" : yaml_quoted(v));
  second_pass(given, options, p, report);
}

}  // namespace depthmask::detail
