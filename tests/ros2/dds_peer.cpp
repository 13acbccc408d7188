// The independent DDS peer of the ros2:// tests (issue 31): eProsima Fast-DDS with types that its own
// generator (fastddsgen -typeros2) made from the ROS 2 message definitions in tests/ros2/idl, never
// depthmask's CDR codec. On loopback only: a UDPv4 transport whitelisting 127.0.0.1 replaces the
// builtin transports (no shared memory, no multicast), initial peers 127.0.0.1.
//
//   dds_peer prepare DATA DIR
//       the APC captures of DATA (../shared/data/apc-vision-toolbox/scene-0000) as a camera driver
//       publishes them, written as folders `depthmask run` reads: DIR/mm (16-bit PNG depth in mm) and
//       DIR/m (32-bit TIFF depth in metres), each with mask/ (the mono8 ground-truth labels).
//   dds_peer exchange DATA DOMAIN QOS ENCODING EXPECT
//       publishes the captures as /camera/depth/image_rect_raw (ENCODING 16UC1 or 32FC1),
//       /seg/mask (mono8) and /camera/depth/camera_info at 30 Hz (three passes) with QOS
//       (sensor_data or default), subscribes to /depthmask/depth, /mask, /reason, /points and
//       /camera_info, and checks that every frame comes back on each, equal bit for bit to what
//       `depthmask run` wrote in EXPECT for the same frame (peer_expect.h), with the depth's header.
//   dds_peer latency DOMAIN QOS WIDTH HEIGHT ENCODING FRAMES SUBSCRIBE
//       the benchmark's side (peer_latency.cpp, bench/ros2_latency.sh).
// Exit 0 when everything matched, 1 with what differed, 2 on a usage or setup error.
#include <fastdds/rtps/transport/UDPv4TransportDescriptor.h>
#include <fastrtps/utils/IPLocator.h>
#include <fastdds/dds/domain/DomainParticipant.hpp>
#include <fastdds/dds/domain/DomainParticipantFactory.hpp>
#include <fastdds/dds/publisher/DataWriter.hpp>
#include <fastdds/dds/publisher/Publisher.hpp>
#include <fastdds/dds/publisher/qos/DataWriterQos.hpp>
#include <fastdds/dds/subscriber/DataReader.hpp>
#include <fastdds/dds/subscriber/SampleInfo.hpp>
#include <fastdds/dds/subscriber/Subscriber.hpp>
#include <fastdds/dds/subscriber/qos/DataReaderQos.hpp>
#include <fastdds/dds/topic/TypeSupport.hpp>
#include <opencv2/imgcodecs.hpp>

#include <algorithm>
#include <array>
#include <chrono>
#include <cstdio>
#include <cstring>
#include <map>
#include <string>
#include <thread>
#include <vector>

#include "CameraInfoPubSubTypes.h"
#include "ImagePubSubTypes.h"
#include "ParticipantEntitiesInfoPubSubTypes.h"
#include "PointCloud2PubSubTypes.h"
#include "peer_dds.h"
#include "peer_expect.h"

namespace fdds = eprosima::fastdds::dds;
using Clock = std::chrono::steady_clock;

