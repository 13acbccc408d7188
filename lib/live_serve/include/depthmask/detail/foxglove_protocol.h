// The Foxglove WebSocket protocol (subprotocol foxglove.websocket.v1) as this read-only server speaks
// it: the JSON messages it sends (serverInfo, advertise, unadvertise, status), the client operations
// it accepts (subscribe, unsubscribe; everything else is refused with a status), and the binary
// messageData header. Facts from the protocol's spec (foxglove/ws-protocol, docs/spec.md).
#pragma once

#include <array>
#include <cstdint>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

namespace depthmask::detail {

inline constexpr const char* kFoxgloveSubprotocol = "foxglove.websocket.v1";

// One advertised channel.
struct ChannelSpec {
  uint32_t id = 0;
  std::string topic, encoding, schema_name, schema_encoding, schema;
};

// Status levels of the spec's status message.
enum class StatusLevel { Info = 0, Warning = 1, Error = 2 };

// serverInfo: no capabilities (no clientPublish, parameters, services, assets), no encodings a client
// may publish in.
std::string server_info_json(const std::string& name, const std::string& session_id);
std::string advertise_json(const std::vector<ChannelSpec>& channels);
std::string unadvertise_json(const std::vector<uint32_t>& channel_ids);
std::string status_json(StatusLevel level, const std::string& message);

// A client's text message, parsed. Subscribe and Unsubscribe carry their ids; Refused is a known op
// this server does not offer (it changes something, or needs a capability not advertised); Bad is
// malformed JSON, an unknown op or fields of the wrong type. `error` says what for the status reply.
struct ClientOp {
  enum class Kind { Subscribe, Unsubscribe, Refused, Bad };
  Kind kind = Kind::Bad;
  std::vector<std::pair<uint32_t, uint32_t>> subscribe;  // (subscription id, channel id)
  std::vector<uint32_t> unsubscribe;                     // subscription ids
  std::string error;
};
ClientOp parse_client_op(std::string_view text);

// The binary messageData frame's header: opcode 0x01, u32 subscription id, u64 timestamp (ns), all
// little-endian; the message's payload follows.
inline constexpr size_t kMessageDataHeader = 13;
std::array<uint8_t, kMessageDataHeader> message_data_header(uint32_t subscription_id, uint64_t timestamp_ns);

// live.serve_token on a request: whether `target` (an HTTP request target, "/path?query") carries
// token=... equal to `token` once percent-decoded. True when `token` is empty.
bool token_ok(std::string_view target, const std::string& token);

}  // namespace depthmask::detail
