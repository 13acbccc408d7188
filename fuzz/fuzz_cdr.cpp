// The CDR codec of the ROS 2 message types and image messages as pixels: the first byte picks the type
// (and, for images, the role), the rest is the payload. Images are decoded with a small pixel limit,
// as a bag's messages are, so that a crafted size is refused rather than allocated.
#include <cstddef>
#include <cstdint>

#include "depthmask/errors.h"
#include "depthmask/ros_image.h"
#include "depthmask/ros_msgs.h"

namespace ros = depthmask::ros;

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  if (size == 0) return 0;
  const uint8_t* p = data + 1;
  const size_t n = size - 1;
  const auto role = static_cast<ros::PixelRole>((data[0] >> 4) % 3);
  constexpr size_t kMaxPixels = size_t{1} << 20;
  try {
    switch (data[0] & 0x0F) {
      case 0:
        (void)ros::image_to_pixels(ros::decode_image_view(p, n, "fuzz"), role, kMaxPixels, "fuzz");
        break;
      case 1:
        (void)ros::compressed_to_pixels(ros::decode_compressed_image(p, n, "fuzz"), role, kMaxPixels, "fuzz");
        break;
      case 2:
        (void)ros::decode_camera_info(p, n, "fuzz");
        break;
      case 3:
        (void)ros::decode_point_cloud2(p, n, "fuzz");
        break;
      case 4:
        (void)ros::decode_header(p, n, "fuzz");
        break;
      default:  // raw RVL words of a 32x32 image
        (void)ros::rvl_decode(p, n, 32, 32, "fuzz");
        break;
    }
  } catch (const depthmask::Error&) {
  }
  return 0;
}
