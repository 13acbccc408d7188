// FrameSlot's rosbag2 frames (FrameEntry::bag, input.layout rosbag2): the frame's messages read from
// the bag and decoded (depthmask/ros_image.h) into the backend's buffers, with the same type and size
// checks as files.
#include <string>

#include "depthmask/detail/bag_frame.h"
#include "depthmask/detail/bag_masks.h"
#include "depthmask/errors.h"
#include "depthmask/frame.h"
#include "depthmask/ros_image.h"

namespace depthmask {

void FrameSlot::load_bag_images(const FrameEntry& f, bool want_color, const MaskParams* unite) {
  const detail::BagFrame& b = *f.bag;
  const size_t max_pixels = reader_.limits().max_image_pixels;
  depth_.release();
  mask_.release();
  depth_channels_ = 1;
  // An Image's pixels are decoded straight into the backend's buffer (the one copy out of the bag's
  // chunk); a CompressedImage's, decoded into pixels of their own, are copied in.
  const auto into = [this](Buffer& buf) {
    return [this, &buf](int rows, int cols, int type) { return host_mat(rows, cols, type, buf); };
  };
  const auto in_buffer = [this](const cv::Mat& m, Buffer& buf) {
    return static_cast<const void*>(m.data) == buf.host() ? m : adopt(m, buf);
  };
  const cv::Mat depth =
      detail::decode_bag_image(b, b.depth, ros::PixelRole::Depth, max_pixels, into(depth_buf_)).pixels;
  const std::string depth_what = detail::describe_message(*b.bag, b.depth);
  check_depth_type(depth, depth_what);
  cv::Mat mask;
  if (unite == nullptr) {
    mask = detail::decode_bag_image(b, b.masks.front(), ros::PixelRole::Mask, max_pixels, into(mask_buf_)).pixels;
  } else {  // several mask topics: the union of their mask tests (read_instance_union's rule)
    mask = detail::unite_bag_masks(b, *unite, max_pixels);
  }
  const std::string mask_what = detail::describe_message(*b.bag, b.masks.front());
  check_mask_type(mask, mask_what);
  depth_ = in_buffer(depth, depth_buf_);
  depth_buf_.host_written();
  mask_ = in_buffer(mask, mask_buf_);
  mask_buf_.host_written();
  try {
    check_pair(depth_what, mask_what);
  } catch (...) {
    depth_.release();
    mask_.release();
    throw;
  }
  color_ = cv::Mat();
  if (want_color && b.color) {
    const std::string what = detail::describe_message(*b.bag, *b.color);
    color_decoded_ = detail::decode_bag_image(b, *b.color, ros::PixelRole::Color, max_pixels).pixels;
    DM_EXPECT(color_decoded_.size() == mask_.size(), InputError,
              what << " is " << color_decoded_.cols << "x" << color_decoded_.rows << " but " << mask_what << " is "
                   << mask_.cols << "x" << mask_.rows << "; expected the same size");
    stage_color(color_decoded_, what);
  }
}

}  // namespace depthmask
