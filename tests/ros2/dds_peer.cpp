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
//       (sensor_data or default), subscribes to /depthmask/depth and /depthmask/camera_info, and
//       checks that every frame comes back, each equal bit for bit to EXPECT/{id}.npy (the masked
//       depth `depthmask run` wrote for the same frame), with the depth message's header.
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

#include <chrono>
#include <cstdio>
#include <cstring>
#include <fstream>
#include <map>
#include <string>
#include <thread>
#include <vector>

#include "CameraInfoPubSubTypes.h"
#include "ImagePubSubTypes.h"
#include "ParticipantEntitiesInfoPubSubTypes.h"

namespace fdds = eprosima::fastdds::dds;
using Clock = std::chrono::steady_clock;

namespace {

constexpr int kFrames = 8;
constexpr int kPasses = 3;

std::string frame_id(int i) {
  char b[32];
  std::snprintf(b, sizeof b, "frame-%06d", i);
  return b;
}

// APC's depth: deci-millimetres, each word rotated left by 3 bits (the dataset's README).
cv::Mat apc_decimm(const std::string& data, int i) {
  const std::string path = data + "/apc-vision-toolbox/scene-0000/" + frame_id(i) + ".depth.png";
  cv::Mat raw = cv::imread(path, cv::IMREAD_UNCHANGED);
  if (raw.type() != CV_16UC1) throw std::runtime_error(path + ": not a 16-bit depth PNG");
  raw.forEach<uint16_t>([](uint16_t& v, const int*) { v = static_cast<uint16_t>((v >> 3) | (v << 13)); });
  return raw;
}

cv::Mat depth_mm(const std::string& data, int i) {
  cv::Mat mm;
  apc_decimm(data, i).convertTo(mm, CV_16UC1, 0.1);
  return mm;
}

cv::Mat depth_m(const std::string& data, int i) {
  cv::Mat m;
  apc_decimm(data, i).convertTo(m, CV_32FC1, 1e-4);
  return m;
}

cv::Mat mask_of(const std::string& data, int i) {
  const std::string path = data + "/apc-vision-toolbox/scene-0000/segm/" + frame_id(i) + ".segm.png";
  cv::Mat m = cv::imread(path, cv::IMREAD_UNCHANGED);
  if (m.type() != CV_8UC1) throw std::runtime_error(path + ": not an 8-bit label image");
  return m;
}

int prepare(const std::string& data, const std::string& dir) {
  for (const char* sub : {"/mm/depth", "/mm/mask", "/m/depth", "/m/mask"})
    if (std::system(("mkdir -p '" + dir + sub + "'").c_str()) != 0) return 2;
  for (int i = 0; i < kFrames; ++i) {
    const std::string id = frame_id(i);
    const cv::Mat mask = mask_of(data, i);
    bool ok = cv::imwrite(dir + "/mm/depth/" + id + ".png", depth_mm(data, i)) &&
              cv::imwrite(dir + "/mm/mask/" + id + ".png", mask) &&
              cv::imwrite(dir + "/m/depth/" + id + ".tiff", depth_m(data, i)) &&
              cv::imwrite(dir + "/m/mask/" + id + ".png", mask);
    if (!ok) {
      std::fprintf(stderr, "dds_peer: cannot write frame %s under %s\n", id.c_str(), dir.c_str());
      return 2;
    }
  }
  return 0;
}

// The float32 payload of a .npy file `depthmask run` wrote (little-endian '<f4', C order).
std::vector<uint8_t> npy_payload(const std::string& path) {
  std::ifstream f(path, std::ios::binary);
  std::vector<uint8_t> b((std::istreambuf_iterator<char>(f)), std::istreambuf_iterator<char>());
  if (b.size() < 10 || std::memcmp(b.data(), "\x93NUMPY", 6) != 0) throw std::runtime_error(path + ": not a .npy file");
  const size_t header = b[6] == 1 ? 10 + (b[8] | (b[9] << 8)) : 12 + (b[8] | (b[9] << 8) | (b[10] << 16));
  return std::vector<uint8_t>(b.begin() + static_cast<std::ptrdiff_t>(header), b.end());
}

// The loopback-only participant (see the file's comment).
fdds::DomainParticipant* make_participant(int domain) {
  fdds::DomainParticipantQos q;
  q.name("depthmask_test_peer");
  auto udp = std::make_shared<eprosima::fastdds::rtps::UDPv4TransportDescriptor>();
  udp->interfaceWhiteList.emplace_back("127.0.0.1");
  udp->sendBufferSize = udp->receiveBufferSize = 4 << 20;
  q.transport().use_builtin_transports = false;
  q.transport().user_transports.push_back(udp);
  eprosima::fastrtps::rtps::Locator_t peer;
  eprosima::fastrtps::rtps::IPLocator::setIPv4(peer, 127, 0, 0, 1);
  q.wire_protocol().builtin.initialPeersList.push_back(peer);
  eprosima::fastrtps::rtps::Locator_t meta;
  eprosima::fastrtps::rtps::IPLocator::setIPv4(meta, 127, 0, 0, 1);
  q.wire_protocol().builtin.metatrafficUnicastLocatorList.push_back(meta);
  q.wire_protocol().default_unicast_locator_list.push_back(meta);
  q.wire_protocol().participant_id = 20;  // clear of CycloneDDS's automatic indices 0, 1, ...
  return fdds::DomainParticipantFactory::get_instance()->create_participant(domain, q);
}

void set_qos(fdds::DataWriterQos& w, bool sensor) {
  w.reliability().kind = sensor ? fdds::BEST_EFFORT_RELIABILITY_QOS : fdds::RELIABLE_RELIABILITY_QOS;
  w.history().kind = fdds::KEEP_LAST_HISTORY_QOS;
  w.history().depth = sensor ? 5 : 10;
  w.durability().kind = fdds::VOLATILE_DURABILITY_QOS;
  w.publish_mode().kind = fdds::ASYNCHRONOUS_PUBLISH_MODE;  // large samples, fragmented
  // Lost fragments repaired within 100 ms rather than the default 3 s heartbeat period, which a
  // keep-last history of 30 Hz frames overtakes.
  w.reliable_writer_qos().times.heartbeatPeriod = eprosima::fastrtps::Duration_t(0, 100000000);
}

void set_qos(fdds::DataReaderQos& r, bool sensor) {
  r.reliability().kind = sensor ? fdds::BEST_EFFORT_RELIABILITY_QOS : fdds::RELIABLE_RELIABILITY_QOS;
  r.history().kind = fdds::KEEP_LAST_HISTORY_QOS;
  r.history().depth = 30;
  r.durability().kind = fdds::VOLATILE_DURABILITY_QOS;
}

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
  c.height(480);
  c.width(640);
  c.distortion_model("plumb_bob");
  c.d({0, 0, 0, 0, 0});
  c.k({615.195190, 0, 298.442688, 0, 615.195251, 247.519196, 0, 0, 1});  // APC's color K (cam.info.txt)
  c.r({1, 0, 0, 0, 1, 0, 0, 0, 1});
  c.p({615.195190, 0, 298.442688, 0, 0, 615.195251, 247.519196, 0, 0, 0, 1, 0});
  return c;
}

