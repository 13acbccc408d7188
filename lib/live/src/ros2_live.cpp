// ros2:// in live mode (ros2_live.h): the URIs read into lib/live_ros2's specs, the source's stall
// rule, and the runner's output. A source whose depth topic is silent for kStall is treated as
// disconnected (InputError): the runner reopens it with its back-off, as it does a camera that stops.
#include "ros2_live.h"

#include <atomic>
#include <sstream>

#include "depthmask/errors.h"
#include "pacing.h"
#include "uri.h"

#if DEPTHMASK_HAVE_ROS2
#include "depthmask/detail/dds.h"
#include "depthmask/detail/ros2_publisher.h"
#include "depthmask/detail/ros2_subscriber.h"
#endif

namespace depthmask::detail {

std::vector<std::string> publish_targets(const std::string& publish) {
  std::vector<std::string> out;
  std::stringstream ss(publish);
  std::string item;
  while (std::getline(ss, item, ','))
    if (!item.empty()) out.push_back(item);
  return out;
}

bool ros2_built() { return DEPTHMASK_HAVE_ROS2 != 0; }

std::string ros2_note() {
#if DEPTHMASK_HAVE_ROS2
  return std::string("ROS 2 topics over DDS (") + DEPTHMASK_ROS2_WHY + ")";
#else
  return std::string("not built in: ") + DEPTHMASK_ROS2_WHY;
#endif
}

#if DEPTHMASK_HAVE_ROS2
namespace {

using Clock = std::chrono::steady_clock;
constexpr auto kStall = std::chrono::seconds(3);

const std::string* find(const SourceUri& uri, const std::string& key) {
  const auto it = uri.query.find(key);
  return it == uri.query.end() ? nullptr : &it->second;
}

// config=: "loopback" (this machine only), an XML text, a file:// URI, or a path to an XML file.
std::string dds_config_of(const SourceUri& uri) {
  const std::string* v = find(uri, "config");
  if (!v || v->empty()) return "";
  if (*v == "loopback") return dds_loopback_config();
  if (v->front() == '<' || v->rfind("file://", 0) == 0) return *v;
  return "file://" + *v;
}

Ros2Qos qos_of(const SourceUri& uri, Ros2Qos fallback) {
  const std::string* v = find(uri, "qos");
  return v ? parse_ros2_qos(*v, "source URI '" + uri.text + "'") : fallback;
}

Ros2SourceSpec source_spec(const SourceUri& uri) {
  Ros2SourceSpec s;
  s.depth = uri.path;
  for (const char* key : {"reason", "points"})
    DM_EXPECT(!find(uri, key), ConfigError,
              "source URI '" << uri.text << "': " << key << "= is a ros2:// publisher's key, not a source's");
  if (const std::string* c = find(uri, "color")) s.color = *c;
  if (const std::string* m = find(uri, "mask")) s.masks = publish_targets(*m);
  if (const std::string* c = find(uri, "camera_info")) s.camera_info = *c;
  s.qos = qos_of(uri, Ros2Qos::SensorData);
  const std::string* d = find(uri, "domain");
  s.domain = ros_domain_id(d ? *d : "");
  s.dds_config = dds_config_of(uri);
  for (const std::string& t : s.masks) dds_topic_name(t);
  if (!s.color.empty()) dds_topic_name(s.color);
  if (!s.camera_info.empty()) dds_topic_name(s.camera_info);
  return s;
}

class Ros2Source final : public LiveSource {
 public:
  Ros2Source(const SourceUri& uri, const Config& config) : uri_(uri), sub_(source_spec(uri), config) {}

  void open() override { sub_.open(); }

  bool read(CapturedFrame& frame) override {
    Ros2Frame f;
    // The wait is in short steps: a stop (interrupt()) takes effect within one.
    while (!sub_.next(f, std::chrono::milliseconds(100))) {
      if (interrupted_) return false;
      if (sub_.silent_for() > kStall)
        throw InputError(sub_.describe() + ": no depth message for " + std::to_string(kStall.count()) + " s");
    }
    frame.depth = std::move(f.depth);
    frame.mask = std::move(f.mask);
    frame.color = std::move(f.color);
    frame.mask_tests = f.mask_tests;
    frame.header = std::move(f.header);
    frame.camera_info = std::move(f.camera_info);
    frame.sequence = sequence_;
    frame.id = padded_id(sequence_++);
    frame.captured = Clock::now();
    return true;
  }

  void interrupt() override { interrupted_ = true; }
  uint64_t unpaired() const override { return sub_.unpaired(); }
  std::string describe() const override { return sub_.describe(); }

 private:
  SourceUri uri_;
  Ros2Subscriber sub_;
  std::atomic<bool> interrupted_{false};
  uint64_t sequence_ = 0;
};

class Ros2OutputImpl final : public Ros2Output {
 public:
  Ros2OutputImpl(Ros2PublishSpec spec, const Config& config) : pub_(std::move(spec), config) {}
  bool publish(const CapturedFrame& meta, const FrameSlot& slot) override {
    ros::Header h;
    if (meta.header) {
      h = *meta.header;
    } else {  // a source without ROS headers: the capture time on the system clock
      const auto now = std::chrono::system_clock::now() - (Clock::now() - meta.captured);
      h.stamp = ros::Time::from_nanoseconds(
          std::chrono::duration_cast<std::chrono::nanoseconds>(now.time_since_epoch()).count());
      h.frame_id = "depthmask";
    }
    return pub_.publish(h, meta.camera_info.get(), slot);
  }
  bool wants_reason() const override { return pub_.wants_reason(); }

 private:
  Ros2Publisher pub_;
};

}  // namespace

std::unique_ptr<LiveSource> make_ros2_source(const SourceUri& uri, const Config& config) {
  return std::make_unique<Ros2Source>(uri, config);
}

std::unique_ptr<Ros2Output> make_ros2_output(const std::string& text, const Config& config) {
  const SourceUri uri = parse_source_uri(text);
  Ros2PublishSpec s;
  s.node = uri.path;
  for (const char* key : {"color", "camera_info"})
    DM_EXPECT(!find(uri, key), ConfigError,
              "live.publish '" << text << "': " << key << "= is a ros2:// source's key, not a publisher's");
  s.qos = qos_of(uri, Ros2Qos::SensorData);
  const std::string* d = find(uri, "domain");
  s.domain = ros_domain_id(d ? *d : "");
  s.dds_config = dds_config_of(uri);
  s.mask = query_flag(uri, "mask", false);
  s.reason = query_flag(uri, "reason", false);
  s.points = query_flag(uri, "points", false);
  return std::make_unique<Ros2OutputImpl>(std::move(s), config);
}

#else

std::unique_ptr<LiveSource> make_ros2_source(const SourceUri& uri, const Config&) {
  throw ConfigError("source URI '" + uri.text + "': ros2:// is " + ros2_note());
}

std::unique_ptr<Ros2Output> make_ros2_output(const std::string& uri, const Config&) {
  throw ConfigError("live.publish '" + uri + "': ros2:// is " + ros2_note());
}

#endif

}  // namespace depthmask::detail
