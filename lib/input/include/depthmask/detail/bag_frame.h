// A frame of a rosbag2 bag (input.layout rosbag2; layouts/rosbag2.cpp): where its messages are in the
// bag, and what the layout read from them while listing (the depth message's header, the camera_info
// in force at its stamp). FrameEntry::bag holds one; FrameSlot decodes the messages (frame_bag.cpp).
#pragma once

#include <cstdint>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "depthmask/bag.h"
#include "depthmask/ros_image.h"
#include "depthmask/ros_msgs.h"

namespace depthmask::detail {

/// One image message of a frame.
struct BagImageMessage {
  std::string topic;
  bool compressed = false;  ///< sensor_msgs/msg/CompressedImage (else Image)
  bag::MessageRef ref;
  int64_t stamp_ns = 0;  ///< header.stamp
};

struct BagFrame {
  std::shared_ptr<const bag::Reader> bag;
  BagImageMessage depth;
  std::vector<BagImageMessage> masks;          ///< one per mask topic, united
  std::optional<BagImageMessage> color;        ///< none when the bag has no colour topic or none paired
  ros::Header header;                          ///< the depth message's header (the output bag copies it)
  std::optional<ros::CameraInfo> camera_info;  ///< the latest at or before the depth stamp
};

/// How messages name a message: "bag '/data/rec' topic /camera/depth/image_rect_raw, stamp
/// 1700000000.123456789 s (rec_0.mcap)".
std::string describe_message(const bag::Reader& bag, const BagImageMessage& m);

/// One image message of a bag frame read and decoded into pixels (ros_image.h's rules), its size
/// checked against `max_pixels`; InputError naming the message (describe_message) when it does not
/// decode. Shared by the frame slot (`run`) and replay:// (`live`). An Image's pixels go from the
/// bag's decompressed chunk straight into what `alloc` gives (one copy); a CompressedImage decodes
/// into pixels of its own.
ros::DecodedImage decode_bag_image(const BagFrame& frame, const BagImageMessage& m, ros::PixelRole role,
                                   size_t max_pixels, const ros::PixelAllocator& alloc = {});

/// The layout's frame id of a stamp: nanoseconds, 19 digits (zero-padded).
std::string stamp_id(int64_t stamp_ns);

}  // namespace depthmask::detail
