// Internal: ros2:// in live mode: the LiveSource over detail::Ros2Subscriber and the runner's output
// over detail::Ros2Publisher (lib/live_ros2). Built without CycloneDDS (DEPTHMASK_HAVE_ROS2 off),
// both throw ConfigError saying why ros2:// is absent.
#pragma once

#include <memory>
#include <string>
#include <vector>

#include "depthmask/config.h"
#include "depthmask/frame.h"
#include "depthmask/live.h"

namespace depthmask::detail {

/// ros2:///DEPTH_TOPIC?color=TOPIC&mask=TOPIC[,TOPIC...]&camera_info=TOPIC&qos=sensor_data|default
/// &domain=N&config=CYCLONEDDS_XML_OR_FILE_URI.
std::unique_ptr<LiveSource> make_ros2_source(const SourceUri& uri, const Config& config);

/// One `ros2://NODE?qos=&domain=&config=&mask=1&reason=1&points=1` entry of live.publish.
class Ros2Output {
 public:
  virtual ~Ros2Output() = default;
  /// Publishes the frame (meta: its header and camera_info); true when anything was sent.
  virtual bool publish(const CapturedFrame& meta, const FrameSlot& slot) = 0;
  /// Whether /NODE/reason is published (the runner then runs the reason pass).
  virtual bool wants_reason() const = 0;
};
std::unique_ptr<Ros2Output> make_ros2_output(const std::string& uri, const Config& config);

/// live.publish split at its commas.
std::vector<std::string> publish_targets(const std::string& publish);

/// Whether this build has ros2://, and what it runs on or why it is absent (`depthmask info`).
bool ros2_built();
std::string ros2_note();

}  // namespace depthmask::detail
