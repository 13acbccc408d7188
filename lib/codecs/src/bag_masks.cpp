#include "depthmask/detail/bag_masks.h"

#include "depthmask/errors.h"
#include "depthmask/image_reader.h"
#include "depthmask/ros_image.h"

namespace depthmask::detail {

cv::Mat unite_bag_masks(const BagFrame& b, const MaskParams& params, size_t max_pixels) {
  cv::Mat mask;
  for (const BagImageMessage& m : b.masks) {
    const cv::Mat one = decode_bag_image(b, m, ros::PixelRole::Mask, max_pixels).pixels;
    check_mask_type(one, describe_message(*b.bag, m));
    if (mask.empty()) mask = cv::Mat::zeros(one.size(), CV_8UC1);
    DM_EXPECT(one.size() == mask.size(), InputError,
              describe_message(*b.bag, m)
                  << " is " << one.cols << "x" << one.rows << " but " << describe_message(*b.bag, b.masks.front())
                  << " is " << mask.cols << "x" << mask.rows
                  << "; expected every mask topic of a frame to have the same size");
    or_mask_tests(one, params, mask);
  }
  return mask;
}

}  // namespace depthmask::detail
