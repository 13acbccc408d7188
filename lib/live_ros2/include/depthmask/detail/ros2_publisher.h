// The DDS side of `--publish ros2://NODE`: each masked frame as ROS 2 topics under /NODE, made by
// lib/ros's codec and sent over CycloneDDS (dds.h):
//   /NODE/depth        sensor_msgs/Image 32FC1, metres, NaN (output.invalid) where dropped; the
//                      input's header (ros2:// sources) or the capture time and frame_id "depthmask"
//   /NODE/camera_info  sensor_msgs/CameraInfo: the source's latest, else input.intrinsics; none without
//   /NODE/mask         sensor_msgs/Image mono8, 255 where kept (with mask=1)
//   /NODE/reason       sensor_msgs/Image mono8, the drop reason codes (with reason=1; OUTPUTS.md)
//   /NODE/points       sensor_msgs/PointCloud2 x y z float32, organised, NaN where dropped (with points=1)
// A topic without a matched subscriber costs nothing: its message is not even encoded. A message is
// encoded once into a shared buffer that DDS hands to every subscriber without copying it.
#pragma once

#include <cstdint>
#include <limits>
#include <memory>
#include <optional>
#include <string>

#include "depthmask/config.h"
#include "depthmask/detail/dds.h"
#include "depthmask/frame.h"
#include "depthmask/ros_msgs.h"

namespace depthmask::detail {

/// What a ros2:// publisher sends.
struct Ros2PublishSpec {
  std::string node = "depthmask";  ///< the topics' namespace (/depthmask/depth ...)
  Ros2Qos qos = Ros2Qos::SensorData;
  uint32_t domain = 0;
  std::string dds_config;  ///< as Ros2SourceSpec::dds_config
  bool mask = false, reason = false, points = false;
};

class Ros2Publisher {
 public:
  /// Creates the writers. Throws OutputError (ConfigError for a bad node name) when DDS refuses.
  Ros2Publisher(Ros2PublishSpec spec, const Config& config);
  ~Ros2Publisher();
  Ros2Publisher(const Ros2Publisher&) = delete;
  Ros2Publisher& operator=(const Ros2Publisher&) = delete;

  /// Publishes one masked frame (`slot.out()`, and its mask and reason planes when asked for) with
  /// `header`; `info`: the source's camera_info or null. True when any topic had a subscriber.
  bool publish(const ros::Header& header, const ros::CameraInfo* info, const FrameSlot& slot);
  /// Whether the reason plane is wanted (the runner turns the reason pass on for it).
  bool wants_reason() const { return spec_.reason; }
  const Ros2PublishSpec& spec() const { return spec_; }

 private:
  struct Impl;
  Ros2PublishSpec spec_;
  std::unique_ptr<Impl> impl_;
};

/// An organised PointCloud2 (x, y, z float32, NaN where a pixel is not kept: not finite, <= 0 or
/// `invalid`) of CV_32FC1 `metres` through the pinhole `k` (fx 0 cx; 0 fy cy; 0 0 1), by the PLY
/// output's rule (kernels/backproject.h): a kept pixel's point equals its PLY vertex bit for bit.
ros::PointCloud2 depth_to_points(const cv::Mat& metres, const double k[9], const ros::Header& header,
                                 float invalid = std::numeric_limits<float>::quiet_NaN());

}  // namespace depthmask::detail
