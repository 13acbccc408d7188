// A rosbag2 frame's mask topics as one mask: the union of their mask tests (the rule of instance
// masks, ImageReader::read_instance_union), shared by the batch's frame slot and replay://.
#pragma once

#include <opencv2/core.hpp>

#include <cstddef>

#include "depthmask/detail/bag_frame.h"
#include "depthmask/kernels/mask_rule.h"

namespace depthmask::detail {

// Each of b.masks decoded (decode_bag_image), type-checked as a mask and OR-ed as mask tests with
// `params` (or_mask_tests) into one CV_8UC1 plane (255 where some topic passes, 0 elsewhere); every topic must have
// the first one's size. Throws InputError naming the message that differs.
cv::Mat unite_bag_masks(const BagFrame& b, const MaskParams& params, size_t max_pixels);

}  // namespace depthmask::detail
