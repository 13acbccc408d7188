// Dataset layouts: which folder structure the input is (detected or named by input.layout), the
// settings that layout implies, and its frame list.
//
// Layouts (input.layout):
//   pattern    the input.depth / input.mask / input.color `{id}` patterns (list_frames).
//   apc        Amazon Picking Challenge 2016 (apc-vision-toolbox): cam.info.txt, frame-XXXXXX.{color,depth}.png
//              (depth aligned to color), raw/ (depth-camera frame), segm/frame-X.segm.png ground-truth
//              labels, masks/frame-X.<object>.mask.png probability maps with masks/<object>.thresh.txt.
//   7scenes    7-Scenes as tsdf-fusion ships it: camera-intrinsics.txt (3x3) and frame-XXXXXX.{color,depth}.png
//              in the folder or in its rgbd-frames/; depth in millimetres, 65535 = no measurement.
//   bop        a BOP scene folder: scene_camera.json, depth/, rgb/ or gray/, mask_visib/ or mask/.
//   tum        TUM RGB-D: rgb.txt and depth.txt timestamp lists (depth factor 5000).
//   ycbineoat  YCBInEOAT / FoundationPose: rgb/, depth/ (mm), masks/, cam_K.txt.
#pragma once

#include <optional>
#include <string>
#include <vector>

#include "depthmask/config.h"
#include "depthmask/dataset.h"
#include "depthmask/geometry.h"
#include "depthmask/intrinsics.h"

namespace depthmask {

// One topic of a rosbag2 bag as the layout saw it (doctor lists them).
struct InputTopic {
  std::string name;
  std::string type;      ///< "sensor_msgs/msg/Image"
  std::string encoding;  ///< the first message's encoding (Image) or format (CompressedImage); "" otherwise
  size_t messages = 0;
  double rate_hz = 0;  ///< messages per second of header stamps (log times without stamps); 0 for one message
  std::string role;    ///< "depth", "mask", "color", "camera_info" when the run reads it; "" otherwise
};

// What a run reads: the layout and why, the configuration with the layout's defaults applied, and
// the frames.
struct ResolvedInput {
  InputLayout layout = InputLayout::Pattern;  // never Auto
  // One sentence: "found cam.info.txt and frame-*.depth.png: APC layout", or "set by input.layout".
  std::string reason;
  // The effective configuration: the layout's defaults (depth.scale, depth.encoding,
  // depth.invalid_values, input patterns, input.intrinsics, mask.threshold_fraction) applied to the
  // keys the user did not set (Config::is_set_by_user); input.layout is the resolved layout.
  Config config;
  DatasetListing listing;  // every frame has FrameEntry::relative
  std::optional<CameraGeometry> geometry;
  // True when the listed depth is in the depth camera's frame (APC raw/), so it must be registered
  // onto the color/mask grid with `geometry`; APC's aligned depth is already on that grid.
  bool depth_from_depth_camera = false;  // apc: from cam.info.txt (depth K, color K, extrinsic)
  std::vector<InputTopic> topics;        // rosbag2: every topic of the bag, by name
};

// Resolves input.layout (detecting it when auto) and lists the frames. An explicit layout skips
// detection but the folder must hold what that layout needs. Throws InputError naming the file (and
// line, for text and JSON files) when the folder or one of its index/camera files is missing or
// malformed, and ConfigError for settings that do not apply to the layout (input.object outside apc,
// input.depth/input.color patterns with bop or tum, whose frames come from their index files).
ResolvedInput resolve_input(const Config& config);

// The layout a folder looks like, and why (the `reason` of ResolvedInput). Pattern when no dataset
// marker file is found. Does not list frames.
struct LayoutGuess {
  InputLayout layout = InputLayout::Pattern;
  std::string reason;
};
LayoutGuess detect_layout(const std::filesystem::path& root);

// The intrinsics / metres per raw unit that apply to one frame: its own (BOP scene_camera.json) when
// it has them, the configuration's otherwise.
std::optional<Intrinsics> frame_intrinsics(const Config& config, const FrameEntry& frame);
double frame_depth_scale(const Config& config, const FrameEntry& frame);

}  // namespace depthmask
