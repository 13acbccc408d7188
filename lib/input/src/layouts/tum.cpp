// TUM RGB-D sequences (TUM's "File Formats" page): rgb.txt and depth.txt list "timestamp filename"
// lines ('#' comment lines at the top), filenames relative to the sequence folder; depth is 16-bit
// with a factor of 5000 (metres = raw / 5000).
//
// Frames: each depth image is associated with an rgb image as TUM's associate.py does: among all
// (depth, rgb) pairs whose timestamps differ by at most input.max_time_diff, the closest pairs are
// taken first and each image is used once. Depth images left without an rgb image are dropped and
// counted as unmatched files (so are unused rgb images).
//
// Masks, in this order:
//   - an explicit input.mask pattern, with {id} = the frame id (the depth file's stem);
//   - mask.txt in the sequence folder ("timestamp filename" like rgb.txt): associated with the
//     frame's rgb timestamp (a segmentation of the color image carries its timestamp) by the same
//     rule; frames left without a mask are dropped and counted as unmatched;
//   - otherwise mask/ named like the rgb file: rgb/1305031102.175304.png -> mask/1305031102.175304.png
//     (a missing file fails that frame when it is loaded).
#include <algorithm>
#include <cmath>
#include <fstream>
#include <set>
#include <sstream>
#include <system_error>

#include "depthmask/detail/layout_readers.h"
#include "depthmask/detail/read_file.h"
#include "depthmask/detail/text_numbers.h"
#include "depthmask/errors.h"

namespace fs = std::filesystem;

