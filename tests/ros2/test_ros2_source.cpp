// The ros2:// source's own rules over CycloneDDS on loopback (one process: a raw-CDR writer beside the
// subscriber): refused messages (malformed CDR, a wrong encoding, data shorter than step * height, a
// 10^10-pixel header) are counted and the source goes on; pairing by header.stamp within
// input.max_time_diff waits for a late mask up to live.pair_wait and drops a depth frame whose mask
// never comes; several mask topics unite; the raw-CDR path carries bytes unchanged; a writer knows
// whether anyone listens.
#include <gtest/gtest.h>

#include <atomic>
#include <chrono>
#include <cmath>
#include <limits>
#include <thread>

#include <unistd.h>

#include "depthmask/config.h"
#include "depthmask/detail/dds.h"
#include "depthmask/detail/ros2_publisher.h"
#include "depthmask/detail/ros2_subscriber.h"
#include "depthmask/errors.h"
#include "depthmask/kernels/backproject.h"
#include "depthmask/live.h"
#include "depthmask/ros_msgs.h"

namespace depthmask {
namespace {

using detail::CdrBytes;
using detail::DdsNode;
using detail::DdsWriter;
using detail::Ros2Frame;
using detail::Ros2Qos;
using detail::Ros2SourceSpec;
using detail::Ros2Subscriber;
using std::chrono::milliseconds;

// A domain of this test process's own (parallel tests do not meet).
uint32_t test_domain() { return 200 + static_cast<uint32_t>(::getpid() % 30); }

CdrBytes bytes(std::vector<uint8_t> v) { return std::make_shared<const std::vector<uint8_t>>(std::move(v)); }

ros::Image image(const char* encoding, uint32_t w, uint32_t h, int64_t stamp_ns, uint8_t fill, size_t px = 0) {
  ros::Image m;
  m.header.stamp = ros::Time::from_nanoseconds(stamp_ns);
  m.header.frame_id = "cam";
  m.width = w;
  m.height = h;
  m.encoding = encoding;
  const size_t bpp = px ? px : (std::string(encoding) == "16UC1" ? 2 : 1);
  m.step = static_cast<uint32_t>(w * bpp);
  m.data.assign(static_cast<size_t>(m.step) * h, fill);
  return m;
}

struct Ros2Source : ::testing::Test {
  Config config;
  std::shared_ptr<DdsNode> node;
  void SetUp() override {
    config.live.pair_wait = 0.3;
    config.input.max_time_diff = 0.01;
    node = DdsNode::open(test_domain(), detail::dds_loopback_config());
  }
  Ros2SourceSpec spec(std::vector<std::string> masks) {
    Ros2SourceSpec s;
    s.depth = "/t/depth";
    s.masks = std::move(masks);
    s.qos = Ros2Qos::Default;  // reliable: nothing lost in-process
    s.domain = test_domain();
    s.dds_config = detail::dds_loopback_config();
    return s;
  }
};

TEST_F(Ros2Source, NamesFollowRos2) {
  EXPECT_EQ(detail::dds_topic_name("/camera/depth"), "rt/camera/depth");
  EXPECT_EQ(detail::dds_topic_name("camera/depth"), "rt/camera/depth");
  EXPECT_EQ(detail::dds_type_name("sensor_msgs/msg/Image"), "sensor_msgs::msg::dds_::Image_");
  EXPECT_THROW(detail::dds_topic_name("/a//b"), ConfigError);
  EXPECT_THROW(detail::dds_topic_name("/a b"), ConfigError);
  EXPECT_THROW(detail::parse_ros2_qos("fast", "t"), ConfigError);
  EXPECT_THROW(detail::ros_domain_id("300"), ConfigError);
  EXPECT_EQ(detail::ros_domain_id("7"), 7u);
}

TEST_F(Ros2Source, BadMessagesAreRefusedAndCounted) {
  Ros2Subscriber sub(spec({}), config);
  sub.open();
  DdsWriter w(node, "/t/depth", ros::kImageType, Ros2Qos::Default);
  for (int i = 0; i < 100 && !w.matched(); ++i) std::this_thread::sleep_for(milliseconds(10));
  ASSERT_TRUE(w.matched());
  w.write(bytes({0, 1, 0, 0, 7, 7, 7}));                        // malformed CDR
  w.write(bytes(ros::encode(image("yuv422", 4, 2, 1000, 1))));  // an encoding depth does not take
  ros::Image short_data = image("16UC1", 4, 2, 2000, 1);
  short_data.data.resize(10);  // step * height is 16
  w.write(bytes(ros::encode(short_data)));
  ros::Image huge = image("16UC1", 4, 2, 3000, 1);
  huge.width = 100000;
  huge.height = 100000;  // 10^10 pixels, 16 bytes of data
  huge.step = 200000;
  w.write(bytes(ros::encode(huge)));
  w.write(bytes(ros::encode(image("16UC1", 4, 2, 4000, 9))));
  Ros2Frame f;
  ASSERT_TRUE(sub.next(f, milliseconds(3000)));
  EXPECT_EQ(sub.refused(), 4u);
  EXPECT_EQ(f.header.stamp.nanoseconds(), 4000);
  EXPECT_EQ(f.depth.type(), CV_16UC1);
  EXPECT_EQ(f.depth.at<uint16_t>(0, 0), 9 * 257);
}

TEST_F(Ros2Source, LateMaskIsWaitedForAndMissingMaskDropsTheFrame) {
  Ros2Subscriber sub(spec({"/t/mask"}), config);
  sub.open();
  DdsWriter d(node, "/t/depth", ros::kImageType, Ros2Qos::Default);
  DdsWriter m(node, "/t/mask", ros::kImageType, Ros2Qos::Default);
  for (int i = 0; i < 100 && !(d.matched() && m.matched()); ++i) std::this_thread::sleep_for(milliseconds(10));
  const int64_t t0 = 5'000'000'000;
  d.write(bytes(ros::encode(image("16UC1", 4, 2, t0, 1))));
  std::thread late([&] {
    std::this_thread::sleep_for(milliseconds(150));                          // segmentation: later than its depth frame
    m.write(bytes(ros::encode(image("mono8", 4, 2, t0 + 4'000'000, 255))));  // 4 ms off, within 10 ms
  });
  Ros2Frame f;
  ASSERT_TRUE(sub.next(f, milliseconds(2000)));
  late.join();
  EXPECT_EQ(f.header.stamp.nanoseconds(), t0);
  ASSERT_EQ(f.mask.type(), CV_8UC1);
  EXPECT_EQ(f.mask.at<uint8_t>(1, 3), 255);
  // A depth frame whose mask never comes: decided after pair_wait, dropped, counted.
  d.write(bytes(ros::encode(image("16UC1", 4, 2, t0 + 1'000'000'000, 1))));
  EXPECT_FALSE(sub.next(f, milliseconds(800)));
  EXPECT_EQ(sub.unpaired(), 1u);
}

TEST_F(Ros2Source, SeveralMaskTopicsUnite) {
  Ros2Subscriber sub(spec({"/t/a", "/t/b"}), config);
  sub.open();
  DdsWriter d(node, "/t/depth", ros::kImageType, Ros2Qos::Default);
  DdsWriter a(node, "/t/a", ros::kImageType, Ros2Qos::Default);
  DdsWriter b(node, "/t/b", ros::kImageType, Ros2Qos::Default);
  for (int i = 0; i < 100 && !(d.matched() && a.matched() && b.matched()); ++i)
    std::this_thread::sleep_for(milliseconds(10));
  const int64_t t = 9'000'000'000;
  ros::Image ma = image("mono8", 4, 2, t, 0), mb = image("mono8", 4, 2, t, 0);
  ma.data[0] = 255;  // pixel (0,0) passes in a, (1,3) in b
  mb.data[7] = 255;
  a.write(bytes(ros::encode(ma)));
  b.write(bytes(ros::encode(mb)));
  d.write(bytes(ros::encode(image("16UC1", 4, 2, t, 1))));
  Ros2Frame f;
  ASSERT_TRUE(sub.next(f, milliseconds(2000)));
  EXPECT_TRUE(f.mask_tests);
  EXPECT_NE(f.mask.at<uint8_t>(0, 0), 0);
  EXPECT_NE(f.mask.at<uint8_t>(1, 3), 0);
  EXPECT_EQ(f.mask.at<uint8_t>(0, 1), 0);
}

TEST_F(Ros2Source, WriterWithoutReaderIsNotMatched) {
  DdsWriter w(node, "/t/nobody", ros::kImageType, Ros2Qos::SensorData);
  std::this_thread::sleep_for(milliseconds(100));
  EXPECT_FALSE(w.matched());  // the publisher then encodes nothing (Ros2Publisher::publish)
}

TEST_F(Ros2Source, PointsBackProjectThroughK) {
  cv::Mat z(2, 3, CV_32FC1, cv::Scalar(2.0f));
  z.at<float>(0, 0) = std::numeric_limits<float>::quiet_NaN();
  const double k[9] = {100, 0, 1, 0, 100, 1, 0, 0, 1};
  const ros::PointCloud2 pc = detail::depth_to_points(z, k, ros::Header{});
  ASSERT_EQ(pc.data.size(), 6u * 12u);
  const auto* p = reinterpret_cast<const float*>(pc.data.data());
  EXPECT_TRUE(std::isnan(p[0]));
  EXPECT_FLOAT_EQ(p[3 * 5 + 0], 0.02f);  // u=2, v=1: (2-1)*2/100
  EXPECT_FLOAT_EQ(p[3 * 5 + 2], 2.0f);
}

// The PLY output's rule, bit for bit (the Fast-DDS peer compares whole frames against {id}.ply), and
// a pixel holding output.invalid is no point.
TEST_F(Ros2Source, PointsFollowThePlyRule) {
  cv::Mat z(2, 3, CV_32FC1, cv::Scalar(1.37f));
  z.at<float>(1, 1) = 7.0f;
  const double k[9] = {615.19519, 0, 298.442688, 0, 615.195251, 247.519196, 0, 0, 1};
  const ros::PointCloud2 pc = detail::depth_to_points(z, k, ros::Header{}, 7.0f);
  const auto* p = reinterpret_cast<const float*>(pc.data.data());
  EXPECT_TRUE(std::isnan(p[size_t{3} * 4]));
  float want[3];
  backproject_pixel(2, 1, 1.37f, 7.0f, make_pinhole(k[0], k[4], k[2], k[5]), want);
  for (size_t i = 0; i < 3; ++i) EXPECT_EQ(p[size_t{3} * 5 + i], want[i]) << "coordinate " << i;  // exact, not near
}

// A stop reaches a ros2:// source waiting on a silent topic within its 100 ms poll, not at the 3 s
// stall (the runner calls interrupt() when the run stops); later reads return at once.
TEST_F(Ros2Source, InterruptEndsAReadOnASilentTopic) {
  const std::string uri = "ros2:///t/silent?domain=" + std::to_string(test_domain()) + "&config=loopback";
  auto src = make_live_source(parse_source_uri(uri), config);
  src->open();
  CapturedFrame f;
  std::atomic<int> result{-1};  // 0: read() returned false, 1: a frame, 2: it threw (the stall)
  const auto t0 = std::chrono::steady_clock::now();
  std::thread reader([&] {
    try {
      result = src->read(f) ? 1 : 0;
    } catch (const InputError&) {
      result = 2;
    }
  });
  std::this_thread::sleep_for(milliseconds(200));
  const double slept = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
  src->interrupt();
  reader.join();
  if (slept >= 2.5)
    GTEST_SKIP() << "this machine took " << slept << " s to run a 200 ms sleep: the 3 s stall may come first";
  EXPECT_EQ(result, 0) << "0: read() ended by interrupt(); 2: it waited for the 3 s stall";
  EXPECT_FALSE(src->read(f));
}

}  // namespace
}  // namespace depthmask
