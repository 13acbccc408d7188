/// \file
/// Listing the frames of an input folder from the `{id}` patterns of the configuration.
#pragma once

#include <cstddef>
#include <filesystem>
#include <functional>
#include <memory>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "depthmask/config.h"
#include "depthmask/intrinsics.h"

namespace depthmask {

namespace detail {
struct BagFrame;  // depthmask/detail/bag_frame.h: a rosbag2 frame's messages
}  // namespace detail

/// One frame of the input: its files and what the layout knows of it.
struct FrameEntry {
  size_t index = 0;             ///< position in the run, 0-based
  std::string id;               ///< what `{id}` matched
  std::filesystem::path depth;  ///< the depth file
  std::filesystem::path mask;   ///< the mask file (BOP's per-instance masks: `instances`)
  std::filesystem::path color;  ///< empty when the pattern is unset or the file does not exist
  /// Per-instance masks (BOP: {im_id:06d}_{gt_idx:06d}.png) as (instance id, file); empty otherwise.
  /// Their union is the frame's mask, or each gives its own output with mask.per_instance.
  std::vector<std::pair<std::string, std::filesystem::path>> instances;
  std::optional<Intrinsics> intrinsics;  ///< this frame's own (BOP cam_K); otherwise the dataset's
  std::optional<double> depth_scale;     ///< this frame's own metres per raw unit (BOP depth_scale / 1000)
  double timestamp = -1;                 ///< seconds (TUM), -1 when unknown
  std::filesystem::path relative;        ///< depth path relative to input.root, for output.layout: mirror
  /// input.layout rosbag2: where the frame's messages are (the paths above then name the bag's storage
  /// file, for messages); null for a frame of files.
  std::shared_ptr<const detail::BagFrame> bag;
};

/// The frames of an input folder, and what in it belongs to no frame.
struct DatasetListing {
  std::vector<FrameEntry> frames;  ///< natural order of id
  /// Files in the folders the patterns look at that belong to no frame (a mask without its depth,
  /// a stray README ...). Counted for the summary; the first few are kept for the log.
  size_t unmatched_files = 0;
  std::vector<std::filesystem::path> unmatched_examples;  ///< the first five of them
  /// What they are, for the summary's line: "file(s)", or a bag's "message(s)" (examples: topic and stamp).
  std::string unmatched_what = "file(s)";
  /// Damage found while listing (a bag cut short, a chunk whose CRC differs), each a sentence naming
  /// the file and where; the frames before it are listed, and the run reports each as an input failure.
  std::vector<std::string> damaged;
};

/// Natural order: digit runs compare as numbers ("2" < "10"), the rest byte-wise.
bool natural_less(const std::string& a, const std::string& b);

/// Lists frames under input.root. The depth pattern drives the list; mask and color paths are the
/// id substituted into their patterns (the mask's existence is checked when the frame is loaded, so a
/// missing mask is an error of that frame). Throws InputError when the root is not a readable folder
/// or no file matches the depth pattern. `is_layout_file` (optional) names files of the dataset that
/// no frame uses but that are not strays either (cam.info.txt, another depth stream ...): they are
/// not counted as unmatched.
DatasetListing list_frames(const InputConfig& input,
                           const std::function<bool(const std::filesystem::path&)>& is_layout_file = {});

/// The pattern with `{id}` replaced.
std::string substitute_id(const std::string& pattern, const std::string& id);

}  // namespace depthmask