namespace {

constexpr int kPasses = 3;

sensor_msgs::msg::Image image_msg(const cv::Mat& px, const char* encoding, int stamp_ms, const char* frame) {
  sensor_msgs::msg::Image m;
  m.header().stamp().sec(1000 + stamp_ms / 1000);
  m.header().stamp().nanosec(static_cast<uint32_t>(stamp_ms % 1000) * 1000000u);
  m.header().frame_id(frame);
  m.height(static_cast<uint32_t>(px.rows));
  m.width(static_cast<uint32_t>(px.cols));
  m.encoding(encoding);
  m.is_bigendian(0);
  m.step(static_cast<uint32_t>(px.cols * px.elemSize()));
  m.data().assign(px.data, px.data + px.total() * px.elemSize());
  return m;
}

sensor_msgs::msg::CameraInfo camera_info(int stamp_ms) {
  sensor_msgs::msg::CameraInfo c;
  c.header().stamp().sec(1000 + stamp_ms / 1000);
  c.header().stamp().nanosec(static_cast<uint32_t>(stamp_ms % 1000) * 1000000u);
  c.header().frame_id("camera_depth_optical_frame");
  c.height(static_cast<uint32_t>(peer::frame_size().height));
  c.width(static_cast<uint32_t>(peer::frame_size().width));
  c.distortion_model("plumb_bob");
  c.d({0, 0, 0, 0, 0});
  std::array<double, 9> k;
  std::copy(peer::camera_k(), peer::camera_k() + 9, k.begin());
  c.k(k);
  c.r({1, 0, 0, 0, 1, 0, 0, 0, 1});
  c.p({k[0], 0, k[2], 0, 0, k[4], k[5], 0, 0, 0, 1, 0});
  return c;
}

int fail(const std::string& why) {
  std::fprintf(stderr, "dds_peer: %s\n", why.c_str());
  return 1;
}

// depthmask's outputs, in the order the checks count them.
enum Out { kDepth, kMask, kReason, kPoints, kOuts };
constexpr const char* kOutName[kOuts] = {"/depthmask/depth", "/depthmask/mask", "/depthmask/reason",
                                         "/depthmask/points"};

// One case: the captures out as a driver, depthmask's topics in, each message checked as it comes.
class Exchange {
 public:
  Exchange(std::string data, bool sensor, std::string encoding, std::string expect)
      : data_(std::move(data)), sensor_(sensor), encoding_(std::move(encoding)), expect_(std::move(expect)) {}
  ~Exchange() {
    if (!p_) return;
    p_->delete_contained_entities();
    fdds::DomainParticipantFactory::get_instance()->delete_participant(p_);
  }
  Exchange(const Exchange&) = delete;
  Exchange& operator=(const Exchange&) = delete;

  int run(int domain);

 private:
  std::string setup(int domain);
  std::string wait_matched();
  void send(int i, std::chrono::milliseconds pace);
  const peer::Expected& expected(int frame);
  int frame_of(const std_msgs::msg::Header& h, Out out);
  void check_image(Out out, const sensor_msgs::msg::Image& m);
  void check_points(const sensor_msgs::msg::PointCloud2& m);
  void take();
  bool complete() const {
    for (const auto& s : seen_)
      if (static_cast<int>(s.size()) < peer::kFrames) return false;
    return true;
  }
  void collect(std::chrono::seconds wait);

