// Registration of depth onto the mask's grid: which operation a frame gets (the rule behind
// `registration.mode`) and the kernel parameters from a camera geometry. The per-pixel work is in
// depthmask/kernels/register.h; FrameSlot runs it before masking (set_registration()).
#pragma once

#include <opencv2/core.hpp>

#include <optional>
#include <string>

#include "depthmask/config.h"
#include "depthmask/geometry.h"
#include "depthmask/kernels/register.h"

namespace depthmask {

// What one frame gets: RegistrationMode::None, Resample or Reproject (never Auto), and why, in words.
struct RegistrationPlan {
  RegistrationMode mode = RegistrationMode::None;
  std::string reason;
};

// The rule, for a frame whose depth is `depth` and mask is `mask` pixels. `geometry` is given when
// the input says its depth comes from another camera than the mask (depth K, depth-to-color
// extrinsic, color K: APC's raw/ depth with cam.info.txt); a geometry means exactly that.
//   none      -> none (depth and mask must then have the same size)
//   resample  -> resample: through the geometry's two K's when given, else pixel edges aligned
//   reproject -> reproject; ConfigError without a geometry
//   auto      -> reproject when a geometry is given; else resample when the sizes differ but the
//                aspect ratios agree within 1 % (a plain resolution change of one camera); else none
//                (same size, or a different aspect ratio, which is not one camera at two resolutions:
//                load() then reports the size mismatch).
RegistrationPlan plan_registration(RegistrationMode configured, const std::optional<CameraGeometry>& geometry,
                                   cv::Size depth, cv::Size mask);

// Throws ConfigError when `configured` cannot work with what the input provides (reproject without a
// geometry). For the pipeline to call once, before any frame.
void check_registration(RegistrationMode configured, const std::optional<CameraGeometry>& geometry);

// Kernel parameters. Throw InputError for unusable intrinsics or extrinsics.
ReprojectParams reproject_params(const CameraGeometry& geometry);
ResampleMap resample_map(const std::optional<CameraGeometry>& geometry, cv::Size depth, cv::Size mask);

// The mask parameters for masking registered depth (float metres). For depth that arrived as 16-bit
// raw units the range was meant in raw units (inclusive, exact); the float bounds are widened to the
// decoded bounds so that a raw value at the bound still passes: 1500 * 0.001f is 1.50000012f > 1.5f.
MaskParams registered_mask_params(const MaskParams& params, bool depth_was_raw);

}  // namespace depthmask