namespace depthmask::detail {

std::vector<TumEntry> parse_tum_list(const std::string& text, const fs::path& file, bool allow_outside_root) {
  std::istringstream in(text);
  std::vector<TumEntry> out;
  std::string line;
  int lineno = 0;
  while (std::getline(in, line)) {
    ++lineno;
    if (!line.empty() && line.back() == '\r') line.pop_back();
    const auto first = line.find_first_not_of(" \t");
    if (first == std::string::npos || line[first] == '#') continue;
    std::istringstream ls(line);
    ls.imbue(std::locale::classic());
    std::string ts, name, extra;
    ls >> ts >> name;
    DM_EXPECT(
        !name.empty() && !(ls >> extra), InputError,
        "TUM list '" << file.string() << "' line " << lineno << ": '" << line << "'; expected 'timestamp filename'");
    double t = 0;
    DM_EXPECT(detail::parse_number(ts, t) && std::isfinite(t) && t >= 0, InputError,
              "TUM list '" << file.string() << "' line " << lineno << ": timestamp '" << ts
                           << "' is not a number; expected seconds such as 1305031102.175304");
    if (!out.empty())
      DM_EXPECT(t > out.back().t, InputError,
                "TUM list '" << file.string() << "' line " << lineno << ": timestamp " << ts
                             << " is not after the one on line " << out.back().line
                             << "; expected increasing timestamps");
    if (!allow_outside_root) check_inside_root(name, "TUM list '" + file.string() + "' line " + std::to_string(lineno));
    out.push_back({t, name, lineno});
  }
  DM_EXPECT(!out.empty(), InputError, "TUM list '" << file.string() << "' lists no images");
  return out;
}

std::vector<TumEntry> read_tum_list(const fs::path& file, bool allow_outside_root) {
  return parse_tum_list(detail::read_file_bounded(file, detail::kMaxTextFileBytes, "TUM list"), file,
                        allow_outside_root);
}

void set_tum_color_and_mask(FrameEntry& f, const Config& c, const fs::path& root, const TumEntry& rgb,
                            const TumEntry* listed_mask) {
  std::error_code ec;
  const fs::path color = (root / rgb.file).lexically_normal();
  if (fs::exists(color, ec)) f.color = color;
  if (c.is_set_by_user("input.mask"))
    f.mask = (root / substitute_id(c.input.mask, f.id)).lexically_normal();
  else if (listed_mask)
    f.mask = (root / listed_mask->file).lexically_normal();
  else
    f.mask = (root / "mask" / fs::path(rgb.file).filename()).lexically_normal();
}

std::vector<size_t> associate(const std::vector<double>& a, const std::vector<double>& b, double max_diff) {
  struct Pair {
    double diff;
    size_t i, j;
  };
  std::vector<Pair> pairs;
  for (size_t i = 0; i < a.size(); ++i) {
    auto j = static_cast<size_t>(std::lower_bound(b.begin(), b.end(), a[i] - max_diff) - b.begin());
    for (; j < b.size() && b[j] <= a[i] + max_diff; ++j) {
      const double d = std::fabs(a[i] - b[j]);
      if (d <= max_diff) pairs.push_back({d, i, j});
    }
  }
  std::sort(pairs.begin(), pairs.end(), [](const Pair& x, const Pair& y) {
    return x.diff != y.diff ? x.diff < y.diff : x.i != y.i ? x.i < y.i : x.j < y.j;
  });
  std::vector<size_t> match(a.size(), static_cast<size_t>(-1));
  std::vector<bool> b_used(b.size(), false);
  for (const Pair& p : pairs)
    if (match[p.i] == static_cast<size_t>(-1) && !b_used[p.j]) match[p.i] = p.j, b_used[p.j] = true;
  return match;
}

namespace {

std::vector<double> times(const std::vector<TumEntry>& v) {
  std::vector<double> t;
  t.reserve(v.size());
  for (const auto& e : v) t.push_back(e.t);
  return t;
}

}  // namespace

void resolve_tum(ResolvedInput& r) {
  constexpr size_t kNone = static_cast<size_t>(-1);
  Config& e = r.config;
  const fs::path root = e.input.root.lexically_normal();
  refuse_pattern_key(r, "input.depth", "depth.txt");
  refuse_pattern_key(r, "input.color", "rgb.txt");
  std::error_code ec;
  for (const char* f : {"depth.txt", "rgb.txt"})
    DM_EXPECT(fs::is_regular_file(root / f, ec), InputError,
              layout_label(r) << ": no " << f << " in '" << root.string()
                              << "' (a TUM RGB-D sequence has rgb.txt and depth.txt)");
  layout_default(r, "depth.scale", e.depth.scale, 1.0 / 5000.0);

  const std::vector<TumEntry> depth = read_tum_list(root / "depth.txt", e.input.allow_paths_outside_root);
  const std::vector<TumEntry> rgb = read_tum_list(root / "rgb.txt", e.input.allow_paths_outside_root);
  const double max_diff = e.input.max_time_diff;
  const std::vector<size_t> to_rgb = associate(times(depth), times(rgb), max_diff);

  // Frames: depth images that found an rgb image.
  std::vector<size_t> frame_depth;
  std::vector<bool> rgb_used(rgb.size(), false);
  for (size_t i = 0; i < depth.size(); ++i) {
    if (to_rgb[i] == kNone) {
      add_unmatched(r.listing, root / depth[i].file);
      continue;
    }
    frame_depth.push_back(i);
    rgb_used[to_rgb[i]] = true;
  }

  const bool mask_pattern = e.is_set_by_user("input.mask");
  const fs::path mask_list = root / "mask.txt";
  const bool use_mask_list = !mask_pattern && fs::is_regular_file(mask_list, ec);
  std::vector<TumEntry> masks;
  std::vector<size_t> to_mask;
  if (use_mask_list) {
    masks = read_tum_list(mask_list, e.input.allow_paths_outside_root);
    std::vector<double> frame_rgb_t;
    frame_rgb_t.reserve(frame_depth.size());
    for (size_t i : frame_depth) frame_rgb_t.push_back(rgb[to_rgb[i]].t);
    to_mask = associate(frame_rgb_t, times(masks), max_diff);
    std::vector<bool> mask_used(masks.size(), false);
    for (size_t m : to_mask)
      if (m != kNone) mask_used[m] = true;
    for (size_t j = 0; j < masks.size(); ++j)
      if (!mask_used[j]) add_unmatched(r.listing, root / masks[j].file);
  }

  std::set<std::string> ids;
  for (size_t k = 0; k < frame_depth.size(); ++k) {
    const TumEntry& d = depth[frame_depth[k]];
    const TumEntry& c = rgb[to_rgb[frame_depth[k]]];
    if (use_mask_list && to_mask[k] == kNone) {
      add_unmatched(r.listing, root / d.file);
      add_unmatched(r.listing, root / c.file);
      continue;
    }
    FrameEntry f;
    f.id = fs::path(d.file).stem().string();
    DM_EXPECT(ids.insert(f.id).second, InputError,
              "TUM list '" << (root / "depth.txt").string() << "' line " << d.line << ": a second depth image named '"
                           << f.id << "'; expected unique file names (they name the outputs)");
    f.depth = (root / d.file).lexically_normal();
    set_tum_color_and_mask(f, e, root, c, use_mask_list ? &masks[to_mask[k]] : nullptr);
    f.timestamp = d.t;
    r.listing.frames.push_back(std::move(f));
  }
  for (size_t j = 0; j < rgb.size(); ++j)
    if (!rgb_used[j]) add_unmatched(r.listing, root / rgb[j].file);

  DM_EXPECT(!r.listing.frames.empty(), InputError,
            "no input frames: no depth image of '" << (root / "depth.txt").string() << "' has an rgb image"
                                                   << (use_mask_list ? " and a mask" : "")
                                                   << " within input.max_time_diff (" << max_diff << " s)");
}

}  // namespace depthmask::detail
