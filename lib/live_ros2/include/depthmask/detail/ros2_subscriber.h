// The DDS side of the ros2:// live source: a camera driver's ROS 2 topics (depth, colour, mask topics,
// camera_info) read over CycloneDDS, decoded by lib/ros as the bag reader decodes them, and paired by
// header.stamp into frames. `live` wraps it as a LiveSource (lib/live/src/ros2_source.cpp).
//
// Pairing: each depth message, in arrival order, takes from every partner topic (colour, each mask
// topic) the message closest to its stamp within input.max_time_diff. It is decided as soon as every
// partner has a message at or after its stamp (later ones are farther, a topic's stamps rise), or
// when it has waited live.pair_wait since it arrived (segmentation comes 50-300 ms late); a depth
// message without a partner within the tolerance then is dropped and counted (unpaired()). Several
// mask topics unite into one mask of mask-test results (as a bag's mask topics and BOP's instance
// masks do). camera_info: the latest received. Everything waiting is bounded: the readers' history
// (the QoS depth), at most 8 depth messages pending and 32 messages per partner topic.
//
// A message that does not decode (malformed CDR, an encoding the role does not take, data shorter
// than step * height, more pixels than input.max_image_pixels) is refused: logged (the first few,
// then every 100th) with the topic and the reason, counted (refused()), and the source goes on.
#pragma once

#include <opencv2/core.hpp>

#include <chrono>
#include <cstdint>
#include <deque>
#include <memory>
#include <string>
#include <vector>

#include "depthmask/config.h"
#include "depthmask/detail/dds.h"
#include "depthmask/ros_msgs.h"

namespace depthmask::detail {

/// What a ros2:// source subscribes to.
struct Ros2SourceSpec {
  std::string depth;               ///< the depth topic (Image, or CompressedImage when it ends in /compressed...)
  std::string color;               ///< optional colour topic
  std::vector<std::string> masks;  ///< mask topics (mono8 / 8UC1 / 16UC1 labels), united when several
  std::string camera_info;         ///< optional CameraInfo topic
  Ros2Qos qos = Ros2Qos::SensorData;
  uint32_t domain = 0;
  std::string dds_config;  ///< CycloneDDS XML or file:// URI; empty = CycloneDDS's own (CYCLONEDDS_URI)
};

/// One paired frame.
struct Ros2Frame {
  cv::Mat depth, mask, color;  ///< depth CV_16UC1 / CV_32FC1; mask CV_8UC1 / CV_16UC1; colour CV_8UC3 BGR
  bool mask_tests = false;     ///< mask holds united mask-test results (several mask topics)
  ros::Header header;          ///< the depth message's
  std::string depth_encoding;  ///< "16UC1", "32FC1", ...
  std::shared_ptr<const ros::CameraInfo> camera_info;  ///< the latest received, or null
};

/// Whether a topic carries sensor_msgs/CompressedImage (image_transport's names end in /compressed or
/// /compressedDepth) rather than sensor_msgs/Image.
bool is_compressed_topic(const std::string& topic);

class Ros2Subscriber {
 public:
  /// `config`: input.max_time_diff, live.pair_wait, the input limits and the mask test.
  Ros2Subscriber(Ros2SourceSpec spec, const Config& config);
  ~Ros2Subscriber();
  Ros2Subscriber(const Ros2Subscriber&) = delete;
  Ros2Subscriber& operator=(const Ros2Subscriber&) = delete;

  /// Creates the participant's readers (once; a reopen keeps them) and drops what was pending.
  void open();
  /// The next paired frame; false when none came within `timeout`.
  bool next(Ros2Frame& out, std::chrono::milliseconds timeout);
  /// The time since the last depth message arrived, or since open() before the first one.
  std::chrono::steady_clock::duration silent_for() const;

  uint64_t unpaired() const { return unpaired_; }  ///< depth and partner messages dropped by pairing
  uint64_t refused() const { return refused_; }    ///< messages that did not decode
  std::string describe() const;

 private:
  struct Impl;
  std::unique_ptr<Impl> impl_;
  uint64_t unpaired_ = 0, refused_ = 0;
};

}  // namespace depthmask::detail
