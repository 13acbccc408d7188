// The ROS 2 message types depthmask reads and writes, their CDR form (one codec, shared by the bag
// reader, the bag writer, the live server and the DDS publisher) and their `ros2msg` definitions (the
// schema text rosbag2 and Foxglove store: the type's .msg, then each dependency after a line of 80
// '=' and `MSG: pkg/Type`).
#pragma once

#include <cstdint>
#include <string>
#include <vector>

namespace depthmask::ros {

/// builtin_interfaces/msg/Time.
struct Time {
  int32_t sec = 0;
  uint32_t nanosec = 0;
  int64_t nanoseconds() const { return int64_t(sec) * 1000000000LL + nanosec; }
  static Time from_nanoseconds(int64_t ns);
};

/// std_msgs/msg/Header.
struct Header {
  Time stamp;
  std::string frame_id;
};

/// sensor_msgs/msg/Image. `data` is `step * height` bytes (rows may be padded: step >= width * pixel size).
struct Image {
  Header header;
  uint32_t height = 0;
  uint32_t width = 0;
  std::string encoding;  ///< "16UC1", "32FC1", "mono8", "mono16", "8UC1", "rgb8", "bgr8", "rgba8", "bgra8", ...
  uint8_t is_bigendian = 0;
  uint32_t step = 0;
  std::vector<uint8_t> data;
};

/// sensor_msgs/msg/Image whose pixel bytes stay where they were decoded from: `data` points into the
/// payload (valid while it is), so that a reader copies them once, straight to where they go.
struct ImageView {
  Header header;
  uint32_t height = 0;
  uint32_t width = 0;
  std::string encoding;
  uint8_t is_bigendian = 0;
  uint32_t step = 0;
  const uint8_t* data = nullptr;
  size_t size = 0;  ///< at least step * height (checked by decode_image_view)
};

/// sensor_msgs/msg/CompressedImage. `format` is "png", "jpeg", or image_transport's compressedDepth
/// ("16UC1; compressedDepth png", "32FC1; compressedDepth png", "...; compressedDepth rvl").
struct CompressedImage {
  Header header;
  std::string format;
  std::vector<uint8_t> data;
};

/// sensor_msgs/msg/RegionOfInterest.
struct RegionOfInterest {
  uint32_t x_offset = 0, y_offset = 0, height = 0, width = 0;
  bool do_rectify = false;
};

/// sensor_msgs/msg/CameraInfo.
struct CameraInfo {
  Header header;
  uint32_t height = 0;
  uint32_t width = 0;
  std::string distortion_model;  ///< "plumb_bob", "rational_polynomial", "equidistant", or empty
  std::vector<double> d;
  double k[9] = {};
  double r[9] = {};
  double p[12] = {};
  uint32_t binning_x = 0, binning_y = 0;
  RegionOfInterest roi;
};

/// sensor_msgs/msg/PointField.
struct PointField {
  std::string name;
  uint32_t offset = 0;
  uint8_t datatype = 0;  ///< 7 = FLOAT32
  uint32_t count = 1;
};

/// sensor_msgs/msg/PointCloud2.
struct PointCloud2 {
  Header header;
  uint32_t height = 1, width = 0;
  std::vector<PointField> fields;
  bool is_bigendian = false;
  uint32_t point_step = 0, row_step = 0;
  std::vector<uint8_t> data;
  bool is_dense = false;
};

// Decoding: the whole payload must be the message (trailing bytes beyond alignment padding are an
// error); `what` names the payload in errors (InputError with the byte offset). decode_header reads
// only the header, for listing a bag without copying pixels.
Header decode_header(const uint8_t* data, size_t size, const std::string& what);
Image decode_image(const uint8_t* data, size_t size, const std::string& what);
ImageView decode_image_view(const uint8_t* data, size_t size, const std::string& what);
CompressedImage decode_compressed_image(const uint8_t* data, size_t size, const std::string& what);
CameraInfo decode_camera_info(const uint8_t* data, size_t size, const std::string& what);
PointCloud2 decode_point_cloud2(const uint8_t* data, size_t size, const std::string& what);

std::vector<uint8_t> encode(const Image& m);
std::vector<uint8_t> encode(const CompressedImage& m);
std::vector<uint8_t> encode(const CameraInfo& m);
std::vector<uint8_t> encode(const PointCloud2& m);

/// The ros2msg schema text of "sensor_msgs/msg/Image", "sensor_msgs/msg/CompressedImage",
/// "sensor_msgs/msg/CameraInfo", "sensor_msgs/msg/PointCloud2" (with their dependencies, as rosbag2
/// writes them); empty for another name.
const std::string& message_definition(const std::string& type);

/// The four types above, named as ROS writes them ("sensor_msgs/msg/Image").
extern const char* const kImageType;
extern const char* const kCompressedImageType;
extern const char* const kCameraInfoType;
extern const char* const kPointCloud2Type;

}  // namespace depthmask::ros