  std::string data_;
  bool sensor_;
  std::string encoding_, expect_;
  fdds::DomainParticipant* p_ = nullptr;
  fdds::DataWriter *depth_w_ = nullptr, *mask_w_ = nullptr, *info_w_ = nullptr;
  fdds::DataReader* out_r_[kOuts] = {};
  fdds::DataReader *info_r_ = nullptr, *graph_r_ = nullptr;
  std::map<int, int> frame_of_stamp_;  // stamp (ms after 1000 s) → frame
  std::map<int, peer::Expected> expected_;
  std::map<int, int> seen_[kOuts];  // per output: frame → messages
  int next_stamp_ = 0, sent_ = 0, received_ = 0;
  std::string error_;
  fdds::InstanceHandle_t depth_writer_;  // who sent /depthmask/depth
  // 30 Hz, or DDS_PEER_PACE_MS (big frames: 4K output is 180 MB a frame over the five topics), and how
  // long to wait for the last frames after sending.
  std::chrono::milliseconds pace_{peer::env_ms("DDS_PEER_PACE_MS", 33)};
  std::chrono::seconds settle_{std::max<int64_t>(5, 2 * peer::kFrames * pace_.count() / 1000)};
  const uint32_t w_ = static_cast<uint32_t>(peer::frame_size().width);  // what every output must be
  const uint32_t h_ = static_cast<uint32_t>(peer::frame_size().height);
};

std::string Exchange::setup(int domain) {
  p_ = peer::make_participant(domain);
  if (!p_) return "cannot create a Fast-DDS participant on domain " + std::to_string(domain);
  // rosidl's DDS type names (fastddsgen -typeros2 gives the same; named here so the test says it).
  fdds::TypeSupport(new sensor_msgs::msg::ImagePubSubType()).register_type(p_, "sensor_msgs::msg::dds_::Image_");
  fdds::TypeSupport(new sensor_msgs::msg::CameraInfoPubSubType())
      .register_type(p_, "sensor_msgs::msg::dds_::CameraInfo_");
  fdds::TypeSupport(new sensor_msgs::msg::PointCloud2PubSubType())
      .register_type(p_, "sensor_msgs::msg::dds_::PointCloud2_");
  fdds::TypeSupport(new rmw_dds_common::msg::ParticipantEntitiesInfoPubSubType())
      .register_type(p_, "rmw_dds_common::msg::dds_::ParticipantEntitiesInfo_");
  auto topic = [&](const char* name, const char* type) {
    return p_->create_topic(name, type, fdds::TOPIC_QOS_DEFAULT);
  };
  const char* image = "sensor_msgs::msg::dds_::Image_";
  fdds::Publisher* pub = p_->create_publisher(fdds::PUBLISHER_QOS_DEFAULT);
  fdds::Subscriber* sub = p_->create_subscriber(fdds::SUBSCRIBER_QOS_DEFAULT);
  fdds::DataWriterQos wq = pub->get_default_datawriter_qos();
  peer::set_qos(wq, sensor_);
  fdds::DataReaderQos rq = sub->get_default_datareader_qos();
  peer::set_qos(rq, sensor_);
  depth_w_ = pub->create_datawriter(topic("rt/camera/depth/image_rect_raw", image), wq);
  mask_w_ = pub->create_datawriter(topic("rt/seg/mask", image), wq);
  info_w_ = pub->create_datawriter(topic("rt/camera/depth/camera_info", "sensor_msgs::msg::dds_::CameraInfo_"), wq);
  out_r_[kDepth] = sub->create_datareader(topic("rt/depthmask/depth", image), rq);
  out_r_[kMask] = sub->create_datareader(topic("rt/depthmask/mask", image), rq);
  out_r_[kReason] = sub->create_datareader(topic("rt/depthmask/reason", image), rq);
  out_r_[kPoints] = sub->create_datareader(topic("rt/depthmask/points", "sensor_msgs::msg::dds_::PointCloud2_"), rq);
  info_r_ = sub->create_datareader(topic("rt/depthmask/camera_info", "sensor_msgs::msg::dds_::CameraInfo_"), rq);
  // ROS 2's graph: rmw_dds_common's ParticipantEntitiesInfo on ros_discovery_info (reliable, transient local).
  fdds::DataReaderQos gq = sub->get_default_datareader_qos();
  gq.reliability().kind = fdds::RELIABLE_RELIABILITY_QOS;
  gq.durability().kind = fdds::TRANSIENT_LOCAL_DURABILITY_QOS;
  gq.history().kind = fdds::KEEP_LAST_HISTORY_QOS;
  gq.history().depth = 1;
  graph_r_ =
      sub->create_datareader(topic("ros_discovery_info", "rmw_dds_common::msg::dds_::ParticipantEntitiesInfo_"), gq);
  for (auto* r : out_r_)
    if (!r) return "cannot create the readers";
  if (!depth_w_ || !mask_w_ || !info_w_ || !info_r_ || !graph_r_) return "cannot create the endpoints";
  return "";
}

// Both directions matched before the first frame (volatile topics keep nothing for late joiners).
std::string Exchange::wait_matched() {
  const auto deadline = Clock::now() + std::chrono::seconds(30);
  for (;;) {
    fdds::PublicationMatchedStatus a, b;
    depth_w_->get_publication_matched_status(a);
    mask_w_->get_publication_matched_status(b);
    bool all = a.current_count > 0 && b.current_count > 0;
    for (auto* r : out_r_) {
      fdds::SubscriptionMatchedStatus c;
      r->get_subscription_matched_status(c);
      all = all && c.current_count > 0;
    }
    if (all) break;
    if (Clock::now() > deadline) return "depthmask's topics did not match within 30 s (is it running?)";
    std::this_thread::sleep_for(std::chrono::milliseconds(50));
  }
  std::this_thread::sleep_for(std::chrono::milliseconds(300));
  return "";
}

void Exchange::send(int i, std::chrono::milliseconds pace) {
  const int stamp = next_stamp_;
  next_stamp_ += 33;
  frame_of_stamp_[stamp] = i;
  const cv::Mat depth = encoding_ == "32FC1" ? peer::depth_m(data_, i) : peer::depth_mm(data_, i);
  auto info = camera_info(stamp);
  info_w_->write(&info);
  auto mask = image_msg(peer::mask_of(data_, i), "mono8", stamp, "camera_depth_optical_frame");
  mask_w_->write(&mask);
  auto d = image_msg(depth, encoding_.c_str(), stamp, "camera_depth_optical_frame");
  depth_w_->write(&d);
  ++sent_;
  std::this_thread::sleep_for(pace);
}

const peer::Expected& Exchange::expected(int frame) {
  auto it = expected_.find(frame);
  if (it == expected_.end()) it = expected_.emplace(frame, peer::expected_of(expect_, peer::frame_id(frame))).first;
  return it->second;
}

// The frame a message answers (by its stamp), or -1 with error_ set.
int Exchange::frame_of(const std_msgs::msg::Header& h, Out out) {
  const int stamp = (h.stamp().sec() - 1000) * 1000 + static_cast<int>(h.stamp().nanosec() / 1000000);
  const auto it = frame_of_stamp_.find(stamp);
  if (it == frame_of_stamp_.end()) {
    error_ = std::string("a ") + kOutName[out] + " message with a stamp never sent";
    return -1;
  }
  if (h.frame_id() != "camera_depth_optical_frame")
    error_ = peer::frame_id(it->second) + ": " + kOutName[out] + "'s header changed its frame_id";
  return error_.empty() ? it->second : -1;
}

// depth: 32FC1 equal to {id}.npy; mask: mono8, 255 exactly where {id}.reason.png is 0 (kept);
// reason: mono8 equal to {id}.reason.png.
void Exchange::check_image(Out out, const sensor_msgs::msg::Image& m) {
  const int frame = frame_of(m.header(), out);
  if (frame < 0) return;
  const std::string id = peer::frame_id(frame);
  const bool depth = out == kDepth;
  const char* enc = depth ? "32FC1" : "mono8";
  const uint32_t w = w_, h = h_, step = depth ? w * 4 : w;
  const peer::Expected& e = expected(frame);
  const std::vector<uint8_t>& want = out == kDepth ? e.depth : out == kMask ? e.mask : e.reason;
  const char* file = out == kDepth ? ".npy" : out == kMask ? ".reason.png (== 0)" : ".reason.png";
  if (m.encoding() != enc || m.width() != w || m.height() != h || m.step() != step || m.is_bigendian() != 0)
    error_ = id + ": " + kOutName[out] + " is " + m.encoding() + " " + std::to_string(m.width()) + "x" +
             std::to_string(m.height()) + " step " + std::to_string(m.step()) + "; expected " + enc + " " +
             std::to_string(w) + "x" + std::to_string(h) + ", step " + std::to_string(step) + ", little-endian";
  else if (m.data() != want)
    error_ = id + ": " + kOutName[out] + " differs from depthmask run's " + expect_ + "/" + id + file;
  ++seen_[out][frame];
}

// points: organised, of the frame's size, fields x y z float32 at 0 4 8; its finite points, in order, are the
// vertices of depthmask run's {id}.ply bit for bit (so their count is the kept-pixel count).
void Exchange::check_points(const sensor_msgs::msg::PointCloud2& m) {
  const int frame = frame_of(m.header(), kPoints);
  if (frame < 0) return;
  const std::string id = peer::frame_id(frame);
  const auto& f = m.fields();
  const bool xyz = f.size() == 3 && f[0].name() == "x" && f[1].name() == "y" && f[2].name() == "z";
  const uint32_t w = w_, h = h_;
  bool layout = xyz && m.width() == w && m.height() == h && m.point_step() == 12 && m.row_step() == w * 12 &&
                !m.is_bigendian() && m.data().size() == size_t{w} * h * 12;
  for (size_t i = 0; layout && i < 3; ++i)
    layout = f[i].offset() == 4 * i && f[i].datatype() == 7 /* FLOAT32 */ && f[i].count() == 1;
  const peer::Expected& e = expected(frame);
  if (!layout) {
    error_ = id + ": /depthmask/points is not an organised " + std::to_string(w) + "x" + std::to_string(h) +
             " cloud of float32 x y z at offsets 0 4 8";
  } else {
    const std::vector<uint8_t> pts = peer::finite_points(m.data());
    if (pts.size() / 12 != e.kept)
      error_ = id + ": /depthmask/points has " + std::to_string(pts.size() / 12) + " finite points; " + id +
               ".ply has " + std::to_string(e.kept) + " (the kept pixels)";
    else if (pts != e.vertices)
      error_ = id + ": /depthmask/points' points differ from depthmask run's " + expect_ + "/" + id + ".ply";
  }
  ++seen_[kPoints][frame];
}

void Exchange::take() {
  fdds::SampleInfo si;
  sensor_msgs::msg::Image m;
  for (Out out : {kDepth, kMask, kReason})
    while (error_.empty() && out_r_[out]->take_next_sample(&m, &si) == ReturnCode_t::RETCODE_OK)
      if (si.valid_data) {
        if (out == kDepth) {
          ++received_;
          depth_writer_ = si.publication_handle;
        }
        check_image(out, m);
      }
  sensor_msgs::msg::PointCloud2 pc;
  while (error_.empty() && out_r_[kPoints]->take_next_sample(&pc, &si) == ReturnCode_t::RETCODE_OK)
    if (si.valid_data) check_points(pc);
}

// What comes back, checked as it comes, until every frame was seen on every output or `wait` passed.
void Exchange::collect(std::chrono::seconds wait) {
  const auto until = Clock::now() + wait;
  while (error_.empty() && Clock::now() < until && !complete()) {
    out_r_[kPoints]->wait_for_unread_message(eprosima::fastrtps::Duration_t(0, 100000000));
    take();
  }
}

int Exchange::run(int domain) {
  std::string why = setup(domain);
  if (why.empty()) why = wait_matched();
  if (!why.empty()) return fail(why);
  // Warm-up: a writer's match says the reader was discovered, not that the reader knows the writer
  // yet (samples before that are lost even when reliable): frame 0 until one comes back.
  const auto warm_until = Clock::now() + std::chrono::seconds(15);
  while (error_.empty() && received_ == 0 && Clock::now() < warm_until) {
    send(0, pace_);
    if (out_r_[kDepth]->wait_for_unread_message(eprosima::fastrtps::Duration_t(0, 200000000)))
      collect(std::chrono::seconds(1));
  }
  if (received_ == 0 && error_.empty()) return fail("nothing came back within 15 s of sending");
  const int warm_up = sent_;
  for (auto& s : seen_) s.clear();
  for (int pass = 0; pass < kPasses; ++pass)
    for (int i = 0; i < peer::kFrames; ++i) send(i, pace_);
  collect(settle_);
  // A frame lost on the way on any output (best effort, or a keep-last history overrun on a loaded
  // machine) is sent again, slower, up to five more times; what arrives must still be exact.
  for (int retry = 0; retry < 5 && error_.empty() && !complete(); ++retry) {
    for (int i = 0; i < peer::kFrames; ++i)
      for (const auto& s : seen_)
        if (!s.count(i)) {
          send(i, 3 * pace_);
          break;
        }
    collect(settle_);
  }
  if (!error_.empty()) return fail(error_);
  int infos = 0;
  sensor_msgs::msg::CameraInfo ci;
  fdds::SampleInfo si;
  while (info_r_->take_next_sample(&ci, &si) == ReturnCode_t::RETCODE_OK)
    if (si.valid_data) {
      ++infos;
      if (ci.k() != camera_info(0).k()) return fail("/depthmask/camera_info's K differs from the camera's");
    }
  std::printf(
      "dds_peer: %s %s: sent %d depth messages (%d to warm up); frames back (of %d) on depth %zu, mask %zu, "
      "reason %zu, points %zu; %d camera_info; every one as depthmask run wrote it\n",
      encoding_.c_str(), sensor_ ? "sensor_data" : "default", sent_, warm_up, peer::kFrames, seen_[kDepth].size(),
      seen_[kMask].size(), seen_[kReason].size(), seen_[kPoints].size(), infos);
  if (!complete()) return fail("not every frame came back on every output");
  const std::string graph = peer::check_graph(graph_r_, depth_writer_);
  if (!graph.empty()) return fail(graph);
  if (infos == 0) return fail("no /depthmask/camera_info");
  return 0;
}

}  // namespace

int main(int argc, char** argv) {
  try {
    const std::string mode = argc > 1 ? argv[1] : "";
    if (mode == "prepare" && argc == 4) return peer::prepare(argv[2], argv[3]);
    if (mode == "latency" && argc == 9)
      return peer::latency(std::atoi(argv[2]), std::string(argv[3]) == "sensor_data", std::atoi(argv[4]),
                           std::atoi(argv[5]), argv[6], std::atoi(argv[7]), std::string(argv[8]) == "1");
    if (mode == "exchange" && argc == 7)
      return Exchange(argv[2], std::string(argv[4]) == "sensor_data", argv[5], argv[6]).run(std::atoi(argv[3]));
  } catch (const std::exception& e) {
    std::fprintf(stderr, "dds_peer: %s\n", e.what());
    return 2;
  }
  std::fprintf(stderr,
               "usage: dds_peer prepare DATA DIR | dds_peer exchange DATA DOMAIN sensor_data|default 16UC1|32FC1 "
               "EXPECT_DIR | dds_peer latency DOMAIN QOS WIDTH HEIGHT 16UC1|32FC1 FRAMES SUBSCRIBE(0|1)\n");
  return 2;
}
