// ROS 2 image messages as pixels, and pixels as messages: what a bag's Image / CompressedImage holds,
// in the cv::Mat types the rest of depthmask reads (depth CV_16UC1 in raw units or CV_32FC1 in metres;
// masks and labels CV_8UC1 or CV_16UC1; colour CV_8UC3 BGR), one rule for the bag reader, replay and
// the DDS source. Every size is checked against the configured pixel limit before allocating.
#pragma once

#include <cstddef>
#include <cstdint>
#include <functional>
#include <string>
#include <vector>

#include <opencv2/core.hpp>

#include "depthmask/ros_msgs.h"

namespace depthmask::ros {

/// What a message's pixels are.
enum class PixelRole { Depth, Mask, Color };

/// What an image message decodes to, and what it says about its units.
struct DecodedImage {
  cv::Mat pixels;        ///< CV_16UC1 / CV_32FC1 depth, CV_8UC1 / CV_16UC1 mask, CV_8UC3 BGR colour
  std::string encoding;  ///< the message's encoding (Image) or the compressed payload's ("16UC1", "32FC1", "mono8",
                         ///< "rgb8", ...)
  double metres_per_unit = 0;  ///< depth only: 0.001 for 16UC1/mono16 (REP 118), 1 for 32FC1; 0 otherwise
};

/// Where decoded pixels go: given rows, columns and the OpenCV type, a cv::Mat of exactly that to write
/// into (a view of a buffer the caller owns, such as the backend's). Empty: a new cv::Mat.
using PixelAllocator = std::function<cv::Mat(int rows, int cols, int type)>;

/// sensor_msgs/Image → pixels: `step` padding dropped, `is_bigendian` honoured, rgb/rgba/bgra →
/// BGR, mono16/16UC1 → CV_16UC1, 32FC1 → CV_32FC1, mono8/8UC1 → CV_8UC1. InputError (naming `what`)
/// for an encoding the role does not take, a step smaller than a row, data shorter than step*height,
/// or more pixels than `max_pixels`. The pixels are copied once, from the message into what `alloc`
/// gives.
DecodedImage image_to_pixels(const ImageView& m, PixelRole role, size_t max_pixels, const std::string& what,
                             const PixelAllocator& alloc = {});
/// The same for a decoded Image that owns its bytes.
DecodedImage image_to_pixels(const Image& m, PixelRole role, size_t max_pixels, const std::string& what);

/// sensor_msgs/CompressedImage → pixels: "png"/"jpeg" (any format string naming them), and
/// image_transport's compressedDepth: its 12-byte ConfigHeader (int32 format, float depthQuantA,
/// depthQuantB) then PNG (16UC1: plain 16-bit; 32FC1: inverse-depth quantised, depth = A / (q - B),
/// q == 0 → NaN) or RVL (its width and height as two uint32 before the RVL words).
DecodedImage compressed_to_pixels(const CompressedImage& m, PixelRole role, size_t max_pixels, const std::string& what);

/// Pixels → sensor_msgs/Image (little-endian, step = width * pixel size): CV_32FC1 → "32FC1",
/// CV_16UC1 → "16UC1", CV_8UC1 → "mono8", CV_8UC3 (BGR) → "bgr8".
Image pixels_to_image(const cv::Mat& pixels, const Header& header);

/// CV_32FC1 metres → image_transport's compressedDepth "32FC1; compressedDepth png" (inverse-depth
/// quantisation with its default depth_max 10 m, quantisation 100; NaN and 0 → 0).
CompressedImage depth_to_compressed_depth(const cv::Mat& metres, const Header& header);

/// RVL (Wilson 2017), the run-length / variable-length code image_transport's compressedDepth "rvl"
/// uses for 16-bit depth: encode and decode (InputError naming `what` on a stream that runs out).
std::vector<uint8_t> rvl_encode(const cv::Mat& depth16);
cv::Mat rvl_decode(const uint8_t* data, size_t size, int width, int height, const std::string& what);

}  // namespace depthmask::ros
