// The CDR codec of the ROS 2 message types (ros_msgs.h, cdr.h) and their ros2msg definitions: round
// trips, the byte layout of a hand-built Image in both byte orders, and payloads that are not what
// they claim (no NUL, a length past the end, truncated, trailing bytes, a 10^10-pixel Image).
#include <gtest/gtest.h>

#include <cstring>
#include <filesystem>
#include <map>
#include <regex>
#include <set>
#include <sstream>

#include "depthmask/cdr.h"
#include "depthmask/errors.h"
#include "depthmask/ros_image.h"
#include "depthmask/ros_msgs.h"
#include "test_support.h"

namespace dm = depthmask;
namespace ros = depthmask::ros;
using dmtest::Contains;
using dmtest::message_of;

namespace {

ros::Header sample_header() {
  ros::Header h;
  h.stamp = {1700000000, 123456789};
  h.frame_id = "camera_depth_optical_frame";
  return h;
}

ros::Image sample_image() {
  ros::Image m;
  m.header = sample_header();
  m.height = 3;
  m.width = 5;
  m.encoding = "16UC1";
  m.step = 12;  // 10 bytes of pixels and 2 of padding per row
  for (int i = 0; i < 36; ++i) m.data.push_back(static_cast<uint8_t>(i * 7));
  return m;
}

// Bytes written field by field, in either byte order: the layout a test states by hand.
struct Bytes {
  bool big;
  std::vector<uint8_t> b;
  explicit Bytes(bool big_endian) : big(big_endian), b{0, uint8_t(big_endian ? 0 : 1), 0, 0} {}
  void pad(size_t n) {
    while ((b.size() - 4) % n != 0) b.push_back(0);
  }
  void u32(uint32_t v) {
    pad(4);
    for (int i = 0; i < 4; ++i) b.push_back(uint8_t(v >> (big ? 24 - 8 * i : 8 * i)));
  }
  void str(const std::string& s) {
    u32(uint32_t(s.size() + 1));
    b.insert(b.end(), s.begin(), s.end());
    b.push_back(0);
  }
};

// An Image {stamp 0x01020304.0x0A0B0C0D, "cam", 2x1 mono8, step 2, data {7, 9}} in one byte order.
std::vector<uint8_t> hand_built_image(bool big) {
  Bytes w(big);
  w.u32(0x01020304);  // stamp.sec at byte 4
  w.u32(0x0A0B0C0D);  // stamp.nanosec at 8
  w.str("cam");       // frame_id's length at 12, its bytes at 16..19
  w.u32(1);           // height at 20
  w.u32(2);           // width at 24
  w.str("mono8");     // encoding's length at 28, its bytes at 32..37
  w.b.push_back(0);   // is_bigendian at 38
  w.u32(2);           // step at 40 (after one byte of padding)
  w.u32(2);           // data's length at 44
  w.b.push_back(7);   // data at 48
  w.b.push_back(9);
  return w.b;
}

}  // namespace

TEST(RosMsgLayout, AnImageIsLaidOutAsCdrSays) {
  const std::vector<uint8_t> le = hand_built_image(false);
  ASSERT_EQ(le.size(), 50u);
  EXPECT_EQ(le[12], 4);  // "cam" and its NUL
  EXPECT_EQ(le[38], 0);  // is_bigendian
  EXPECT_EQ(le[40], 2);  // step, aligned to 4
  EXPECT_EQ(le[48], 7);  // data
  ros::Image m;
  m.header.stamp = {0x01020304, 0x0A0B0C0D};
  m.header.frame_id = "cam";
  m.height = 1;
  m.width = 2;
  m.encoding = "mono8";
  m.step = 2;
  m.data = {7, 9};
  EXPECT_EQ(ros::encode(m), le);  // the writer writes exactly this layout
}

