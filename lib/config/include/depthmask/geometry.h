// Camera geometry for registering depth from one camera onto another camera's (the mask's) grid.
#pragma once

#include <array>
#include <filesystem>
#include <string>
#include <vector>

#include "depthmask/intrinsics.h"

namespace depthmask {

// Depth camera, color (mask) camera and the rigid transform between them.
struct CameraGeometry {
  Intrinsics depth;  // K of the depth camera
  Intrinsics color;  // K of the color camera, whose grid the mask is on
  std::array<double, 16> depth_to_color{1, 0, 0, 0, 0, 1, 0, 0, 0, 0, 1, 0, 0, 0, 0, 1};  // row-major 4x4, metres
  // The depth camera's lens distortion, applied when its pixels are deprojected. cam.info.txt does not
  // record it: it comes from registration.depth_distortion.
  Distortion depth_distortion;
};

// APC's cam.info.txt: '#' headed blocks of numbers (color K, depth K, depth-to-color extrinsic,
// bin-to-world, and a camera pose per frame). Returns the first three as CameraGeometry (the
// extrinsic's translation is in metres, as APC's files are). Throws InputError naming the file,
// the block and the line when a block is missing, short or not numeric.
CameraGeometry read_apc_cam_info(const std::filesystem::path& file);
// The same from the file's text; `file` names it in messages (fuzz/ reads from memory).
CameraGeometry parse_apc_cam_info(const std::string& text, const std::filesystem::path& file);

}  // namespace depthmask
