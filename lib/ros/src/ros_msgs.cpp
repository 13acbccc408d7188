// The CDR form of the message types of ros_msgs.h: one reader and one writer per type, field by field in
// the order of its .msg file (ros_msg_definitions.cpp), so that decoding and encoding cannot drift apart.
#include "depthmask/ros_msgs.h"

#include <limits>

#include "depthmask/cdr.h"
#include "depthmask/errors.h"

namespace depthmask::ros {

const char* const kImageType = "sensor_msgs/msg/Image";
const char* const kCompressedImageType = "sensor_msgs/msg/CompressedImage";
const char* const kCameraInfoType = "sensor_msgs/msg/CameraInfo";
const char* const kPointCloud2Type = "sensor_msgs/msg/PointCloud2";

Time Time::from_nanoseconds(int64_t ns) {
  constexpr int64_t kPerSecond = 1000000000LL;
  int64_t sec = ns / kPerSecond;
  int64_t rem = ns % kPerSecond;
  if (rem < 0) {  // -1.7 s is {sec: -2, nanosec: 3e8}: nanosec is always in [0, 1e9)
    sec -= 1;
    rem += kPerSecond;
  }
  // builtin_interfaces' sec is an int32: stamps beyond 2038 (or before 1901) saturate.
  Time t;
  if (sec > std::numeric_limits<int32_t>::max()) {
    t.sec = std::numeric_limits<int32_t>::max();
    t.nanosec = kPerSecond - 1;
  } else if (sec < std::numeric_limits<int32_t>::min()) {
    t.sec = std::numeric_limits<int32_t>::min();
  } else {
    t.sec = static_cast<int32_t>(sec);
    t.nanosec = static_cast<uint32_t>(rem);
  }
  return t;
}

namespace {

// Payloads are often padded to a multiple of 4 bytes (Fast DDS and the rosbag2 writers do): up to 3
// bytes may follow the last field, more are not this message.
void expect_end(const CdrReader& r, const char* type) {
  if (r.remaining() > 3) {
    r.fail(std::to_string(r.remaining()) + " bytes follow the end of the " + type +
           " message (a payload of another type, or a corrupt one)");
  }
}

Header read_header(CdrReader& r) {
  Header h;
  h.stamp.sec = r.i32();
  h.stamp.nanosec = r.u32();
  h.frame_id = r.string();
  return h;
}

void write_header(CdrWriter& w, const Header& h) {
  w.i32(h.stamp.sec);
  w.u32(h.stamp.nanosec);
  w.string(h.frame_id);
}

template <size_t N>
void read_doubles(CdrReader& r, double (&out)[N]) {
  for (double& v : out) v = r.f64();
}

template <size_t N>
void write_doubles(CdrWriter& w, const double (&in)[N]) {
  for (double v : in) w.f64(v);
}

std::vector<uint8_t> copy_bytes(const std::pair<const uint8_t*, size_t>& view) {
  return std::vector<uint8_t>(view.first, view.first + view.second);
}

}  // namespace

Header decode_header(const uint8_t* data, size_t size, const std::string& what) {
  CdrReader r(data, size, what);
  return read_header(r);
}

ImageView decode_image_view(const uint8_t* data, size_t size, const std::string& what) {
  CdrReader r(data, size, what);
  ImageView m;
  m.header = read_header(r);
  const size_t dims_at = r.offset();
  m.height = r.u32();
  m.width = r.u32();
  // A bound on what an Image may claim, checked before anything is sized by it.
  constexpr uint64_t kMaxImagePixels = uint64_t{1} << 31;
  if (uint64_t{m.height} * m.width > kMaxImagePixels) {
    r.fail_at(dims_at, "an Image of " + std::to_string(m.width) + "x" + std::to_string(m.height) +
                           " pixels claims more than 2^31 pixels");
  }
  m.encoding = r.string();
  m.is_bigendian = r.u8();
  m.step = r.u32();
  const size_t data_at = r.offset();
  const auto bytes = r.byte_sequence();
  if (uint64_t{m.height} * m.step > bytes.second) {
    r.fail_at(data_at, "an Image of " + std::to_string(m.height) + " rows of " + std::to_string(m.step) +
                           " bytes holds only " + std::to_string(bytes.second) + " bytes of data");
  }
  m.data = bytes.first;
  m.size = bytes.second;
  expect_end(r, "Image");
  return m;
}

Image decode_image(const uint8_t* data, size_t size, const std::string& what) {
  ImageView v = decode_image_view(data, size, what);
  Image m;
  m.header = std::move(v.header);
  m.height = v.height;
  m.width = v.width;
  m.encoding = std::move(v.encoding);
  m.is_bigendian = v.is_bigendian;
  m.step = v.step;
  m.data.assign(v.data, v.data + v.size);
  return m;
}

CompressedImage decode_compressed_image(const uint8_t* data, size_t size, const std::string& what) {
  CdrReader r(data, size, what);
  CompressedImage m;
  m.header = read_header(r);
  m.format = r.string();
  m.data = copy_bytes(r.byte_sequence());
  expect_end(r, "CompressedImage");
  return m;
}

CameraInfo decode_camera_info(const uint8_t* data, size_t size, const std::string& what) {
  CdrReader r(data, size, what);
  CameraInfo m;
  m.header = read_header(r);
  m.height = r.u32();
  m.width = r.u32();
  m.distortion_model = r.string();
  const uint32_t nd = r.sequence_length(sizeof(double));
  m.d.resize(nd);
  for (double& v : m.d) v = r.f64();
  read_doubles(r, m.k);
  read_doubles(r, m.r);
  read_doubles(r, m.p);
  m.binning_x = r.u32();
  m.binning_y = r.u32();
  m.roi.x_offset = r.u32();
  m.roi.y_offset = r.u32();
  m.roi.height = r.u32();
  m.roi.width = r.u32();
  m.roi.do_rectify = r.u8() != 0;
  expect_end(r, "CameraInfo");
  return m;
}

PointCloud2 decode_point_cloud2(const uint8_t* data, size_t size, const std::string& what) {
  CdrReader r(data, size, what);
  PointCloud2 m;
  m.header = read_header(r);
  m.height = r.u32();
  m.width = r.u32();
  // A PointField is at least 14 bytes: a string of one NUL (5), offset (4), datatype (1), count (4).
  const uint32_t nf = r.sequence_length(14);
  m.fields.resize(nf);
  for (PointField& f : m.fields) {
    f.name = r.string();
    f.offset = r.u32();
    f.datatype = r.u8();
    f.count = r.u32();
  }
  m.is_bigendian = r.u8() != 0;
  m.point_step = r.u32();
  m.row_step = r.u32();
  m.data = copy_bytes(r.byte_sequence());
  m.is_dense = r.u8() != 0;
  expect_end(r, "PointCloud2");
  return m;
}

std::vector<uint8_t> encode(const Image& m) {
  CdrWriter w;
  w.reserve(64 + m.header.frame_id.size() + m.encoding.size() + m.data.size());
  write_header(w, m.header);
  w.u32(m.height);
  w.u32(m.width);
  w.string(m.encoding);
  w.u8(m.is_bigendian);
  w.u32(m.step);
  w.byte_sequence(m.data.data(), m.data.size());
  return w.take();
}

std::vector<uint8_t> encode(const CompressedImage& m) {
  CdrWriter w;
  w.reserve(48 + m.header.frame_id.size() + m.format.size() + m.data.size());
  write_header(w, m.header);
  w.string(m.format);
  w.byte_sequence(m.data.data(), m.data.size());
  return w.take();
}

std::vector<uint8_t> encode(const CameraInfo& m) {
  CdrWriter w;
  write_header(w, m.header);
  w.u32(m.height);
  w.u32(m.width);
  w.string(m.distortion_model);
  w.u32(static_cast<uint32_t>(m.d.size()));
  for (double v : m.d) w.f64(v);
  write_doubles(w, m.k);
  write_doubles(w, m.r);
  write_doubles(w, m.p);
  w.u32(m.binning_x);
  w.u32(m.binning_y);
  w.u32(m.roi.x_offset);
  w.u32(m.roi.y_offset);
  w.u32(m.roi.height);
  w.u32(m.roi.width);
  w.u8(m.roi.do_rectify ? 1 : 0);
  return w.take();
}

std::vector<uint8_t> encode(const PointCloud2& m) {
  CdrWriter w;
  w.reserve(64 + m.header.frame_id.size() + 32 * m.fields.size() + m.data.size());
  write_header(w, m.header);
  w.u32(m.height);
  w.u32(m.width);
  w.u32(static_cast<uint32_t>(m.fields.size()));
  for (const PointField& f : m.fields) {
    w.string(f.name);
    w.u32(f.offset);
    w.u8(f.datatype);
    w.u32(f.count);
  }
  w.u8(m.is_bigendian ? 1 : 0);
  w.u32(m.point_step);
  w.u32(m.row_step);
  w.byte_sequence(m.data.data(), m.data.size());
  w.u8(m.is_dense ? 1 : 0);
  return w.take();
}

}  // namespace depthmask::ros