int fail(const std::string& why) {
  std::fprintf(stderr, "dds_peer: %s\n", why.c_str());
  return 1;
}

// depthmask's entry on ros_discovery_info: the node /depthmask, its readers (depth, mask, camera_info)
// and writers, the GID of the writer this peer received /depthmask/depth from among them (Jazzy's
// 16-byte GIDs: the DDS GUID, which Fast-DDS's publication handle of a sample is).
std::string check_graph(fdds::DataReader* graph_r, const fdds::InstanceHandle_t& writer) {
  const auto until = Clock::now() + std::chrono::seconds(5);
  while (Clock::now() < until) {
    rmw_dds_common::msg::ParticipantEntitiesInfo g;
    fdds::SampleInfo si;
    while (graph_r->take_next_sample(&g, &si) == ReturnCode_t::RETCODE_OK) {
      if (!si.valid_data || g.node_entities_info_seq().size() != 1) continue;
      const auto& n = g.node_entities_info_seq()[0];
      if (n.node_name() != "depthmask" || n.node_namespace() != "/") continue;
      for (const auto& w : n.writer_gid_seq())
        if (std::memcmp(w.data().data(), writer.value, 16) == 0 && n.reader_gid_seq().size() >= 3) {
          std::printf("dds_peer: ros_discovery_info names node /depthmask with %zu reader(s) and %zu writer(s)\n",
                      n.reader_gid_seq().size(), n.writer_gid_seq().size());
          return "";
        }
    }
    std::this_thread::sleep_for(std::chrono::milliseconds(100));
  }
  return "no ros_discovery_info entry for node /depthmask listing the /depthmask/depth writer and 3 readers";
}

}  // namespace

int exchange(const std::string& data, int domain, bool sensor, const std::string& encoding, const std::string& expect);

int main(int argc, char** argv) {
  try {
    const std::string mode = argc > 1 ? argv[1] : "";
    if (mode == "prepare" && argc == 4) return prepare(argv[2], argv[3]);
    if (mode == "exchange" && argc == 7)
      return exchange(argv[2], std::atoi(argv[3]), std::string(argv[4]) == "sensor_data", argv[5], argv[6]);
  } catch (const std::exception& e) {
    std::fprintf(stderr, "dds_peer: %s\n", e.what());
    return 2;
  }
  std::fprintf(stderr,
               "usage: dds_peer prepare DATA DIR | dds_peer exchange DATA DOMAIN sensor_data|default 16UC1|32FC1 "
               "EXPECT_DIR\n");
  return 2;
}