TEST(RosMsgLayout, BothByteOrdersDecodeToTheSameImage) {
  for (bool big : {false, true}) {
    const std::vector<uint8_t> bytes = hand_built_image(big);
    const ros::Image m = ros::decode_image(bytes.data(), bytes.size(), "test");
    EXPECT_EQ(m.header.stamp.sec, 0x01020304) << big;
    EXPECT_EQ(m.header.stamp.nanosec, 0x0A0B0C0Du) << big;
    EXPECT_EQ(m.header.frame_id, "cam");
    EXPECT_EQ(m.height, 1u);
    EXPECT_EQ(m.width, 2u);
    EXPECT_EQ(m.encoding, "mono8");
    EXPECT_EQ(m.step, 2u);
    EXPECT_EQ(m.data, (std::vector<uint8_t>{7, 9}));
    const ros::Header h = ros::decode_header(bytes.data(), bytes.size(), "test");
    EXPECT_EQ(h.stamp.nanoseconds(), int64_t{0x01020304} * 1000000000 + 0x0A0B0C0D);
  }
}

TEST(RosMsgRoundTrip, Image) {
  const ros::Image a = sample_image();
  const std::vector<uint8_t> bytes = ros::encode(a);
  const ros::Image b = ros::decode_image(bytes.data(), bytes.size(), "test");
  EXPECT_EQ(b.header.stamp.sec, a.header.stamp.sec);
  EXPECT_EQ(b.header.stamp.nanosec, a.header.stamp.nanosec);
  EXPECT_EQ(b.header.frame_id, a.header.frame_id);
  EXPECT_EQ(b.height, a.height);
  EXPECT_EQ(b.width, a.width);
  EXPECT_EQ(b.encoding, a.encoding);
  EXPECT_EQ(b.is_bigendian, a.is_bigendian);
  EXPECT_EQ(b.step, a.step);
  EXPECT_EQ(b.data, a.data);
}

TEST(RosMsgRoundTrip, CompressedImage) {
  ros::CompressedImage a;
  a.header = sample_header();
  a.format = "16UC1; compressedDepth rvl";
  a.data = {1, 2, 3, 4, 5};
  const std::vector<uint8_t> bytes = ros::encode(a);
  const ros::CompressedImage b = ros::decode_compressed_image(bytes.data(), bytes.size(), "test");
  EXPECT_EQ(b.header.frame_id, a.header.frame_id);
  EXPECT_EQ(b.header.stamp.nanoseconds(), a.header.stamp.nanoseconds());
  EXPECT_EQ(b.format, a.format);
  EXPECT_EQ(b.data, a.data);
}

TEST(RosMsgRoundTrip, CameraInfoKeepsDKRP) {
  ros::CameraInfo a;
  a.header = sample_header();
  a.height = 480;
  a.width = 640;
  a.distortion_model = "plumb_bob";
  a.d = {0.1, -0.2, 0.001, -0.002, 0.05};
  for (int i = 0; i < 9; ++i) a.k[i] = 100.5 + i;
  for (int i = 0; i < 9; ++i) a.r[i] = i % 4 == 0 ? 1.0 : 0.0;
  for (int i = 0; i < 12; ++i) a.p[i] = -3.25 * i;
  a.binning_x = 2;
  a.binning_y = 3;
  a.roi = {10, 20, 30, 40, true};
  const std::vector<uint8_t> bytes = ros::encode(a);
  const ros::CameraInfo b = ros::decode_camera_info(bytes.data(), bytes.size(), "test");
  EXPECT_EQ(b.header.frame_id, a.header.frame_id);
  EXPECT_EQ(b.height, 480u);
  EXPECT_EQ(b.width, 640u);
  EXPECT_EQ(b.distortion_model, "plumb_bob");
  EXPECT_EQ(b.d, a.d);
  EXPECT_EQ(0, std::memcmp(a.k, b.k, sizeof a.k));
  EXPECT_EQ(0, std::memcmp(a.r, b.r, sizeof a.r));
  EXPECT_EQ(0, std::memcmp(a.p, b.p, sizeof a.p));
  EXPECT_EQ(b.binning_x, 2u);
  EXPECT_EQ(b.binning_y, 3u);
  EXPECT_EQ(b.roi.x_offset, 10u);
  EXPECT_EQ(b.roi.y_offset, 20u);
  EXPECT_EQ(b.roi.height, 30u);
  EXPECT_EQ(b.roi.width, 40u);
  EXPECT_TRUE(b.roi.do_rectify);
}

