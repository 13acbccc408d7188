#include "depthmask/detail/dds.h"

#include <dds/ddsi/ddsi_serdata.h>
#include <dds/ddsi/ddsi_sertype.h>

#include <algorithm>
#include <cstdlib>
#include <map>
#include <mutex>

#include "depthmask/cdr.h"
#include "depthmask/errors.h"
#include "raw_cdr_type.h"

namespace depthmask::detail {
namespace {

std::string retcode(dds_return_t rc) { return dds_strretcode(rc < 0 ? rc : -rc); }

// ROS 2 names: letters, digits, '_' and '/' (its tilde and substitution forms are not topics yet).
bool ros_name_chars(const std::string& s) {
  for (const char ch : s) {
    const bool ok =
        (ch >= 'a' && ch <= 'z') || (ch >= 'A' && ch <= 'Z') || (ch >= '0' && ch <= '9') || ch == '_' || ch == '/';
    if (!ok) return false;
  }
  return true;
}

// Jazzy's RIHS01 type hashes (rosidl's sha256 of the type description) of the types depthmask speaks,
// as rosidl_generator_c emits them for sensor_msgs (unchanged since Jazzy).
const char* type_hash(const std::string& ros_type) {
  static const std::map<std::string, const char*> hashes{
      {"sensor_msgs/msg/Image", "d31d41a9a4c4bc8eae9be757b0beed306564f7526c88ea6a4588fb9582527d47"},
      {"sensor_msgs/msg/CompressedImage", "15640771531571185e2efc8a100baf923961a4d15d5569652e6cb6691e8e371a"},
      {"sensor_msgs/msg/CameraInfo", "b3dfd68ff46c9d56c80fd3bd4ed22c7a4ddce8c8348f2f59c299e73118e7e275"},
      {"sensor_msgs/msg/PointCloud2", "9198cabf7da3796ae6fe19c4cb3bdd3525492988c70522628af5daa124bae2b5"},
  };
  const auto it = hashes.find(ros_type);
  return it == hashes.end() ? nullptr : it->second;
}

dds_qos_t* make_qos(Ros2Qos q, const std::string& ros_type) {
  dds_qos_t* qos = dds_create_qos();
  // Jazzy's RMWs put the type hash in every endpoint's user data.
  if (const char* h = type_hash(ros_type)) {
    const std::string ud = std::string("typehash=RIHS01_") + h + ";";
    dds_qset_userdata(qos, ud.data(), ud.size());
  }
  const bool sensor = q == Ros2Qos::SensorData;
  dds_qset_reliability(qos, sensor ? DDS_RELIABILITY_BEST_EFFORT : DDS_RELIABILITY_RELIABLE, DDS_SECS(1));
  dds_qset_history(qos, DDS_HISTORY_KEEP_LAST, sensor ? 5 : 10);
  dds_qset_durability(qos, DDS_DURABILITY_VOLATILE);
  // ROS 2 writes plain CDR (XCDR1); a reader that also accepted XCDR2 would advertise it.
  const dds_data_representation_id_t xcdr1 = DDS_DATA_REPRESENTATION_XCDR1;
  dds_qset_data_representation(qos, 1, &xcdr1);
  return qos;
}

struct QosDeleter {
  void operator()(dds_qos_t* q) const { dds_delete_qos(q); }
};

// The topic of `ros_topic` on `node`, with the raw-CDR sertype of `ros_type`.
dds_entity_t make_topic(const DdsNode& node, const std::string& ros_topic, const std::string& ros_type,
                        const dds_qos_t* qos) {
  ddsi_sertype* st = make_raw_cdr_sertype(dds_type_name(ros_type));
  const std::string name = dds_topic_name(ros_topic);
  const dds_entity_t t = dds_create_topic_sertype(node.participant(), name.c_str(), &st, qos, nullptr, nullptr);
  if (t < 0) {
    ddsi_sertype_unref(st);
    throw InputError("DDS topic " + name + " (" + ros_type + "): " + retcode(t));
  }
  return t;
}

std::mutex& nodes_mutex() {
  static std::mutex m;
  return m;
}
std::map<uint32_t, std::weak_ptr<DdsNode>>& nodes() {
  static std::map<uint32_t, std::weak_ptr<DdsNode>> n;
  return n;
}

}  // namespace

Ros2Qos parse_ros2_qos(const std::string& word, const std::string& what) {
  if (word == "sensor_data") return Ros2Qos::SensorData;
  if (word == "default" || word == "reliable") return Ros2Qos::Default;
  throw ConfigError(what + ": qos '" + word + "' is not a ROS 2 profile; expected sensor_data or default");
}

const char* to_string(Ros2Qos q) { return q == Ros2Qos::SensorData ? "sensor_data" : "default"; }

std::string dds_topic_name(const std::string& ros_topic) {
  DM_EXPECT(!ros_topic.empty() && ros_topic != "/", ConfigError, "ROS 2 topic name is empty");
  DM_EXPECT(ros_name_chars(ros_topic) && ros_topic.find("//") == std::string::npos && ros_topic.back() != '/',
            ConfigError,
            "ROS 2 topic '" << ros_topic << "': expected a name of letters, digits, '_' and single '/' separators");
  return ros_topic.front() == '/' ? "rt" + ros_topic : "rt/" + ros_topic;
}

std::string dds_type_name(const std::string& ros_type) {
  const auto a = ros_type.find('/');
  const auto b = ros_type.rfind('/');
  DM_EXPECT(a != std::string::npos && b != a, ConfigError, "ROS 2 type '" << ros_type << "': expected pkg/msg/Type");
  return ros_type.substr(0, a) + "::" + ros_type.substr(a + 1, b - a - 1) + "::dds_::" + ros_type.substr(b + 1) + "_";
}

uint32_t ros_domain_id(const std::string& given) {
  std::string text = given;
  std::string from = "domain=";
  if (text.empty()) {
    const char* env = std::getenv("ROS_DOMAIN_ID");
    if (!env || !*env) return 0;
    text = env;
    from = "ROS_DOMAIN_ID=";
  }
  char* end = nullptr;
  const long v = std::strtol(text.c_str(), &end, 10);
  DM_EXPECT(end && *end == '\0' && v >= 0 && v <= 232, ConfigError,
            from << text << " is not a DDS domain id; expected a whole number in 0..232");
  return static_cast<uint32_t>(v);
}

const std::string& dds_loopback_config() {
  // CycloneDDS 0.10's schema: the loopback interface by address, unicast discovery to 127.0.0.1
  // (participant indices 0..MaxAutoParticipantIndex on that address), no multicast at all.
  static const std::string xml =
      "<CycloneDDS><Domain Id=\"any\"><General><Interfaces><NetworkInterface address=\"127.0.0.1\"/></Interfaces>"
      "<AllowMulticast>false</AllowMulticast><MaxMessageSize>65500B</MaxMessageSize><FragmentSize>62000B</"
      "FragmentSize></General>"
      "<Discovery><ParticipantIndex>auto</ParticipantIndex><MaxAutoParticipantIndex>32</MaxAutoParticipantIndex>"
      "<Peers><Peer Address=\"127.0.0.1\"/></Peers></Discovery>"
      "<Internal><SocketReceiveBufferSize min=\"default\" max=\"64MB\"/></Internal></Domain></CycloneDDS>";
  return xml;
}

std::shared_ptr<DdsNode> DdsNode::open(uint32_t domain, const std::string& config) {
  std::lock_guard<std::mutex> lock(nodes_mutex());
  if (auto n = nodes()[domain].lock()) {
    DM_EXPECT(n->config_ == config, ConfigError,
              "DDS domain " << domain << " is open in this process with another configuration");
    return n;
  }
  std::shared_ptr<DdsNode> n(new DdsNode(domain, config));
  nodes()[domain] = n;
  return n;
}

DdsNode::DdsNode(uint32_t domain, const std::string& config) : domain_(domain), config_(config) {
  if (!config.empty()) {
    domain_handle_ = dds_create_domain(domain, config.c_str());
    if (domain_handle_ < 0)
      throw InputError("DDS domain " + std::to_string(domain) +
                       ": CycloneDDS refuses the configuration: " + retcode(domain_handle_));
  }
  // rmw_cyclonedds's participant user data: the security enclave, "/" without SROS2.
  const std::unique_ptr<dds_qos_t, QosDeleter> pq(dds_create_qos());
  static const char kEnclave[] = "enclave=/;";
  dds_qset_userdata(pq.get(), kEnclave, sizeof kEnclave - 1);
  participant_ = dds_create_participant(domain, pq.get(), nullptr);
  if (participant_ < 0) {
    if (domain_handle_ > 0) dds_delete(domain_handle_);
    throw InputError("DDS domain " + std::to_string(domain) + ": cannot start a participant (" + retcode(participant_) +
                     "; CYCLONEDDS_URI may name a configuration CycloneDDS refuses)");
  }
  // ros_discovery_info as rmw_dds_common's graph cache publishes it: reliable, transient local, the
  // latest entry only.
  const std::unique_ptr<dds_qos_t, QosDeleter> q(dds_create_qos());
  dds_qset_reliability(q.get(), DDS_RELIABILITY_RELIABLE, DDS_SECS(1));
  dds_qset_durability(q.get(), DDS_DURABILITY_TRANSIENT_LOCAL);
  dds_qset_history(q.get(), DDS_HISTORY_KEEP_LAST, 1);
  ddsi_sertype* st = make_raw_cdr_sertype("rmw_dds_common::msg::dds_::ParticipantEntitiesInfo_");
  const dds_entity_t t = dds_create_topic_sertype(participant_, "ros_discovery_info", &st, q.get(), nullptr, nullptr);
  if (t < 0) ddsi_sertype_unref(st);
  discovery_ = t < 0 ? t : dds_create_writer(participant_, t, q.get(), nullptr);
  std::lock_guard<std::mutex> lock(graph_mutex_);
  announce();
}

void DdsNode::graph_add(dds_entity_t endpoint, bool writer) {
  std::lock_guard<std::mutex> lock(graph_mutex_);
  endpoints_.emplace_back(endpoint, writer);
  announce();
}

void DdsNode::graph_remove(dds_entity_t endpoint) {
  std::lock_guard<std::mutex> lock(graph_mutex_);
  endpoints_.erase(std::remove_if(endpoints_.begin(), endpoints_.end(),
                                  [&](const std::pair<dds_entity_t, bool>& e) { return e.first == endpoint; }),
                   endpoints_.end());
  announce();
}

// rmw_dds_common/msg/ParticipantEntitiesInfo: the participant's GID, then one NodeEntitiesInfo
// (namespace "/", name "depthmask", its readers' and writers' GIDs). GIDs as Jazzy's Gid.msg has
// them: 16 bytes, the DDS GUID (Humble's were 24: the GUID and 8 zero bytes).
void DdsNode::announce() {
  if (discovery_ <= 0) return;  // best effort: the topics work without it
  auto gid = [](ros::CdrWriter& w, dds_entity_t e) {
    dds_guid_t g{};
    dds_get_guid(e, &g);
    for (const uint8_t b : g.v) w.u8(b);
  };
  ros::CdrWriter w;
  gid(w, participant_);
  w.u32(1);
  w.string("/");
  w.string("depthmask");
  for (const bool writers : {false, true}) {
    w.u32(static_cast<uint32_t>(
        std::count_if(endpoints_.begin(), endpoints_.end(), [&](const auto& e) { return e.second == writers; })));
    for (const auto& e : endpoints_)
      if (e.second == writers) gid(w, e.first);
  }
  const RawCdrSample sample{std::make_shared<const std::vector<uint8_t>>(w.take())};
  dds_write(discovery_, &sample);
}

DdsNode::~DdsNode() {
  dds_delete(participant_);
  if (domain_handle_ > 0) dds_delete(domain_handle_);
}

DdsWriter::DdsWriter(std::shared_ptr<DdsNode> node, const std::string& ros_topic, const std::string& ros_type,
                     Ros2Qos qos)
    : node_(std::move(node)), topic_(ros_topic) {
  const std::unique_ptr<dds_qos_t, QosDeleter> q(make_qos(qos, ros_type));
  const dds_entity_t t = make_topic(*node_, ros_topic, ros_type, q.get());
  writer_ = dds_create_writer(node_->participant(), t, q.get(), nullptr);
  if (writer_ < 0) throw OutputError("DDS writer for " + ros_topic + ": " + retcode(writer_));
  node_->graph_add(writer_, true);
}

DdsWriter::~DdsWriter() {
  node_->graph_remove(writer_);
  dds_delete(writer_);
}

bool DdsWriter::matched() const {
  dds_publication_matched_status_t st{};
  return dds_get_publication_matched_status(writer_, &st) == DDS_RETCODE_OK && st.current_count > 0;
}

void DdsWriter::write(CdrBytes bytes) {
  const RawCdrSample s{std::move(bytes)};
  const dds_return_t rc = dds_write(writer_, &s);
  if (rc < 0) throw OutputError("publishing on " + topic_ + ": " + retcode(rc));
}

DdsReader::DdsReader(std::shared_ptr<DdsNode> node, const std::string& ros_topic, const std::string& ros_type,
                     Ros2Qos qos)
    : node_(std::move(node)), topic_(ros_topic) {
  const std::unique_ptr<dds_qos_t, QosDeleter> q(make_qos(qos, ros_type));
  const dds_entity_t t = make_topic(*node_, ros_topic, ros_type, q.get());
  reader_ = dds_create_reader(node_->participant(), t, q.get(), nullptr);
  if (reader_ < 0) throw InputError("DDS reader for " + ros_topic + ": " + retcode(reader_));
  node_->graph_add(reader_, false);
}

DdsReader::~DdsReader() {
  node_->graph_remove(reader_);
  dds_delete(reader_);
}

size_t DdsReader::take(const std::function<void(const CdrBytes&)>& fn) {
  constexpr uint32_t kBatch = 16;
  size_t total = 0;
  for (;;) {
    ddsi_serdata* got[kBatch];
    dds_sample_info_t info[kBatch];
    const dds_return_t n = dds_takecdr(reader_, got, kBatch, info, DDS_ANY_STATE);
    if (n <= 0) return total;
    std::exception_ptr err;
    for (dds_return_t i = 0; i < n; ++i) {
      const CdrBytes b = raw_cdr_bytes(got[i]);
      if (!err && info[i].valid_data && b) {
        try {
          fn(b);
        } catch (...) {
          err = std::current_exception();
        }
      }
      ddsi_serdata_unref(got[i]);
    }
    total += static_cast<size_t>(n);
    if (err) std::rethrow_exception(err);
  }
}

DdsWaitSet::DdsWaitSet(const DdsNode& node) : ws_(dds_create_waitset(node.participant())) {
  if (ws_ < 0) throw InputError("DDS waitset: " + retcode(ws_));
}

DdsWaitSet::~DdsWaitSet() {
  for (const dds_entity_t c : conditions_) dds_delete(c);
  dds_delete(ws_);
}

void DdsWaitSet::attach(const DdsReader& r) {
  const dds_entity_t c = dds_create_readcondition(r.handle(), DDS_ANY_STATE);
  if (c < 0) throw InputError("DDS read condition for " + r.topic() + ": " + retcode(c));
  conditions_.push_back(c);
  dds_waitset_attach(ws_, c, 0);
}

bool DdsWaitSet::wait(std::chrono::milliseconds timeout) {
  return dds_waitset_wait(ws_, nullptr, 0, DDS_MSECS(timeout.count())) > 0;
}

}  // namespace depthmask::detail
