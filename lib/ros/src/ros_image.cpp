// sensor_msgs/Image ↔ pixels, and the table of encodings both image message types share.
#include "depthmask/ros_image.h"

#include <cstring>

#include <opencv2/imgproc.hpp>

#include "depthmask/errors.h"
#include "ros_image_detail.h"

namespace depthmask::detail {
namespace {

constexpr unsigned bit(ros::PixelRole r) { return 1u << static_cast<unsigned>(r); }
constexpr unsigned kDepth = bit(ros::PixelRole::Depth);
constexpr unsigned kMask = bit(ros::PixelRole::Mask);
constexpr unsigned kColor = bit(ros::PixelRole::Color);

// REP 118: 16-bit depth is in millimetres, float depth in metres.
constexpr RosEncoding kEncodings[] = {
    {"16UC1", CV_16UC1, 2, -1, kDepth | kMask, 0.001},
    {"mono16", CV_16UC1, 2, -1, kDepth | kMask, 0.001},
    {"32FC1", CV_32FC1, 4, -1, kDepth, 1.0},
    {"mono8", CV_8UC1, 1, cv::COLOR_GRAY2BGR, kMask | kColor, 0},
    {"8UC1", CV_8UC1, 1, -1, kMask, 0},
    {"rgb8", CV_8UC3, 1, cv::COLOR_RGB2BGR, kColor, 0},
    {"bgr8", CV_8UC3, 1, -1, kColor, 0},
    {"rgba8", CV_8UC4, 1, cv::COLOR_RGBA2BGR, kColor, 0},
    {"bgra8", CV_8UC4, 1, cv::COLOR_BGRA2BGR, kColor, 0},
};

const char* role_name(ros::PixelRole role) {
  switch (role) {
    case ros::PixelRole::Depth:
      return "depth image";
    case ros::PixelRole::Mask:
      return "mask";
    case ros::PixelRole::Color:
      return "colour image";
  }
  return "image";
}

std::string encodings_of(ros::PixelRole role) {
  std::string out;
  for (const RosEncoding& e : kEncodings) {
    if ((e.roles & bit(role)) == 0) continue;
    out += out.empty() ? "" : ", ";
    out += e.name;
  }
  return out;
}

void swap_bytes_inplace(cv::Mat& m, int channel_bytes) {
  for (int y = 0; y < m.rows; ++y) {
    uint8_t* p = m.ptr<uint8_t>(y);
    const size_t n = m.cols * m.elemSize();
    for (size_t i = 0; i + channel_bytes <= n; i += channel_bytes) {
      for (int a = 0, b = channel_bytes - 1; a < b; ++a, --b) std::swap(p[i + a], p[i + b]);
    }
  }
}

}  // namespace

const RosEncoding* find_ros_encoding(const std::string& name) {
  for (const RosEncoding& e : kEncodings) {
    if (name == e.name) return &e;
  }
  return nullptr;
}

const RosEncoding& expect_ros_encoding(const std::string& name, ros::PixelRole role, const std::string& what,
                                       const char* source) {
  const RosEncoding* e = find_ros_encoding(name);
  DM_EXPECT(e != nullptr && (e->roles & bit(role)) != 0, InputError,
            what << ": " << source << " of encoding '" << name << "' cannot be a " << role_name(role) << ": a "
                 << role_name(role) << " is " << encodings_of(role));
  return *e;
}

void check_ros_pixels(uint64_t width, uint64_t height, size_t max_pixels, const std::string& what, const char* source) {
  // Each side is at most 2^32: the product cannot overflow. A side must fit cv::Mat's int.
  constexpr uint64_t kMaxSide = uint64_t{1} << 30;
  DM_EXPECT(width > 0 && height > 0 && width <= kMaxSide && height <= kMaxSide && width * height <= max_pixels,
            InputError,
            what << ": " << source << " of " << width << "x" << height << " pixels; expected 1 to " << max_pixels
                 << " pixels (input.max_image_pixels), so it is not decoded");
}

}  // namespace depthmask::detail

