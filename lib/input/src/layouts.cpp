// Layout detection, resolve_input and the helpers the layouts share. Each layout has its file in
// layouts/: apc, 7scenes and ycbineoat are `{id}` patterns plus a camera file (they set the patterns
// and the layout's depth settings on the keys the user did not set, then list frames as the pattern
// layout does); bop and tum read index files.
#include "depthmask/layouts.h"
#include "depthmask/detail/log.h"

#include "depthmask/bag.h"

#include <algorithm>
#include <cstring>
#include <fstream>
#include <set>
#include <sstream>
#include <system_error>

#include "depthmask/detail/layout_readers.h"
#include "depthmask/detail/text_numbers.h"
#include "depthmask/errors.h"
#include "depthmask/intrinsics.h"

namespace fs = std::filesystem;

namespace depthmask {

namespace detail {

namespace {
// The pattern hint's trial resolution (pattern_hint) says nothing: its warnings were the real one's.
thread_local bool quiet = false;
}  // namespace

bool is_file(const fs::path& p) {
  std::error_code ec;
  return fs::is_regular_file(p, ec);
}
bool is_dir(const fs::path& p) {
  std::error_code ec;
  return fs::is_directory(p, ec);
}

bool is_frame_file(const std::string& name, const char* kind) {
  return starts_with(name, "frame-") && ends_with(name, std::string(".") + kind) &&
         name.size() > 6 + std::strlen(kind) + 1;
}

// Whether `dir` holds a frame-*.depth.png.
bool has_frame_depth(const fs::path& dir) {
  std::error_code ec;
  if (!is_dir(dir)) return false;
  for (fs::directory_iterator it(dir, ec), end; !ec && it != end; it.increment(ec))
    if (is_frame_file(it->path().filename().string(), "depth.png")) return true;
  return false;
}

// The folder (relative, "" or "rgbd-frames/") that holds a 7-Scenes / tsdf-fusion frame set, if any.
std::optional<std::string> seven_scenes_frames(const fs::path& root) {
  if (has_frame_depth(root)) return std::string();
  if (has_frame_depth(root / "rgbd-frames")) return std::string("rgbd-frames/");
  return std::nullopt;
}

// The dataset's own intrinsics file, unless the user gave input.intrinsics.
void use_intrinsics_file(ResolvedInput& r, const fs::path& file, const char* what) {
  Config& e = r.config;
  if (e.is_set_by_user("input.intrinsics")) {
    if (is_file(file)) warn_override(r, "input.intrinsics", describe(e.input.intrinsics), "the K of " + file.string());
    return;
  }
  if (!is_file(file)) {
    if (!quiet)
      detail::log().warn("{}: no {} in '{}', so the frames have no intrinsics (set input.intrinsics to give them)",
                         layout_label(r), what, e.input.root.string());
    return;
  }
  e.input.intrinsics = read_intrinsics_k_text(file);
  e.input.intrinsics_file = file;
}

std::string layout_label(const ResolvedInput& r) {
  return "input.layout '" + std::string(to_string(r.layout)) + "' (" + r.reason + ")";
}

std::string describe(double v) {
  std::ostringstream os;
  os.imbue(std::locale::classic());
  os.precision(10);
  os << v;
  return os.str();
}
std::string describe(const std::string& s) { return "'" + s + "'"; }
std::string describe(DepthEncoding e) { return std::string(to_string(e)); }
std::string describe(const std::vector<uint32_t>& v) {
  std::string s = "[";
  for (size_t i = 0; i < v.size(); ++i) s += (i ? ", " : "") + std::to_string(v[i]);
  return s + "]";
}
std::string describe(const std::optional<double>& v) { return v ? describe(*v) : "none"; }
std::string describe(const std::optional<Intrinsics>& k) {
  if (!k) return "none";
  return "fx " + describe(k->fx) + ", fy " + describe(k->fy) + ", cx " + describe(k->cx) + ", cy " + describe(k->cy);
}

void warn_override(const ResolvedInput& r, const char* key, const std::string& set_value,
                   const std::string& layout_value) {
  if (quiet) return;
  detail::log().warn(
      "config key '{}' = {} from the configuration replaces {}, the default of {}; drop '{}' from the configuration "
      "(file or --set) to use the layout's",
      key, set_value, layout_value, layout_label(r), key);
}

void check_inside_root(const std::string& path, const std::string& where) {
  const fs::path p(path);
  DM_EXPECT(!p.is_absolute(), InputError,
            where << ": '" << path
                  << "' is an absolute path; expected a file inside the dataset folder (set "
                     "input.allow_paths_outside_root: true to read files outside it)");
  int depth = 0;
  for (const fs::path& part : p) {
    if (part == "..")
      --depth;
    else if (part != "." && !part.empty())
      ++depth;
    DM_EXPECT(depth >= 0, InputError,
              where << ": '" << path
                    << "' climbs out of the dataset folder with '..'; expected a file inside it (set "
                       "input.allow_paths_outside_root: true to read files outside it)");
  }
}

void refuse_pattern_key(const ResolvedInput& r, const char* key, const char* frames_from) {
  if (!r.config.is_set_by_user(key)) return;
  throw ConfigError(std::string("config key '") + key + "' does not apply to " + layout_label(r) +
                    ": its frames come from " + frames_from +
                    "; remove the key, or set input.layout: pattern to list frames by patterns");
}

}  // namespace detail

LayoutGuess detect_layout(const fs::path& root) {
  using namespace detail;
  if (bag::Reader::is_bag(root))
    return {InputLayout::Rosbag2, is_dir(root) ? "found metadata.yaml or .mcap/.db3 files: rosbag2 bag"
                                               : "an .mcap file: rosbag2 bag (MCAP storage)"};
  if (is_file(root / "scene_camera.json")) return {InputLayout::Bop, "found scene_camera.json: BOP scene layout"};
  if (is_file(root / "rgb.txt") && is_file(root / "depth.txt"))
    return {InputLayout::Tum, "found rgb.txt and depth.txt: TUM RGB-D layout"};
  if (is_file(root / "cam.info.txt") && has_frame_depth(root))
    return {InputLayout::Apc, "found cam.info.txt and frame-*.depth.png: APC layout"};
  if (is_file(root / "camera-intrinsics.txt")) {
    if (const auto dir = seven_scenes_frames(root))
      return {InputLayout::SevenScenes,
              "found camera-intrinsics.txt and " + *dir + "frame-*.depth.png: 7-Scenes / tsdf-fusion layout"};
  }
  if (is_file(root / "cam_K.txt") && is_dir(root / "rgb") && is_dir(root / "depth"))
    return {InputLayout::YcbInEOAT, "found cam_K.txt, rgb/ and depth/: YCBInEOAT / FoundationPose layout"};
  return {InputLayout::Pattern,
          "no dataset marker (metadata.yaml, scene_camera.json, rgb.txt + depth.txt, cam.info.txt, "
          "camera-intrinsics.txt, cam_K.txt): "
          "the input.depth / input.mask / input.color patterns"};
}

namespace {

// The pattern layout's camera file: the folder's own intrinsics.yaml (depthmask synth writes one, the
// committed sample has one), unless the configuration names input.intrinsics (~ included). So the
// intrinsics travel with the dataset: a configuration's --input on another folder never keeps them.
void use_folder_intrinsics(ResolvedInput& r) {
  Config& e = r.config;
  const fs::path file = e.input.root / "intrinsics.yaml";
  if (e.is_set_by_user("input.intrinsics") || !detail::is_file(file)) return;
  try {
    e.input.intrinsics = read_intrinsics_file(file);
  } catch (const Error& err) {
    throw InputError(std::string(err.what()) + "; " + detail::layout_label(r) +
                     " reads the folder's intrinsics.yaml as its camera: fix it, name another file in "
                     "input.intrinsics, or set input.intrinsics: ~ to read none");
  }
  e.input.intrinsics_file = file;
  if (!detail::quiet)
    detail::log().info("input.intrinsics: {} (the input folder's own; {})", file.string(),
                       detail::describe(e.input.intrinsics));
}

// The pattern keys a configuration names for a folder whose detected layout has patterns of its own.
const char* const kPatternKeys[] = {"input.depth", "input.mask", "input.color"};

// When resolving `r` failed: whether the layout's own patterns would have found frames where the
// configuration's did not (a platform file's input.depth: depth/{id}.png on an APC scene). The hint
// names the keys to drop; "" when there is nothing to say.
std::string pattern_hint(const Config& c, const ResolvedInput& r) {
  if (r.layout == InputLayout::Pattern || detail::quiet) return "";
  Config trial = c;
  std::vector<std::string> dropped;
  for (const char* k : kPatternKeys)
    if (c.is_set_by_user(k)) {
      trial.reset_to_default(k);
      dropped.push_back(k);
    }
  if (dropped.empty()) return "";
  struct Quiet {
    Quiet() { detail::quiet = true; }
    ~Quiet() { detail::quiet = false; }
    Quiet(const Quiet&) = delete;
    Quiet& operator=(const Quiet&) = delete;
  } quiet_trial;
  ResolvedInput t;
  try {
    t = resolve_input(trial);
  } catch (const Error&) {
    return "";
  }
  std::string keys;
  for (size_t i = 0; i < dropped.size(); ++i)
    keys += (i == 0 ? "" : i + 1 == dropped.size() ? " and " : ", ") + dropped[i];
  return detail::layout_label(r) + " finds " + std::to_string(t.listing.frames.size()) +
         " frame(s) with its own patterns (input.depth '" + t.config.input.depth + "'): drop " + keys +
         " from the configuration (file or --set) to use them";
}

// The frames of `r`'s layout: patterns (with the folder's own intrinsics.yaml), a camera file's
// layout or an index file's.
void resolve_layout(ResolvedInput& r) {
  switch (r.layout) {
    case InputLayout::Auto:  // resolved above
    case InputLayout::Pattern:
      use_folder_intrinsics(r);
      r.listing = list_frames(r.config.input);
      break;
    case InputLayout::Apc:
      detail::resolve_apc(r);
      break;
    case InputLayout::SevenScenes:
      detail::resolve_seven_scenes(r);
      break;
    case InputLayout::YcbInEOAT:
      detail::resolve_ycbineoat(r);
      break;
    case InputLayout::Bop:
      detail::resolve_bop(r);
      break;
    case InputLayout::Tum:
      detail::resolve_tum(r);
      break;
    case InputLayout::Rosbag2:
      detail::resolve_rosbag2(r);
      break;
  }
}

}  // namespace

ResolvedInput resolve_input(const Config& c) {
  ResolvedInput r;
  r.config = c;
  const fs::path root = c.input.root;
  // A folder, or a bag that is one file (a lone .mcap).
  DM_EXPECT(
      detail::is_dir(root) || (detail::is_file(root) && bag::Reader::is_bag(root)), InputError,
      "input folder '" << root.string() << "' does not exist or is not a folder, nor an .mcap bag file (input.root)");
  if (c.input.layout == InputLayout::Auto) {
    LayoutGuess g = detect_layout(root);
    r.layout = g.layout;
    r.reason = std::move(g.reason);
  } else {
    r.layout = c.input.layout;
    r.reason = "set by input.layout";
  }
  r.config.input.layout = r.layout;

  if (!c.input.object.empty() && r.layout != InputLayout::Apc)
    throw ConfigError("config key 'input.object' applies to input.layout 'apc' only, not to " +
                      detail::layout_label(r));
  // Keys the configuration tables give to some layouts only (input.bop_masks, input.max_time_diff ...).
  for (const ConfigKeyInfo& k : config_keys())
    if (!k.layouts.empty() && c.is_set_by_user(k.name) &&
        std::find(k.layouts.begin(), k.layouts.end(), r.layout) == k.layouts.end() && !detail::quiet)
      detail::log().warn("config key '{}' has no effect with {}", k.name, detail::layout_label(r));

  try {
    resolve_layout(r);
  } catch (const InputError& e) {
    const std::string hint = pattern_hint(c, r);
    if (hint.empty()) throw;
    throw InputError(std::string(e.what()) + "; " + hint);
  }
  // The depth camera's lens distortion (not in any camera file) joins the input's geometry; it only
  // means something for depth that is reprojected from the depth camera.
  const Distortion& distortion = r.config.registration.depth_distortion;
  if (distortion.model != DistortionModel::None) {
    DM_EXPECT(r.geometry.has_value(), ConfigError,
              "config key 'registration.depth_distortion' applies to depth reprojected from a depth camera (such "
              "as APC's raw/ with cam.info.txt), and "
                  << detail::layout_label(r) << " provides no camera geometry");
    r.geometry->depth_distortion = distortion;
    if (!r.depth_from_depth_camera && !detail::quiet)
      detail::log().warn(
          "config key 'registration.depth_distortion' has no effect: the depth ({}) is already on the color "
          "camera's grid, not in the depth camera's frame",
          r.config.input.depth);
  }
  const fs::path base = root.lexically_normal();
  for (size_t i = 0; i < r.listing.frames.size(); ++i) {
    FrameEntry& f = r.listing.frames[i];
    f.index = i;
    if (f.bag) continue;  // rosbag2: relative is the depth topic's folders and the id
    f.relative = f.depth.lexically_normal().lexically_relative(base);
    if (f.relative.empty()) f.relative = f.depth.filename();
  }
  return r;
}

std::optional<Intrinsics> frame_intrinsics(const Config& c, const FrameEntry& f) {
  return f.intrinsics ? f.intrinsics : c.input.intrinsics;
}

double frame_depth_scale(const Config& c, const FrameEntry& f) {
  return f.depth_scale ? *f.depth_scale : c.depth.scale;
}

}  // namespace depthmask
