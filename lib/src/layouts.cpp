// Layout detection and the layouts that are `{id}` patterns plus a camera file (apc, 7scenes,
// ycbineoat): they set the patterns and the layout's depth settings on the keys the user did not set,
// then list frames as the pattern layout does. BOP and TUM read index files (layouts/bop.cpp, tum.cpp).
#include "depthmask/layouts.h"

#include <spdlog/spdlog.h>

#include <cstring>
#include <fstream>
#include <set>
#include <sstream>
#include <system_error>

#include "depthmask/errors.h"
#include "detail/text_numbers.h"
#include "layouts/readers.h"

namespace fs = std::filesystem;

namespace depthmask {

namespace {

using layouts_detail::ends_with;
using layouts_detail::layout_default;
using layouts_detail::starts_with;

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

// APC's masks/<object>.thresh.txt: one number, the threshold as a fraction of the mask's full scale.
double read_thresh_file(const fs::path& file) {
  std::istringstream in(detail::read_text_file(file, "threshold file"));
  std::string line;
  int lineno = 0;
  std::optional<double> value;
  while (std::getline(in, line)) {
    ++lineno;
    if (const auto hash = line.find('#'); hash != std::string::npos) line.resize(hash);
    for (const auto& [tok, x] : detail::line_numbers(line, "threshold file '" + file.string() + "'", lineno,
                                                     "; expected one threshold in [0, 1]")) {
      DM_EXPECT(!value, InputError,
                "threshold file '" << file.string() << "' line " << lineno << ": a second number '" << tok
                                   << "'; expected one threshold in [0, 1]");
      DM_EXPECT(x >= 0 && x <= 1, InputError,
                "threshold file '" << file.string() << "' line " << lineno << ": " << tok
                                   << " is outside [0, 1]; expected a fraction of the mask's full scale");
      value = x;
    }
  }
  DM_EXPECT(value, InputError,
            "threshold file '" << file.string() << "' holds no number; expected one threshold in [0, 1]");
  return *value;
}

// The dataset's own intrinsics file, unless the user gave input.intrinsics.
void use_intrinsics_file(ResolvedInput& r, const fs::path& file, const char* what) {
  Config& e = r.config;
  if (e.is_set_by_user("input.intrinsics")) {
    if (is_file(file)) layouts_detail::warn_override(r, "input.intrinsics", "the K of " + file.string());
    return;
  }
  if (!is_file(file)) {
    spdlog::warn("{}: no {} in '{}', so the frames have no intrinsics (set input.intrinsics to give them)",
                 layouts_detail::layout_label(r), what, e.input.root.string());
    return;
  }
  e.input.intrinsics = read_intrinsics_k_text(file);
  e.input.intrinsics_file = file;
}

void resolve_apc(ResolvedInput& r) {
  Config& e = r.config;
  const fs::path root = e.input.root;
  const fs::path cam = root / "cam.info.txt";
  DM_EXPECT(is_file(cam), InputError,
            layouts_detail::layout_label(r) << ": no cam.info.txt in '" << root.string()
                                            << "' (APC's camera file: color K, depth K, depth-to-color extrinsic)");
  r.geometry = read_apc_cam_info(cam);
  // The aligned depth (frame-*.depth.png) is on the color camera's grid, so the color K applies; raw/
  // depth is registered onto that grid with the geometry.
  if (!e.is_set_by_user("input.intrinsics")) {
    e.input.intrinsics = r.geometry->color;
    e.input.intrinsics_file.clear();
  } else {
    layouts_detail::warn_override(r, "input.intrinsics", "the color K of " + cam.string());
  }
  layout_default(r, "depth.scale", e.depth.scale, 0.0001);
  layout_default(r, "depth.encoding", e.depth.encoding, DepthEncoding::Apc);
  layout_default(r, "input.depth", e.input.depth, std::string("frame-{id}.depth.png"));
  layout_default(r, "input.color", e.input.color, std::string("frame-{id}.color.png"));

  r.depth_from_depth_camera = e.input.depth.rfind("raw/", 0) == 0;
  const std::string& object = e.input.object;
  if (object.empty()) {
    layout_default(r, "input.mask", e.input.mask, std::string("segm/frame-{id}.segm.png"));
  } else {
    DM_EXPECT(object.find('/') == std::string::npos && object.find("{id}") == std::string::npos, ConfigError,
              "config key 'input.object': '" << object << "' is not an object name such as kleenex_tissue_box");
    const std::string suffix = "." + object + ".mask.png";
    layout_default(r, "input.mask", e.input.mask, "masks/frame-{id}" + suffix);
    if (!e.is_set_by_user("input.mask")) {
      bool any = false;
      std::set<std::string> objects;
      std::error_code ec;
      if (is_dir(root / "masks"))
        for (fs::directory_iterator it(root / "masks", ec), end; !ec && it != end; it.increment(ec)) {
          const std::string n = it->path().filename().string();
          any = any || (starts_with(n, "frame-") && ends_with(n, suffix));
          if (ends_with(n, ".thresh.txt")) objects.insert(n.substr(0, n.size() - 11));
        }
      if (!any) {
        std::string list;
        for (const auto& o : objects) list += (list.empty() ? "" : ", ") + o;
        throw InputError("config key 'input.object': no masks/frame-*" + suffix + " in '" + root.string() + "'" +
                         (list.empty() ? std::string() : "; objects with masks here: " + list));
      }
    }
    // The probability maps are p x 65535; upstream keeps p > thresh.
    if (!e.is_set_by_user("mask.threshold_fraction"))
      e.mask.threshold_fraction = read_thresh_file(root / "masks" / (object + ".thresh.txt"));
    else
      layouts_detail::warn_override(r, "mask.threshold_fraction", "masks/" + object + ".thresh.txt");
  }

  // Files of the dataset that this run does not read: the camera file, the other depth stream, the
  // thresholds and the other objects' probability maps.
  auto layout_file = [root, suffix = "." + object + ".mask.png", object](const fs::path& p) {
    const std::string rel = p.lexically_relative(root).generic_string();
    const std::string name = p.filename().string();
    if (rel == "cam.info.txt") return true;
    if (is_frame_file(name, "depth.png") && (rel == name || rel == "raw/" + name)) return true;
    if (starts_with(rel, "masks/"))
      return ends_with(name, ".thresh.txt") ||
             (ends_with(name, ".mask.png") && (object.empty() || !ends_with(name, suffix)));
    return false;
  };
  r.listing = list_frames(e.input, layout_file);
}

void resolve_seven_scenes(ResolvedInput& r) {
  Config& e = r.config;
  const fs::path root = e.input.root;
  const auto dir = seven_scenes_frames(root);
  DM_EXPECT(dir || e.is_set_by_user("input.depth"), InputError,
            layouts_detail::layout_label(r)
                << ": no frame-*.depth.png in '" << root.string() << "' or in its rgbd-frames/");
  const std::string d = dir.value_or("");
  use_intrinsics_file(r, root / "camera-intrinsics.txt", "camera-intrinsics.txt");
  layout_default(r, "depth.scale", e.depth.scale, 0.001);
  layout_default(r, "depth.invalid_values", e.depth.invalid_values, std::vector<uint32_t>{65535});
  layout_default(r, "input.depth", e.input.depth, d + "frame-{id}.depth.png");
  layout_default(r, "input.color", e.input.color, d + "frame-{id}.color.png");
  // 7-Scenes ships no masks: by default they sit beside the frames.
  layout_default(r, "input.mask", e.input.mask, d + "frame-{id}.mask.png");
  auto layout_file = [root](const fs::path& p) {
    const std::string name = p.filename().string();
    return p.lexically_relative(root).generic_string() == "camera-intrinsics.txt" || is_frame_file(name, "pose.txt");
  };
  r.listing = list_frames(e.input, layout_file);
}

void resolve_ycbineoat(ResolvedInput& r) {
  Config& e = r.config;
  const fs::path root = e.input.root;
  DM_EXPECT(is_dir(root / "depth") || e.is_set_by_user("input.depth"), InputError,
            layouts_detail::layout_label(r) << ": no depth/ folder in '" << root.string() << "'");
  use_intrinsics_file(r, root / "cam_K.txt", "cam_K.txt");
  layout_default(r, "depth.scale", e.depth.scale, 0.001);
  layout_default(r, "input.depth", e.input.depth, std::string("depth/{id}.png"));
  layout_default(r, "input.color", e.input.color, std::string("rgb/{id}.png"));
  layout_default(r, "input.mask", e.input.mask, std::string("masks/{id}.png"));
  r.listing = list_frames(e.input, [root](const fs::path& p) { return p == (root / "cam_K.txt").lexically_normal(); });
}

}  // namespace

namespace layouts_detail {

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

void warn_override(const ResolvedInput& r, const char* key, const std::string& layout_value) {
  const Config& c = r.config;
  std::string set;
  const std::string k = key;
  if (k == "depth.scale")
    set = describe(c.depth.scale);
  else if (k == "depth.encoding")
    set = describe(c.depth.encoding);
  else if (k == "depth.invalid_values")
    set = describe(c.depth.invalid_values);
  else if (k == "mask.threshold_fraction")
    set = describe(c.mask.threshold_fraction);
  else if (k == "input.intrinsics")
    set = describe(c.input.intrinsics);
  else if (k == "input.depth")
    set = describe(c.input.depth);
  else if (k == "input.mask")
    set = describe(c.input.mask);
  else if (k == "input.color")
    set = describe(c.input.color);
  spdlog::warn("config key '{}' = {} from the configuration replaces {}, the default of {}", key, set, layout_value,
               layout_label(r));
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

}  // namespace layouts_detail

LayoutGuess detect_layout(const fs::path& root) {
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
          "no dataset marker (scene_camera.json, rgb.txt + depth.txt, cam.info.txt, camera-intrinsics.txt, cam_K.txt): "
          "the input.depth / input.mask / input.color patterns"};
}

ResolvedInput resolve_input(const Config& c) {
  ResolvedInput r;
  r.config = c;
  const fs::path root = c.input.root;
  DM_EXPECT(is_dir(root), InputError,
            "input folder '" << root.string() << "' does not exist or is not a folder (input.root)");
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
                      layouts_detail::layout_label(r));
  if (c.is_set_by_user("input.bop_masks") && r.layout != InputLayout::Bop)
    spdlog::warn("config key 'input.bop_masks' has no effect with {}", layouts_detail::layout_label(r));
  if (c.is_set_by_user("input.max_time_diff") && r.layout != InputLayout::Tum)
    spdlog::warn("config key 'input.max_time_diff' has no effect with {}", layouts_detail::layout_label(r));

