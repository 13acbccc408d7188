// Internals of the dataset layouts (layouts.cpp and one file per layout in layouts/): the per-layout
// resolvers and small helpers they share.
#pragma once

#include <cstdint>
#include <filesystem>
#include <optional>
#include <string>
#include <vector>

#include "depthmask/layouts.h"

namespace depthmask::detail {

// Each fills r.listing (and r.config's layout defaults); r.config.input.root is the folder and
// r.layout / r.reason are already set. Throw InputError / ConfigError as resolve_input documents.
void resolve_apc(ResolvedInput& r);           // layouts/apc.cpp
void resolve_seven_scenes(ResolvedInput& r);  // layouts/seven_scenes.cpp
void resolve_ycbineoat(ResolvedInput& r);     // layouts/ycbineoat.cpp
void resolve_bop(ResolvedInput& r);           // layouts/bop.cpp
void resolve_tum(ResolvedInput& r);           // layouts/tum.cpp
void resolve_rosbag2(ResolvedInput& r);       // layouts/rosbag2.cpp

// TUM's associate.py (layouts/tum.cpp; rosbag2 pairs topics by it too): for each a, the b it is paired
// with (or SIZE_MAX). Pairs within max_diff, closest first, each element used once. Both lists sorted.
std::vector<size_t> associate(const std::vector<double>& a, const std::vector<double>& b, double max_diff);

bool is_file(const std::filesystem::path& p);  // false on any error
bool is_dir(const std::filesystem::path& p);
// "frame-<id>.<kind>" (kind "depth.png", "pose.txt"), as APC and 7-Scenes name their files.
bool is_frame_file(const std::string& name, const char* kind);
// Whether `dir` holds a frame-*.depth.png.
bool has_frame_depth(const std::filesystem::path& dir);
// The folder (relative, "" or "rgbd-frames/") that holds a 7-Scenes / tsdf-fusion frame set, if any.
std::optional<std::string> seven_scenes_frames(const std::filesystem::path& root);
// The dataset's own 3x3 K file (`what` names it in messages), unless the user set input.intrinsics.
void use_intrinsics_file(ResolvedInput& r, const std::filesystem::path& file, const char* what);

// Index files read from their text (`file` names them in messages), one code path with the resolvers
// (fuzz/ calls these on memory).
// TUM rgb.txt / depth.txt / mask.txt: "timestamp filename" lines, increasing timestamps.
struct TumEntry {
  double t = 0;
  std::string file;  // relative to the sequence folder
  int line = 0;
};
std::vector<TumEntry> parse_tum_list(const std::string& text, const std::filesystem::path& file,
                                     bool allow_outside_root);
// BOP scene_camera.json: per image id its K and (millimetres per raw unit) depth_scale.
struct BopCamera {
  long im_id = 0;
  Intrinsics k;
  std::optional<double> depth_scale;  // millimetres per raw unit, as in the file
};
std::vector<BopCamera> parse_scene_camera(const std::string& text, const std::filesystem::path& file, bool need_scale);

// A path an index file names must stay inside the dataset folder (input.allow_paths_outside_root
// lifts this): throws InputError "<where>: '<path>' ..." for an absolute path or one whose `..`
// components climb above the folder.
void check_inside_root(const std::string& path, const std::string& where);
// A TUM list file read through parse_tum_list (the dataset's `input.allow_paths_outside_root`).
std::vector<TumEntry> read_tum_list(const std::filesystem::path& file, bool allow_outside_root);
// A TUM frame's color (when the file exists) and mask paths: the mask is input.mask with the frame's
// id when the user set it, else the mask.txt entry `listed_mask`, else mask/<the rgb file's name>.
void set_tum_color_and_mask(FrameEntry& f, const Config& c, const std::filesystem::path& root, const TumEntry& rgb,
                            const TumEntry* listed_mask);

inline bool starts_with(const std::string& s, const std::string& p) { return s.compare(0, p.size(), p) == 0; }
inline bool ends_with(const std::string& s, const std::string& p) {
  return s.size() >= p.size() && s.compare(s.size() - p.size(), p.size(), p) == 0;
}

// Counts a file that belongs to no frame, keeping the first few for the log.
inline void add_unmatched(DatasetListing& l, const std::filesystem::path& p) {
  ++l.unmatched_files;
  if (l.unmatched_examples.size() < 5) l.unmatched_examples.push_back(p);
}

// "input.layout 'bop' (found scene_camera.json: BOP scene layout)": how messages name the layout.
std::string layout_label(const ResolvedInput& r);

// Refuses an explicit input.<key> pattern that the layout does not read (its frames come from an
// index file): ConfigError naming the key, the layout and what to do instead.
void refuse_pattern_key(const ResolvedInput& r, const char* key, const char* frames_from);

// Values as messages show them.
std::string describe(double v);
std::string describe(const std::string& s);
std::string describe(DepthEncoding e);
std::string describe(const std::vector<uint32_t>& v);
std::string describe(const std::optional<double>& v);
std::string describe(const std::optional<Intrinsics>& k);

// Warns that a key the user set (to `set_value`, as describe() shows it) replaces what the layout
// would use (`layout_value`, as shown). A platform YAML that sets depth.scale for its own sample would
// otherwise make TUM depth 5x off without a word.
void warn_override(const ResolvedInput& r, const char* key, const std::string& set_value,
                   const std::string& layout_value);

// The layout's default for a key the user did not set; a warning when the user set another value.
template <class T>
void layout_default(ResolvedInput& r, const char* key, T& field, const T& value) {
  if (!r.config.is_set_by_user(key))
    field = value;
  else if (!(field == value))
    warn_override(r, key, describe(field), describe(value));
}

}  // namespace depthmask::detail