TEST(RosMsgRoundTrip, CameraInfoDoublesAreAlignedToEight) {
  ros::CameraInfo a;
  a.header.frame_id = "ab";  // the header ends at byte 19: height at 20, width 24, distortion_model "" 28..32
  a.d = {1.5};
  const std::vector<uint8_t> bytes = ros::encode(a);
  // d's count at 36, its first double at 44 (8-aligned relative to the byte after the 4-byte header)
  uint32_t count = 0;
  std::memcpy(&count, bytes.data() + 36, 4);
  EXPECT_EQ(count, 1u);
  double d0 = 0;
  std::memcpy(&d0, bytes.data() + 44, 8);
  EXPECT_EQ(d0, 1.5);
}

TEST(RosMsgRoundTrip, PointCloud2) {
  ros::PointCloud2 a;
  a.header = sample_header();
  a.height = 1;
  a.width = 2;
  a.fields = {{"x", 0, 7, 1}, {"y", 4, 7, 1}, {"z", 8, 7, 1}};
  a.point_step = 12;
  a.row_step = 24;
  a.data.assign(24, 0x5A);
  a.is_dense = true;
  const std::vector<uint8_t> bytes = ros::encode(a);
  const ros::PointCloud2 b = ros::decode_point_cloud2(bytes.data(), bytes.size(), "test");
  ASSERT_EQ(b.fields.size(), 3u);
  EXPECT_EQ(b.fields[2].name, "z");
  EXPECT_EQ(b.fields[2].offset, 8u);
  EXPECT_EQ(b.fields[2].datatype, 7);
  EXPECT_EQ(b.fields[2].count, 1u);
  EXPECT_EQ(b.point_step, 12u);
  EXPECT_EQ(b.row_step, 24u);
  EXPECT_EQ(b.data, a.data);
  EXPECT_TRUE(b.is_dense);
  EXPECT_FALSE(b.is_bigendian);
}

TEST(RosMsgTime, FromNanosecondsKeepsNanosecInRange) {
  const ros::Time t = ros::Time::from_nanoseconds(-1700000000);  // -1.7 s
  EXPECT_EQ(t.sec, -2);
  EXPECT_EQ(t.nanosec, 300000000u);
  EXPECT_EQ(t.nanoseconds(), -1700000000);
  const ros::Time u = ros::Time::from_nanoseconds(1700000000123456789);
  EXPECT_EQ(u.sec, 1700000000);
  EXPECT_EQ(u.nanosec, 123456789u);
  EXPECT_EQ(ros::Time::from_nanoseconds(-1000000000).sec, -1);
  EXPECT_EQ(ros::Time::from_nanoseconds(-1000000000).nanosec, 0u);
}

TEST(CdrErrors, AStringWithoutItsNulIsRefusedAtItsByte) {
  std::vector<uint8_t> bytes = hand_built_image(false);
  bytes[19] = 'x';  // the NUL of "cam"
  const std::string msg =
      message_of<dm::InputError>([&] { (void)ros::decode_image(bytes.data(), bytes.size(), "msg 3"); });
  EXPECT_TRUE(Contains(msg, "msg 3: a string does not end with its NUL (at byte 19 of 50)")) << msg;
}

