/// \file
/// Pinhole camera intrinsics.
#pragma once

#include <array>
#include <filesystem>
#include <string>

namespace depthmask {

/// Pinhole intrinsics of a camera, in pixels.
struct Intrinsics {
  double fx = 0;   ///< focal length along x
  double fy = 0;   ///< focal length along y
  double cx = 0;   ///< principal point, x
  double cy = 0;   ///< principal point, y
  int width = 0;   ///< image width; 0 when the source does not say
  int height = 0;  ///< image height; 0 when the source does not say

  /// Both focal lengths positive (what a projection needs).
  bool valid() const { return fx > 0 && fy > 0; }
};

/// Lens distortion models (the YAML words: none, inverse_brown_conrady).
///   inverse_brown_conrady: librealsense's RS_DISTORTION_INVERSE_BROWN_CONRADY, the model of the
///   SR300/F200 depth stream: five coefficients (k1, k2, p1, p2, k3) that map a pixel's pinhole ray to
///   the undistorted ray (depthmask/kernels/register.h, DepthDistortion, gives the formula).
enum class DistortionModel { None, InverseBrownConrady };

/// A lens distortion: its model and coefficients.
struct Distortion {
  DistortionModel model = DistortionModel::None;  ///< None: no distortion
  std::array<double, 5> coeffs{};                 ///< k1, k2, p1, p2, k3 (librealsense's order); zero with None
};

/// Reads a text file holding a 3x3 row-major K (whitespace or comma separated, '#' comments allowed),
/// as tsdf-fusion / 7-Scenes / ARC `camera-intrinsics.txt` and FoundationPose `cam_K.txt` do.
/// Throws InputError naming the file and what was wrong.
Intrinsics read_intrinsics_k_text(const std::filesystem::path& file);
/// The same from the file's text; `name` names the file in messages (fuzz/ reads from memory).
Intrinsics parse_intrinsics_k_text(const std::string& text, const std::string& name);

/// Reads intrinsics from a file: YAML (`.yaml`/`.yml`, keys fx fy cx cy [width height]) or a 3x3 K text
/// file (anything else). Throws InputError naming the file.
Intrinsics read_intrinsics_file(const std::filesystem::path& file);

/// Intrinsics as the small YAML file `synth` writes and read_intrinsics_file reads, and back (InputError
/// naming `name`, the file as messages show it).
std::string intrinsics_to_yaml(const Intrinsics& k);
/// Parses what intrinsics_to_yaml writes (the YAML form read_intrinsics_file reads); InputError naming `name`.
Intrinsics parse_intrinsics_yaml(const std::string& text, const std::string& name);

}  // namespace depthmask
