// The unit sanity check: is the masked depth plausible for an RGB-D scene at the configured scale?
//
// A wrong depth.scale (millimetres read as 0.1 mm, metres read as millimetres) gives no error, only
// depth ten or a thousand times off. run_batch looks at the median kept depth of the first frame
// that keeps enough pixels and warns once when it lies outside what RGB-D sensors measure, naming
// the scale that would make it plausible.
#pragma once

#include <opencv2/core.hpp>

#include <cstddef>
#include <optional>
#include <string>

namespace depthmask {

// What RGB-D sensors measure, in metres (structured light, ToF and stereo alike).
inline constexpr double kPlausibleDepthMinM = 0.1;
inline constexpr double kPlausibleDepthMaxM = 20.0;
// Fewer kept pixels than this say too little about the scene (a few flying pixels at an edge).
inline constexpr size_t kUnitCheckMinPixels = 100;

// The median of the kept pixels of a masked output (CV_32FC1): finite, > 0 and not `invalid`.
// nullopt when fewer than min_pixels are kept. One copy of the kept values and nth_element.
std::optional<double> median_kept_depth(const cv::Mat& out, float invalid, size_t min_pixels = kUnitCheckMinPixels);

// Empty when median_m is in [kPlausibleDepthMinM, kPlausibleDepthMaxM]. Otherwise the warning: for
// 16-bit input it names the configured scale and the one that brings the median into range — the
// preset unit (mm, 0.1mm) fewest decades from it, else the power of ten fewest decades away —
// e.g. "median masked depth 52.3 m at depth.scale 0.001 is implausible ...; with depth.scale 0.0001
// (0.1mm) it would be 5.23 m". Float input is metres already (the scale does not apply), so the
// warning says which unit the files seem to hold.
std::string depth_unit_warning(double median_m, double scale, bool float_depth);

// The suggestion of depth_unit_warning as a number: metres per stored unit that bring median_m into
// range (for 16-bit input, the depth.scale to set). nullopt when the median is plausible or no power
// of ten makes it so.
std::optional<double> suggested_depth_scale(double median_m, double scale, bool float_depth);

}  // namespace depthmask