  switch (r.layout) {
    case InputLayout::Auto:  // resolved above
    case InputLayout::Pattern:
      r.listing = list_frames(r.config.input);
      break;
    case InputLayout::Apc:
      resolve_apc(r);
      break;
    case InputLayout::SevenScenes:
      resolve_seven_scenes(r);
      break;
    case InputLayout::YcbInEOAT:
      resolve_ycbineoat(r);
      break;
    case InputLayout::Bop:
      layouts_detail::resolve_bop(r);
      break;
    case InputLayout::Tum:
      layouts_detail::resolve_tum(r);
      break;
  }
  // The depth camera's lens distortion (not in any camera file) joins the input's geometry; it only
  // means something for depth that is reprojected from the depth camera.
  const Distortion& distortion = r.config.registration.depth_distortion;
  if (distortion.model != DistortionModel::None) {
    DM_EXPECT(r.geometry.has_value(), ConfigError,
              "config key 'registration.depth_distortion' applies to depth reprojected from a depth camera (such "
              "as APC's raw/ with cam.info.txt), and "
                  << layouts_detail::layout_label(r) << " provides no camera geometry");
    r.geometry->depth_distortion = distortion;
    if (!r.depth_from_depth_camera)
      spdlog::warn(
          "config key 'registration.depth_distortion' has no effect: the depth ({}) is already on the color "
          "camera's grid, not in the depth camera's frame",
          r.config.input.depth);
  }
  const fs::path base = root.lexically_normal();
  for (size_t i = 0; i < r.listing.frames.size(); ++i) {
    FrameEntry& f = r.listing.frames[i];
    f.index = i;
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
