#include "peer_dds.h"

#include <fastdds/rtps/transport/UDPv4TransportDescriptor.h>
#include <fastrtps/utils/IPLocator.h>
#include <fastdds/dds/domain/DomainParticipantFactory.hpp>
#include <fastdds/dds/subscriber/SampleInfo.hpp>

#include <algorithm>
#include <chrono>
#include <cstdint>
#include <cstdio>
#include <cstring>
#include <fstream>
#include <thread>

#include "ParticipantEntitiesInfoPubSubTypes.h"

namespace peer {

using Clock = std::chrono::steady_clock;

namespace {
// A net.core buffer limit in bytes; 4 MB when it cannot be read.
uint32_t sysctl_bytes(const char* path) {
  std::ifstream f(path);
  uint64_t v = 0;
  return f >> v && v >= 65536 ? static_cast<uint32_t>(std::min<uint64_t>(v, UINT32_MAX)) : 4u << 20;
}
}  // namespace

fdds::DomainParticipant* make_participant(int domain) {
  fdds::DomainParticipantQos q;
  q.name("depthmask_test_peer");
  auto udp = std::make_shared<eprosima::fastdds::rtps::UDPv4TransportDescriptor>();
  udp->interfaceWhiteList.emplace_back("127.0.0.1");
  // As big as the kernel allows, up to 64 MB (net.core.rmem_max / wmem_max; Fast-DDS refuses a size
  // the kernel cuts): a best-effort message bigger than the buffer is lost whole.
  udp->receiveBufferSize = std::min<uint32_t>(64u << 20, sysctl_bytes("/proc/sys/net/core/rmem_max"));
  udp->sendBufferSize = std::min<uint32_t>(64u << 20, sysctl_bytes("/proc/sys/net/core/wmem_max"));
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

}  // namespace peer