TEST(CdrErrors, ALengthPastTheEndIsRefused) {
  std::vector<uint8_t> bytes = hand_built_image(false);
  bytes[44] = 200;  // data's length
  const std::string msg = message_of<dm::InputError>([&] { (void)ros::decode_image(bytes.data(), bytes.size(), "m"); });
  EXPECT_TRUE(Contains(msg, "runs past the end")) << msg;
  EXPECT_TRUE(Contains(msg, "at byte 48")) << msg;
  bytes = hand_built_image(false);
  bytes[12] = 0xFF;  // frame_id's length
  const std::string s = message_of<dm::InputError>([&] { (void)ros::decode_image(bytes.data(), bytes.size(), "m"); });
  EXPECT_TRUE(Contains(s, "a string's length 255 runs past the end (at byte 16")) << s;
}

TEST(CdrErrors, EveryTruncationIsAnInputErrorWithItsOffset) {
  const std::vector<uint8_t> full = ros::encode(sample_image());
  for (size_t n = 0; n < full.size(); ++n) {
    const std::string msg = message_of<dm::InputError>([&] { (void)ros::decode_image(full.data(), n, "cut"); });
    EXPECT_TRUE(Contains(msg, "at byte")) << n << ": " << msg;
  }
}

TEST(CdrErrors, UpToThreeBytesOfPaddingPassButMoreIsNotTheMessage) {
  std::vector<uint8_t> bytes = hand_built_image(false);  // 50 bytes
  bytes.resize(52, 0);                                   // padded to 4
  EXPECT_NO_THROW((void)ros::decode_image(bytes.data(), bytes.size(), "m"));
  bytes.resize(58, 0);
  const std::string msg = message_of<dm::InputError>([&] { (void)ros::decode_image(bytes.data(), bytes.size(), "m"); });
  EXPECT_TRUE(Contains(
      msg,
      "8 bytes follow the end of the Image message (a payload of another type, or a corrupt one) (at byte 50 of 58)"))
      << msg;
}

TEST(CdrErrors, AHugeImageIsRefusedBeforeAnyAllocation) {
  std::vector<uint8_t> bytes = hand_built_image(false);
  const uint32_t side = 100000;  // 10^10 pixels
  std::memcpy(bytes.data() + 20, &side, 4);
  std::memcpy(bytes.data() + 24, &side, 4);
  const std::string msg = message_of<dm::InputError>([&] { (void)ros::decode_image(bytes.data(), bytes.size(), "m"); });
  EXPECT_TRUE(Contains(msg, "100000x100000 pixels claims more than 2^31 pixels (at byte 20")) << msg;
}

TEST(CdrErrors, DataShorterThanItsRowsIsRefused) {
  std::vector<uint8_t> bytes = hand_built_image(false);
  bytes[20] = 3;  // height 3 rows of step 2: 6 bytes, the data has 2
  const std::string msg = message_of<dm::InputError>([&] { (void)ros::decode_image(bytes.data(), bytes.size(), "m"); });
  EXPECT_TRUE(Contains(msg, "3 rows of 2 bytes holds only 2 bytes of data (at byte 44")) << msg;
}

TEST(CdrErrors, AnUnknownEncapsulationIsRefused) {
  std::vector<uint8_t> bytes = hand_built_image(false);
  bytes[1] = 0x07;  // XCDR2 delimited: not what ROS 2 messages use
  const std::string msg =
      message_of<dm::InputError>([&] { (void)ros::decode_header(bytes.data(), bytes.size(), "m"); });
  EXPECT_TRUE(Contains(msg, "not plain CDR")) << msg;
}

TEST(CdrErrors, AnotherTypesPayloadIsNotACameraInfo) {
  const std::vector<uint8_t> bytes = ros::encode(sample_image());
  EXPECT_THROW((void)ros::decode_camera_info(bytes.data(), bytes.size(), "m"), dm::InputError);
  EXPECT_THROW((void)ros::decode_point_cloud2(bytes.data(), bytes.size(), "m"), dm::InputError);
}

