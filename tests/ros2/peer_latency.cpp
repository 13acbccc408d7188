// `dds_peer latency`: the benchmark side of the Fast-DDS peer (bench/ros2_latency.sh). It publishes
// synthetic depth frames (and an all-kept mono8 mask) as a camera driver at 30 Hz and measures, per
// frame, the time from its write of /camera/depth/image_rect_raw to its receipt of the matching
// /depthmask/depth (by header.stamp): ros2:// in → mask → ros2:// out over loopback, both DDS stacks'
// serialisation and transport included. Without a subscription (SUBSCRIBE 0) it only publishes, so
// that the publisher's cost with no subscriber can be measured from outside.
#include <fastdds/dds/domain/DomainParticipantFactory.hpp>
#include <fastdds/dds/publisher/DataWriter.hpp>
#include <fastdds/dds/publisher/Publisher.hpp>
#include <fastdds/dds/subscriber/SampleInfo.hpp>
#include <fastdds/dds/subscriber/Subscriber.hpp>
#include <fastdds/dds/topic/TypeSupport.hpp>

#include <algorithm>
#include <atomic>
#include <chrono>
#include <cstdio>
#include <cstring>
#include <map>
#include <mutex>
#include <thread>
#include <vector>

#include "ImagePubSubTypes.h"
#include "peer_dds.h"

