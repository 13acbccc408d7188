// The Fast-DDS peer's DDS side (dds_peer.cpp): its loopback-only participant, ROS 2's QoS profiles
// as Fast-DDS settings, and the check of depthmask's ros_discovery_info entry.
#pragma once

#include <fastdds/dds/domain/DomainParticipant.hpp>
#include <fastdds/dds/publisher/qos/DataWriterQos.hpp>
#include <fastdds/dds/subscriber/DataReader.hpp>
#include <fastdds/dds/subscriber/qos/DataReaderQos.hpp>

#include <string>

namespace peer {

namespace fdds = eprosima::fastdds::dds;

/// A participant on `domain` that talks over 127.0.0.1 only (UDPv4 whitelisting it, no shared
/// memory, no multicast), participant id 20; null when Fast-DDS refuses.
fdds::DomainParticipant* make_participant(int domain);
/// ROS 2's sensor_data (best effort, keep last 5) or default (reliable, keep last 10) profile.
void set_qos(fdds::DataWriterQos& w, bool sensor);
/// The reader's side of the profile, with a history of 30 to hold three passes.
void set_qos(fdds::DataReaderQos& r, bool sensor);
/// Empty when `graph_r` (ros_discovery_info) names node /depthmask with 3 readers and, among its
/// writers, `writer` (the GID /depthmask/depth came from); else what is missing. Waits up to 5 s.
std::string check_graph(fdds::DataReader* graph_r, const fdds::InstanceHandle_t& writer);

/// The latency benchmark's side (peer_latency.cpp): FRAMES synthetic WIDTHxHEIGHT depth frames at 30 Hz,
/// the time to each /depthmask/depth (with `subscribe`), p50/p99 printed. 0, or 1/2 on a failure.
int latency(int domain, bool sensor, int w, int h, const std::string& enc, int frames, bool subscribe);

}  // namespace peer