int exchange(const std::string& data, int domain, bool sensor, const std::string& encoding, const std::string& expect) {
  fdds::DomainParticipant* p = make_participant(domain);
  if (!p) return fail("cannot create a Fast-DDS participant on domain " + std::to_string(domain));
  fdds::TypeSupport image_type(new sensor_msgs::msg::ImagePubSubType());
  fdds::TypeSupport info_type(new sensor_msgs::msg::CameraInfoPubSubType());
  // rosidl's DDS type names (fastddsgen -typeros2 gives the same; named here so the test says it).
  image_type.register_type(p, "sensor_msgs::msg::dds_::Image_");
  info_type.register_type(p, "sensor_msgs::msg::dds_::CameraInfo_");
  auto topic = [&](const char* name, const char* type) { return p->create_topic(name, type, fdds::TOPIC_QOS_DEFAULT); };
  fdds::Publisher* pub = p->create_publisher(fdds::PUBLISHER_QOS_DEFAULT);
  fdds::Subscriber* sub = p->create_subscriber(fdds::SUBSCRIBER_QOS_DEFAULT);
  fdds::DataWriterQos wq = pub->get_default_datawriter_qos();
  set_qos(wq, sensor);
  fdds::DataReaderQos rq = sub->get_default_datareader_qos();
  set_qos(rq, sensor);
  fdds::DataWriter* depth_w =
      pub->create_datawriter(topic("rt/camera/depth/image_rect_raw", "sensor_msgs::msg::dds_::Image_"), wq);
  fdds::DataWriter* mask_w = pub->create_datawriter(topic("rt/seg/mask", "sensor_msgs::msg::dds_::Image_"), wq);
  fdds::DataWriter* info_w =
      pub->create_datawriter(topic("rt/camera/depth/camera_info", "sensor_msgs::msg::dds_::CameraInfo_"), wq);
  fdds::DataReader* out_r = sub->create_datareader(topic("rt/depthmask/depth", "sensor_msgs::msg::dds_::Image_"), rq);
  fdds::DataReader* info_r =
      sub->create_datareader(topic("rt/depthmask/camera_info", "sensor_msgs::msg::dds_::CameraInfo_"), rq);
  // ROS 2's graph: rmw_dds_common's ParticipantEntitiesInfo on ros_discovery_info (reliable, transient local).
  fdds::TypeSupport graph_type(new rmw_dds_common::msg::ParticipantEntitiesInfoPubSubType());
  graph_type.register_type(p, "rmw_dds_common::msg::dds_::ParticipantEntitiesInfo_");
  fdds::DataReaderQos gq = sub->get_default_datareader_qos();
  gq.reliability().kind = fdds::RELIABLE_RELIABILITY_QOS;
  gq.durability().kind = fdds::TRANSIENT_LOCAL_DURABILITY_QOS;
  gq.history().kind = fdds::KEEP_LAST_HISTORY_QOS;
  gq.history().depth = 1;
  fdds::DataReader* graph_r =
      sub->create_datareader(topic("ros_discovery_info", "rmw_dds_common::msg::dds_::ParticipantEntitiesInfo_"), gq);
  if (!depth_w || !mask_w || !info_w || !out_r || !info_r || !graph_r) return fail("cannot create the endpoints");

  // Both directions matched before the first frame (volatile topics keep nothing for late joiners).
  const auto deadline = Clock::now() + std::chrono::seconds(30);
  for (;;) {
    fdds::PublicationMatchedStatus a, b;
    fdds::SubscriptionMatchedStatus c;
    depth_w->get_publication_matched_status(a);
    mask_w->get_publication_matched_status(b);
    out_r->get_subscription_matched_status(c);
    if (a.current_count > 0 && b.current_count > 0 && c.current_count > 0) break;
    if (Clock::now() > deadline) return fail("depthmask's topics did not match within 30 s (is it running?)");
    std::this_thread::sleep_for(std::chrono::milliseconds(50));
  }
  std::this_thread::sleep_for(std::chrono::milliseconds(300));

  std::map<int, int> frame_of_stamp;  // stamp (ms after 1000 s) → frame
  int next_stamp = 0, sent = 0;
  auto send = [&](int i) {
    const int stamp = next_stamp;
    next_stamp += 33;
    frame_of_stamp[stamp] = i;
    const cv::Mat depth = encoding == "32FC1" ? depth_m(data, i) : depth_mm(data, i);
    auto info = camera_info(stamp);
    info_w->write(&info);
    auto mask = image_msg(mask_of(data, i), "mono8", stamp, "camera_depth_optical_frame");
    mask_w->write(&mask);
    auto d = image_msg(depth, encoding.c_str(), stamp, "camera_depth_optical_frame");
    depth_w->write(&d);
    ++sent;
    std::this_thread::sleep_for(std::chrono::milliseconds(33));
  };
  // What comes back, checked as it comes, until every frame was seen or `wait` passed.
  std::map<int, int> seen;  // frame → messages
  int received = 0, infos = 0;
  std::string error;
  fdds::InstanceHandle_t depth_writer;  // who sent /depthmask/depth
  auto collect = [&](std::chrono::seconds wait) {
    const auto until = Clock::now() + wait;
    while (error.empty() && Clock::now() < until && static_cast<int>(seen.size()) < kFrames) {
      if (!out_r->wait_for_unread_message(eprosima::fastrtps::Duration_t(0, 200000000))) continue;
      sensor_msgs::msg::Image m;
      fdds::SampleInfo si;
      while (error.empty() && out_r->take_next_sample(&m, &si) == ReturnCode_t::RETCODE_OK) {
        if (!si.valid_data) continue;
        ++received;
        depth_writer = si.publication_handle;
        const int stamp =
            (m.header().stamp().sec() - 1000) * 1000 + static_cast<int>(m.header().stamp().nanosec() / 1000000);
        const auto it = frame_of_stamp.find(stamp);
        if (it == frame_of_stamp.end()) {
          error = "a /depthmask/depth message with a stamp never sent";
          break;
        }
        const std::string id = frame_id(it->second);
        if (m.encoding() != "32FC1" || m.width() != 640 || m.height() != 480 || m.step() != 640 * 4)
          error = id + ": /depthmask/depth is " + m.encoding() + " " + std::to_string(m.width()) + "x" +
                  std::to_string(m.height()) + "; expected 32FC1 640x480, step 2560";
        else if (m.header().frame_id() != "camera_depth_optical_frame")
          error = id + ": the header's frame_id changed";
        else if (m.data() != npy_payload(expect + "/" + id + ".npy"))
          error = id + " (stamp " + std::to_string(stamp) + " ms): /depthmask/depth differs from depthmask run's " +
                  expect + "/" + id + ".npy";
        ++seen[it->second];
      }
    }
  };
  // Warm-up: a writer's match says the reader was discovered, not that the reader knows the writer
  // yet (samples before that are lost even when reliable): frame 0 until one comes back.
  const auto warm_until = Clock::now() + std::chrono::seconds(15);
  while (error.empty() && received == 0 && Clock::now() < warm_until) {
    send(0);
    if (received == 0 && out_r->wait_for_unread_message(eprosima::fastrtps::Duration_t(0, 200000000)))
      collect(std::chrono::seconds(1));
  }
  if (received == 0 && error.empty()) return fail("nothing came back within 15 s of sending");
  const int warm_up = sent;
  seen.clear();
  for (int pass = 0; pass < kPasses; ++pass)
    for (int i = 0; i < kFrames; ++i) send(i);
  collect(std::chrono::seconds(5));
  // A frame lost on the way (best effort, or a keep-last history overrun on a loaded machine) is
  // sent again, up to three more times; what arrives must still be exact.
  for (int retry = 0; retry < 3 && error.empty() && static_cast<int>(seen.size()) < kFrames; ++retry) {
    for (int i = 0; i < kFrames; ++i)
      if (!seen.count(i)) send(i);
    collect(std::chrono::seconds(5));
  }
  if (!error.empty()) return fail(error);
  sensor_msgs::msg::CameraInfo ci;
  fdds::SampleInfo si;
  while (info_r->take_next_sample(&ci, &si) == ReturnCode_t::RETCODE_OK)
    if (si.valid_data) {
      ++infos;
      if (ci.k() != camera_info(0).k()) return fail("/depthmask/camera_info's K differs from the camera's");
    }
  std::printf(
      "dds_peer: %s %s: sent %d depth messages (%d to warm up), received %d /depthmask/depth (%zu of %d frames), "
      "%d camera_info, every one as depthmask run wrote it\n",
      encoding.c_str(), sensor ? "sensor_data" : "default", sent, warm_up, received, seen.size(), kFrames, infos);
  if (static_cast<int>(seen.size()) < kFrames) return fail("not every frame came back");
  const std::string graph = check_graph(graph_r, depth_writer);
  if (!graph.empty()) return fail(graph);
  if (infos == 0) return fail("no /depthmask/camera_info");
  p->delete_contained_entities();
  fdds::DomainParticipantFactory::get_instance()->delete_participant(p);
  return 0;
}