namespace peer {
namespace {

using Clock = std::chrono::steady_clock;

sensor_msgs::msg::Image synthetic(int w, int h, const std::string& enc) {
  sensor_msgs::msg::Image m;
  m.header().frame_id("camera_depth_optical_frame");
  m.height(static_cast<uint32_t>(h));
  m.width(static_cast<uint32_t>(w));
  m.encoding(enc);
  const size_t px = enc == "32FC1" ? 4 : enc == "16UC1" ? 2 : 1;
  m.step(static_cast<uint32_t>(static_cast<size_t>(w) * px));
  std::vector<uint8_t>& d = m.data();
  d.resize(static_cast<size_t>(w) * static_cast<size_t>(h) * px);
  if (enc == "mono8") {
    std::fill(d.begin(), d.end(), uint8_t{255});
  } else {
    // A slanted plane from 0.8 to 1.6 m, so masking has real numbers to test.
    for (int y = 0; y < h; ++y)
      for (int x = 0; x < w; ++x) {
        const float metres = 0.8f + 0.8f * static_cast<float>(x + y) / static_cast<float>(w + h);
        uint8_t* at = d.data() + (static_cast<size_t>(y) * static_cast<size_t>(w) + static_cast<size_t>(x)) * px;
        if (px == 4) {
          std::memcpy(at, &metres, 4);
        } else {
          const auto mm = static_cast<uint16_t>(metres * 1000.0f);
          std::memcpy(at, &mm, 2);
        }
      }
  }
  return m;
}

double percentile(std::vector<double> v, double q) {
  if (v.empty()) return 0;
  std::sort(v.begin(), v.end());
  return v[std::min(v.size() - 1, static_cast<size_t>(q * static_cast<double>(v.size())))];
}

}  // namespace

int latency(int domain, bool sensor, int w, int h, const std::string& enc, int frames, bool subscribe) {
  fdds::DomainParticipant* p = make_participant(domain);
  if (!p) return 2;
  fdds::TypeSupport(new sensor_msgs::msg::ImagePubSubType()).register_type(p, "sensor_msgs::msg::dds_::Image_");
  const char* image = "sensor_msgs::msg::dds_::Image_";
  auto topic = [&](const char* name) { return p->create_topic(name, image, fdds::TOPIC_QOS_DEFAULT); };
  fdds::Publisher* pub = p->create_publisher(fdds::PUBLISHER_QOS_DEFAULT);
  fdds::Subscriber* sub = p->create_subscriber(fdds::SUBSCRIBER_QOS_DEFAULT);
  fdds::DataWriterQos wq = pub->get_default_datawriter_qos();
  set_qos(wq, sensor);
  fdds::DataReaderQos rq = sub->get_default_datareader_qos();
  set_qos(rq, sensor);
  fdds::DataWriter* depth_w = pub->create_datawriter(topic("rt/camera/depth/image_rect_raw"), wq);
  fdds::DataWriter* mask_w = pub->create_datawriter(topic("rt/seg/mask"), wq);
  fdds::DataReader* out_r = subscribe ? sub->create_datareader(topic("rt/depthmask/depth"), rq) : nullptr;
  if (!depth_w || !mask_w || (subscribe && !out_r)) return 2;
  for (const auto until = Clock::now() + std::chrono::seconds(30);;) {
    fdds::PublicationMatchedStatus a;
    fdds::SubscriptionMatchedStatus c;
    depth_w->get_publication_matched_status(a);
    if (out_r) out_r->get_subscription_matched_status(c);
    if (a.current_count > 0 && (!out_r || c.current_count > 0)) break;
    if (Clock::now() > until) return std::fprintf(stderr, "dds_peer: depthmask did not match within 30 s\n"), 1;
    std::this_thread::sleep_for(std::chrono::milliseconds(50));
  }
  std::this_thread::sleep_for(std::chrono::seconds(1));  // the readers learn the writers (see exchange)
  std::mutex mu;
  std::map<int, Clock::time_point> sent_at;  // stamp → the depth write's start
  std::vector<double> ms;
  std::atomic<bool> done{false};
  std::thread rx([&] {
    sensor_msgs::msg::Image m;
    fdds::SampleInfo si;
    while (out_r && !done) {
      if (!out_r->wait_for_unread_message(eprosima::fastrtps::Duration_t(0, 100000000))) continue;
      while (out_r->take_next_sample(&m, &si) == ReturnCode_t::RETCODE_OK) {
        const auto now = Clock::now();
        if (!si.valid_data) continue;
        const int stamp =
            (m.header().stamp().sec() - 1000) * 1000 + static_cast<int>(m.header().stamp().nanosec() / 1000000);
        std::lock_guard<std::mutex> lock(mu);
        const auto it = sent_at.find(stamp);
        if (it != sent_at.end()) ms.push_back(std::chrono::duration<double, std::milli>(now - it->second).count());
      }
    }
  });
  // Made once (a 4K frame takes longer to fill than a 30 Hz period); each frame changes its stamp.
  auto mask = synthetic(w, h, "mono8");
  auto d = synthetic(w, h, enc);
  auto next = Clock::now();
  for (int i = 0; i < frames; ++i) {
    const int stamp = 33 * i;
    d.header().stamp().sec(1000 + stamp / 1000);
    d.header().stamp().nanosec(static_cast<uint32_t>(stamp % 1000) * 1000000u);
    mask.header().stamp(d.header().stamp());
    mask_w->write(&mask);
    {
      std::lock_guard<std::mutex> lock(mu);
      sent_at[stamp] = Clock::now();
    }
    depth_w->write(&d);
    next += std::chrono::microseconds(33333);
    std::this_thread::sleep_until(next);
  }
  for (const auto until = Clock::now() + std::chrono::seconds(out_r ? 10 : 1); Clock::now() < until;) {
    {
      std::lock_guard<std::mutex> lock(mu);
      if (static_cast<int>(ms.size()) >= frames) break;
    }
    std::this_thread::sleep_for(std::chrono::milliseconds(50));
  }
  done = true;
  rx.join();
  std::lock_guard<std::mutex> lock(mu);
  if (!out_r)
    std::printf("latency %dx%d %s %s: sent %d, nothing subscribed\n", w, h, enc.c_str(),
                sensor ? "sensor_data" : "default", frames);
  else
    std::printf("latency %dx%d %s %s: sent %d, received %zu, p50 %.2f ms, p99 %.2f ms, max %.2f ms\n", w, h,
                enc.c_str(), sensor ? "sensor_data" : "default", frames, ms.size(), percentile(ms, 0.5),
                percentile(ms, 0.99), percentile(ms, 1.0));
  p->delete_contained_entities();
  fdds::DomainParticipantFactory::get_instance()->delete_participant(p);
  return 0;
}

}  // namespace peer