TEST(RosMsgDefinition, ImageIsTheMsgThenItsDependenciesAsRosbag2WritesThem) {
  const std::string eq(80, '=');
  EXPECT_EQ(ros::message_definition(ros::kImageType),
            "std_msgs/Header header\nuint32 height\nuint32 width\nstring encoding\nuint8 is_bigendian\n"
            "uint32 step\nuint8[] data\n\n" +
                eq + "\nMSG: std_msgs/Header\nbuiltin_interfaces/Time stamp\nstring frame_id\n\n" + eq +
                "\nMSG: builtin_interfaces/Time\nint32 sec\nuint32 nanosec\n");
  EXPECT_EQ(ros::message_definition("sensor_msgs/msg/Imu"), "");
}

// Every complex field type of every section resolves to a MSG: section as Foxglove's parser resolves
// it (a section whose name ends with the field's type, "/Type" for a bare one), and every line is a
// ROS 2 field or constant.
TEST(RosMsgDefinition, EveryFieldTypeResolvesToASection) {
  const std::regex field(R"(^([a-zA-Z0-9_/]+)(\[\d*\])? ([a-z][a-z0-9_]*|[A-Z][A-Z0-9_]* = \d+)$)");
  const std::set<std::string> builtin = {"bool", "uint8", "int32", "uint32", "float64", "string"};
  for (const char* type : {ros::kImageType, ros::kCompressedImageType, ros::kCameraInfoType, ros::kPointCloud2Type}) {
    const std::string def = ros::message_definition(type);
    ASSERT_FALSE(def.empty()) << type;
    std::vector<std::string> sections, used;
    std::istringstream in(def);
    for (std::string line; std::getline(in, line);) {
      std::smatch m;
      if (line.empty() || line == std::string(80, '=')) continue;
      if (line.rfind("MSG: ", 0) == 0) {
        sections.push_back(line.substr(5));
      } else {
        ASSERT_TRUE(std::regex_match(line, m, field)) << type << ": '" << line << "'";
        if (builtin.count(m[1]) == 0) used.push_back(m[1]);
      }
    }
    for (const std::string& u : used) {
      const std::string end = u.find('/') == std::string::npos ? "/" + u : u;
      bool found = false;
      for (const std::string& s : sections)
        found = found || (s.size() >= end.size() && s.compare(s.size() - end.size(), end.size(), end) == 0);
      EXPECT_TRUE(found) << type << ": " << u;
    }
  }
  const std::string info = ros::message_definition(ros::kCameraInfoType);
  EXPECT_TRUE(Contains(info, "float64[] d\nfloat64[9] k\nfloat64[9] r\nfloat64[12] p\n"));
  EXPECT_LT(info.find("MSG: sensor_msgs/RegionOfInterest"), info.find("MSG: std_msgs/Header"));
  const std::string cloud = ros::message_definition(ros::kPointCloud2Type);
  EXPECT_TRUE(Contains(cloud, "MSG: sensor_msgs/PointField\nuint8 INT8 = 1\n"));
}