namespace depthmask::ros {

DecodedImage image_to_pixels(const ImageView& m, PixelRole role, size_t max_pixels, const std::string& what,
                             const PixelAllocator& alloc) {
  const detail::RosEncoding& enc = detail::expect_ros_encoding(m.encoding, role, what, "an Image");
  detail::check_ros_pixels(m.width, m.height, max_pixels, what, "an Image");
  const size_t pixel_bytes = CV_ELEM_SIZE(enc.cv_type);
  const uint64_t row_bytes = uint64_t{m.width} * pixel_bytes;
  DM_EXPECT(m.step >= row_bytes, InputError,
            what << ": an Image of " << m.width << " " << m.encoding << " pixels per row has a step of " << m.step
                 << " bytes, less than the row's " << row_bytes);
  DM_EXPECT(uint64_t{m.step} * m.height <= m.size, InputError,
            what << ": an Image of " << m.height << " rows of " << m.step << " bytes holds only " << m.size
                 << " bytes of data");
  const int rows = static_cast<int>(m.height);
  const int cols = static_cast<int>(m.width);
  const auto make = [&](int type) { return alloc ? alloc(rows, cols, type) : cv::Mat(rows, cols, type); };
  DecodedImage out;
  out.encoding = m.encoding;
  out.metres_per_unit = role == PixelRole::Depth ? enc.metres_per_unit : 0;
  if (role == PixelRole::Color && enc.to_bgr >= 0) {
    // Colour is 8-bit (any step is a whole number of channels, nothing to swap): cvtColor reads the
    // message's rows in place.
    const cv::Mat message(rows, cols, enc.cv_type, const_cast<uint8_t*>(m.data), m.step);
    out.pixels = make(CV_8UC3);
    cv::cvtColor(message, out.pixels, enc.to_bgr);
    return out;
  }
  out.pixels = make(enc.cv_type);
  // Row by row: a step need not be a multiple of the pixel size, nor the payload aligned for it.
  for (int y = 0; y < rows; ++y) std::memcpy(out.pixels.ptr<uint8_t>(y), m.data + size_t(y) * m.step, row_bytes);
  if (m.is_bigendian != 0 && enc.channel_bytes > 1) detail::swap_bytes_inplace(out.pixels, enc.channel_bytes);
  return out;
}

DecodedImage image_to_pixels(const Image& m, PixelRole role, size_t max_pixels, const std::string& what) {
  ImageView v;
  v.height = m.height;
  v.width = m.width;
  v.encoding = m.encoding;
  v.is_bigendian = m.is_bigendian;
  v.step = m.step;
  v.data = m.data.data();
  v.size = m.data.size();
  return image_to_pixels(v, role, max_pixels, what);
}

Image pixels_to_image(const cv::Mat& pixels, const Header& header) {
  const char* encoding = nullptr;
  switch (pixels.type()) {
    case CV_32FC1:
      encoding = "32FC1";
      break;
    case CV_16UC1:
      encoding = "16UC1";
      break;
    case CV_8UC1:
      encoding = "mono8";
      break;
    case CV_8UC3:
      encoding = "bgr8";
      break;
    default:
      throw Error(Failure::Internal, "an Image message holds 32FC1, 16UC1, mono8 or bgr8 pixels, not OpenCV type " +
                                         std::to_string(pixels.type()));
  }
  Image m;
  m.header = header;
  m.height = static_cast<uint32_t>(pixels.rows);
  m.width = static_cast<uint32_t>(pixels.cols);
  m.encoding = encoding;
  m.is_bigendian = 0;
  const size_t row_bytes = pixels.cols * pixels.elemSize();
  m.step = static_cast<uint32_t>(row_bytes);
  m.data.resize(row_bytes * pixels.rows);
  for (int y = 0; y < pixels.rows; ++y) std::memcpy(m.data.data() + y * row_bytes, pixels.ptr<uint8_t>(y), row_bytes);
  return m;
}

}  // namespace depthmask::ros
