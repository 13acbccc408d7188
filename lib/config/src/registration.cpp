#include "depthmask/registration.h"

#include <algorithm>
#include <cmath>
#include <stdexcept>

#include "depthmask/errors.h"

namespace depthmask {

namespace {

std::string size_text(cv::Size s) { return std::to_string(s.width) + "x" + std::to_string(s.height); }

// One camera at two resolutions keeps its aspect ratio; 1 % absorbs odd sizes such as 639x481.
bool same_aspect(cv::Size a, cv::Size b) {
  const double ra = static_cast<double>(a.width) / a.height, rb = static_cast<double>(b.width) / b.height;
  return std::abs(ra / rb - 1.0) <= 0.01;
}

}  // namespace

void check_registration(RegistrationMode configured, const std::optional<CameraGeometry>& geometry) {
  DM_EXPECT(configured != RegistrationMode::Reproject || geometry.has_value(), ConfigError,
            "registration.mode 'reproject' needs the depth camera's intrinsics, the depth-to-color extrinsic and the "
            "color camera's intrinsics (such as APC's cam.info.txt), and this input provides none; use 'resample' "
            "for one camera at two resolutions, or 'auto'");
}

RegistrationPlan plan_registration(RegistrationMode configured, const std::optional<CameraGeometry>& geometry,
                                   cv::Size depth, cv::Size mask) {
  check_registration(configured, geometry);
  switch (configured) {
    case RegistrationMode::None:
      return {RegistrationMode::None, "registration.mode is 'none'"};
    case RegistrationMode::Resample:
      return {RegistrationMode::Resample, "registration.mode is 'resample'"};
    case RegistrationMode::Reproject:
      return {RegistrationMode::Reproject, "registration.mode is 'reproject'"};
    case RegistrationMode::Auto:
      break;
  }
  if (geometry) return {RegistrationMode::Reproject, "the input's depth comes from another camera than the mask"};
  if (depth == mask) return {RegistrationMode::None, "depth and mask have the same size"};
  if (depth.area() > 0 && mask.area() > 0 && same_aspect(depth, mask))
    return {RegistrationMode::Resample,
            "depth (" + size_text(depth) + ") and mask (" + size_text(mask) + ") differ in size, not in aspect ratio"};
  return {RegistrationMode::None, "depth (" + size_text(depth) + ") and mask (" + size_text(mask) +
                                      ") differ in aspect ratio: not one camera at two resolutions"};
}

ReprojectParams reproject_params(const CameraGeometry& g) {
  const double kd[4] = {g.depth.fx, g.depth.fy, g.depth.cx, g.depth.cy};
  const double kc[4] = {g.color.fx, g.color.fy, g.color.cx, g.color.cy};
  const bool distorted = g.depth_distortion.model == DistortionModel::InverseBrownConrady;
  try {
    return reproject_params(kd, g.depth_to_color.data(), kc, distorted ? g.depth_distortion.coeffs.data() : nullptr);
  } catch (const std::invalid_argument& e) {
    throw InputError(std::string("camera geometry unusable for reprojection: ") + e.what());
  }
}

ResampleMap resample_map(const std::optional<CameraGeometry>& g, cv::Size depth, cv::Size mask) {
  try {
    if (g)
      return resample_map(g->depth.fx, g->depth.fy, g->depth.cx, g->depth.cy, g->color.fx, g->color.fy, g->color.cx,
                          g->color.cy);
    return resample_map_sizes(depth.width, depth.height, mask.width, mask.height);
  } catch (const std::invalid_argument& e) {
    throw InputError(std::string("cannot resample depth onto the mask grid: ") + e.what());
  }
}

MaskParams registered_mask_params(const MaskParams& params, bool depth_was_raw) {
  MaskParams p = params;
  if (depth_was_raw) {
    // Registration decodes a (decoded) 16-bit word v to float(v) * scale (decode_depth_m); the bounds
    // the raw-unit range admits are those of its end points. An empty raw range stays empty.
    if (p.raw_min <= p.raw_max) {
      p.min_m = std::min(p.min_m, static_cast<float>(p.raw_min) * p.scale);
      p.max_m = std::max(p.max_m, static_cast<float>(p.raw_max) * p.scale);
    } else {
      p.min_m = 1.0f, p.max_m = 0.0f;
    }
  }
  return p;
}

}  // namespace depthmask