namespace {

// The seeds of fuzz/fuzz_cdr.cpp: the type byte (low nibble: 0 Image, 1 CompressedImage, 2
// CameraInfo, 3 PointCloud2; high nibble: the role) and a payload of this encoder.
std::map<std::string, std::vector<uint8_t>> cdr_seeds() {
  std::map<std::string, std::vector<uint8_t>> seeds;
  const auto add = [&](const std::string& name, uint8_t type, const std::vector<uint8_t>& payload) {
    std::vector<uint8_t> b{type};
    b.insert(b.end(), payload.begin(), payload.end());
    seeds[name] = b;
  };
  ros::Image img;
  img.header = sample_header();
  img.height = img.width = 4;
  img.encoding = "16UC1";
  img.step = 8;
  for (int i = 0; i < 32; ++i) img.data.push_back(static_cast<uint8_t>(i % 3 == 0 ? 0 : i));
  add("image_16uc1_4x4", 0x00, ros::encode(img));
  ros::CameraInfo info;
  info.header = sample_header();
  info.width = 640;
  info.height = 480;
  info.distortion_model = "plumb_bob";
  info.d = {0, 0, 0, 0, 0};
  info.k[0] = info.k[4] = 525;
  info.k[2] = 319.5;
  info.k[5] = 239.5;
  info.k[8] = 1;
  add("camera_info", 0x02, ros::encode(info));
  ros::CompressedImage rvl;
  rvl.header = sample_header();
  rvl.format = "16UC1; compressedDepth rvl";
  rvl.data.assign(12, 0);
  const uint32_t side = 4;
  for (int i = 0; i < 2; ++i) rvl.data.insert(rvl.data.end(), {uint8_t(side), 0, 0, 0});
  const cv::Mat depth = (cv::Mat_<uint16_t>(4, 4) << 0, 0, 5, 6, 900, 0, 0, 0, 1, 2, 3, 0, 65535, 0, 0, 7);
  const std::vector<uint8_t> words = ros::rvl_encode(depth);
  rvl.data.insert(rvl.data.end(), words.begin(), words.end());
  add("compressed_depth_rvl", 0x01, ros::encode(rvl));
  cv::Mat metres(4, 4, CV_32FC1, cv::Scalar(1.5f));
  metres.at<float>(1, 2) = 0;
  add("compressed_depth_png", 0x01, ros::encode(ros::depth_to_compressed_depth(metres, sample_header())));
  ros::Image rgb = ros::pixels_to_image(cv::Mat(2, 3, CV_8UC3, cv::Scalar(1, 2, 3)), sample_header());
  rgb.encoding = "rgb8";
  add("image_rgb8_colour", 0x20, ros::encode(rgb));
  ros::PointCloud2 cloud;
  cloud.header = sample_header();
  cloud.width = 1;
  cloud.fields = {{"x", 0, 7, 1}, {"y", 4, 7, 1}, {"z", 8, 7, 1}};
  cloud.point_step = cloud.row_step = 12;
  cloud.data.assign(12, 0);
  add("point_cloud2", 0x03, ros::encode(cloud));
  return seeds;
}

}  // namespace

// Writes fuzz/corpus/cdr/: ./depthmask_unit_tests --gtest_also_run_disabled_tests
// --gtest_filter='*WriteFuzzSeeds' in a source checkout (DEPTHMASK_SOURCE_DIR).
TEST(RosMsgSeeds, DISABLED_WriteFuzzSeeds) {
  const auto dir = dmtest::source_dir() / "fuzz" / "corpus" / "cdr";
  std::filesystem::create_directories(dir);
  for (const auto& [name, bytes] : cdr_seeds()) dmtest::write_bytes(dir / name, bytes);
}

TEST(RosMsgSeeds, TheCommittedSeedsAreThisEncodersAndDecode) {
  const auto dir = dmtest::source_dir() / "fuzz" / "corpus" / "cdr";
  for (const auto& [name, bytes] : cdr_seeds()) {
    ASSERT_TRUE(std::filesystem::exists(dir / name)) << name;
    EXPECT_EQ(dmtest::read_bytes(dir / name), bytes) << name;
    EXPECT_LT(bytes.size(), 2048u) << name;
    const uint8_t* p = bytes.data() + 1;
    const size_t n = bytes.size() - 1;
    const auto role = static_cast<ros::PixelRole>(bytes[0] >> 4);
    switch (bytes[0] & 0x0F) {
      case 0:
        EXPECT_NO_THROW((void)ros::image_to_pixels(ros::decode_image(p, n, name), role, 64, name)) << name;
        break;
      case 1:
        EXPECT_NO_THROW((void)ros::compressed_to_pixels(ros::decode_compressed_image(p, n, name), role, 64, name))
            << name;
        break;
      case 2:
        EXPECT_NO_THROW((void)ros::decode_camera_info(p, n, name)) << name;
        break;
      default:
        EXPECT_NO_THROW((void)ros::decode_point_cloud2(p, n, name)) << name;
    }
  }
}
