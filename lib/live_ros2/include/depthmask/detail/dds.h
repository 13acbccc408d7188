// ROS 2 topics on CycloneDDS without ROS: ROS's names mapped to DDS's (topic "rt/<name>", type
// "pkg::msg::dds_::Type_"), its QoS profiles, and readers and writers whose samples are CDR payloads
// made and read by depthmask's own codec (lib/ros). One DDS participant per domain per process, shared
// by the ros2:// source and the ros2:// publisher (one ROS node, /depthmask).
#pragma once

#include <dds/dds.h>

#include <chrono>
#include <cstdint>
#include <functional>
#include <memory>
#include <mutex>
#include <string>
#include <vector>

namespace depthmask::detail {

/// A CDR payload, encapsulation header included (the bytes lib/ros's codec writes and reads).
using CdrBytes = std::shared_ptr<const std::vector<uint8_t>>;

/// ROS 2's QoS profiles (rmw/qos_profiles.h): sensor_data = best effort, keep last 5, volatile;
/// default = reliable, keep last 10, volatile.
enum class Ros2Qos { SensorData, Default };
/// "sensor_data" or "default"; ConfigError naming `what` otherwise.
Ros2Qos parse_ros2_qos(const std::string& word, const std::string& what);
const char* to_string(Ros2Qos q);

/// "/camera/depth" → "rt/camera/depth"; a name without the leading '/' is taken as absolute.
/// ConfigError for an empty name or one with characters ROS names do not allow.
std::string dds_topic_name(const std::string& ros_topic);
/// "sensor_msgs/msg/Image" → "sensor_msgs::msg::dds_::Image_" (rosidl's DDS type name).
std::string dds_type_name(const std::string& ros_type);

/// The domain: `given` (a URI's domain=) when set, else ROS_DOMAIN_ID, else 0. ConfigError for a
/// value outside 0..232 (the ports a domain id maps to must fit in 16 bits).
uint32_t ros_domain_id(const std::string& given);

/// A CycloneDDS configuration (XML) that keeps DDS on this machine: the loopback interface only,
/// no multicast, the one peer 127.0.0.1 (what every test, benchmark and example here runs with).
const std::string& dds_loopback_config();

/// One DDS participant (a ROS node). `config`: a CycloneDDS XML text or file:// URI for the domain;
/// empty = CycloneDDS's own (CYCLONEDDS_URI, else its defaults: what ROS's rmw_cyclonedds uses).
class DdsNode {
 public:
  /// The process's participant for `domain`, made on first use. Throws InputError when DDS cannot
  /// start (a configuration it refuses) and ConfigError when `config` differs from the one the
  /// domain was started with in this process.
  static std::shared_ptr<DdsNode> open(uint32_t domain, const std::string& config);
  ~DdsNode();
  DdsNode(const DdsNode&) = delete;
  DdsNode& operator=(const DdsNode&) = delete;
  dds_entity_t participant() const { return participant_; }
  uint32_t domain() const { return domain_; }
  /// ROS 2's graph: a reader or writer of the node /depthmask, announced on `ros_discovery_info`
  /// (rmw_dds_common's ParticipantEntitiesInfo, Jazzy's 16-byte GIDs) so `ros2 node list` shows it.
  void graph_add(dds_entity_t endpoint, bool writer);
  void graph_remove(dds_entity_t endpoint);

 private:
  DdsNode(uint32_t domain, const std::string& config);
  void announce();  // the graph's current entry on ros_discovery_info (graph_mutex_ held)
  uint32_t domain_;
  std::string config_;
  std::mutex graph_mutex_;
  std::vector<std::pair<dds_entity_t, bool>> endpoints_;  // (entity, is a writer)
  dds_entity_t discovery_ = 0;                            // the ros_discovery_info writer
  dds_entity_t domain_handle_ = 0;
  dds_entity_t participant_ = 0;
};

/// A writer of one ROS 2 topic.
class DdsWriter {
 public:
  DdsWriter(std::shared_ptr<DdsNode> node, const std::string& ros_topic, const std::string& ros_type, Ros2Qos qos);
  ~DdsWriter();
  DdsWriter(const DdsWriter&) = delete;
  DdsWriter& operator=(const DdsWriter&) = delete;
  /// Whether any reader is matched: with none, the caller need not encode anything.
  bool matched() const;
  /// Sends `bytes` (shared with DDS, not copied). Throws OutputError with CycloneDDS's reason.
  void write(CdrBytes bytes);
  const std::string& topic() const { return topic_; }

 private:
  std::shared_ptr<DdsNode> node_;
  std::string topic_;
  dds_entity_t writer_ = 0;
};

/// A reader of one ROS 2 topic; its history (the QoS's depth) bounds what waits to be taken.
class DdsReader {
 public:
  DdsReader(std::shared_ptr<DdsNode> node, const std::string& ros_topic, const std::string& ros_type, Ros2Qos qos);
  ~DdsReader();
  DdsReader(const DdsReader&) = delete;
  DdsReader& operator=(const DdsReader&) = delete;
  /// Takes every sample waiting, oldest first, handing each payload to `fn`; returns how many.
  size_t take(const std::function<void(const CdrBytes&)>& fn);
  dds_entity_t handle() const { return reader_; }
  const std::string& topic() const { return topic_; }

 private:
  std::shared_ptr<DdsNode> node_;
  std::string topic_;
  dds_entity_t reader_ = 0;
};

/// Waits for data on a set of readers.
class DdsWaitSet {
 public:
  explicit DdsWaitSet(const DdsNode& node);
  ~DdsWaitSet();
  DdsWaitSet(const DdsWaitSet&) = delete;
  DdsWaitSet& operator=(const DdsWaitSet&) = delete;
  void attach(const DdsReader& r);
  /// True when a reader has data, false when `timeout` passed first.
  bool wait(std::chrono::milliseconds timeout);

 private:
  dds_entity_t ws_ = 0;
  std::vector<dds_entity_t> conditions_;
};

}  // namespace depthmask::detail
