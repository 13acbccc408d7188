// What ros_image.cpp (Image) and ros_compressed.cpp (CompressedImage) share: the one table of the
// encodings depthmask reads, which role takes which, and the pixel-limit check.
#pragma once

#include <cstdint>
#include <string>

#include "depthmask/ros_image.h"

namespace depthmask::detail {

/// One encoding of sensor_msgs/image_encodings that depthmask reads.
struct RosEncoding {
  const char* name;        ///< "16UC1"
  int cv_type;             ///< the message's pixels as OpenCV holds them (before any conversion to BGR)
  int channel_bytes;       ///< 1, 2 or 4: what is_bigendian swaps
  int to_bgr;              ///< the cv::cvtColor code that makes colour BGR, or -1
  unsigned roles;          ///< a bit per ros::PixelRole that takes it
  double metres_per_unit;  ///< as depth (REP 118), 0 when it is no depth encoding
};

/// The encoding named `name`, or nullptr.
const RosEncoding* find_ros_encoding(const std::string& name);

/// The encoding `name` for `role`, or InputError "<what>: <source> of encoding '<name>' cannot be a
/// <role>: a <role> is A, B or C".
const RosEncoding& expect_ros_encoding(const std::string& name, ros::PixelRole role, const std::string& what,
                                       const char* source);

/// InputError unless 0 < width*height <= max_pixels.
void check_ros_pixels(uint64_t width, uint64_t height, size_t max_pixels, const std::string& what, const char* source);

}  // namespace depthmask::detail
