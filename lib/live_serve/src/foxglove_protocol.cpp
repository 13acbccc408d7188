// The Foxglove WebSocket protocol's messages (foxglove_protocol.h), in JSON through nlohmann_json.
#include "depthmask/detail/foxglove_protocol.h"

#include <nlohmann/json.hpp>

#include <cctype>
#include <limits>

namespace depthmask::detail {

namespace {

using Json = nlohmann::json;

// A subscription or channel id: an unsigned integer that fits 32 bits.
bool read_u32(const Json& v, uint32_t& out) {
  if (!v.is_number_integer()) return false;
  if (v.is_number_unsigned()) {
    const auto u = v.get<uint64_t>();
    if (u > std::numeric_limits<uint32_t>::max()) return false;
    out = static_cast<uint32_t>(u);
    return true;
  }
  const auto i = v.get<int64_t>();
  if (i < 0 || i > int64_t{std::numeric_limits<uint32_t>::max()}) return false;
  out = static_cast<uint32_t>(i);
  return true;
}

std::string percent_decode(std::string_view s) {
  std::string out;
  for (size_t i = 0; i < s.size(); ++i) {
    if (s[i] == '%' && i + 2 < s.size() && std::isxdigit(static_cast<unsigned char>(s[i + 1])) &&
        std::isxdigit(static_cast<unsigned char>(s[i + 2]))) {
      out += static_cast<char>(std::stoi(std::string(s.substr(i + 1, 2)), nullptr, 16));
      i += 2;
    } else {
      out += s[i] == '+' ? ' ' : s[i];
    }
  }
  return out;
}

ClientOp bad(std::string why) {
  ClientOp op;
  op.kind = ClientOp::Kind::Bad;
  op.error = std::move(why);
  return op;
}

ClientOp parse_subscribe(const Json& j) {
  const auto subs = j.find("subscriptions");
  if (subs == j.end() || !subs->is_array())
    return bad("subscribe: expected \"subscriptions\": [{\"id\": N, \"channelId\": N}, ...]");
  ClientOp op;
  op.kind = ClientOp::Kind::Subscribe;
  for (const Json& s : *subs) {
    uint32_t id = 0, channel = 0;
    if (!s.is_object() || !s.contains("id") || !s.contains("channelId") || !read_u32(s["id"], id) ||
        !read_u32(s["channelId"], channel))
      return bad("subscribe: each subscription needs \"id\" and \"channelId\", unsigned 32-bit integers");
    op.subscribe.emplace_back(id, channel);
  }
  return op;
}

ClientOp parse_unsubscribe(const Json& j) {
  const auto ids = j.find("subscriptionIds");
  if (ids == j.end() || !ids->is_array()) return bad("unsubscribe: expected \"subscriptionIds\": [N, ...]");
  ClientOp op;
  op.kind = ClientOp::Kind::Unsubscribe;
  for (const Json& v : *ids) {
    uint32_t id = 0;
    if (!read_u32(v, id)) return bad("unsubscribe: subscription ids are unsigned 32-bit integers");
    op.unsubscribe.push_back(id);
  }
  return op;
}

}  // namespace

std::string server_info_json(const std::string& name, const std::string& session_id) {
  Json j{{"op", "serverInfo"},
         {"name", name},
         {"capabilities", Json::array()},
         {"supportedEncodings", Json::array()},
         {"metadata", Json::object()},
         {"sessionId", session_id}};
  return j.dump();
}

std::string advertise_json(const std::vector<ChannelSpec>& channels) {
  Json list = Json::array();
  for (const ChannelSpec& c : channels)
    list.push_back({{"id", c.id},
                    {"topic", c.topic},
                    {"encoding", c.encoding},
                    {"schemaName", c.schema_name},
                    {"schema", c.schema},
                    {"schemaEncoding", c.schema_encoding}});
  return Json{{"op", "advertise"}, {"channels", list}}.dump();
}

std::string unadvertise_json(const std::vector<uint32_t>& channel_ids) {
  return Json{{"op", "unadvertise"}, {"channelIds", channel_ids}}.dump();
}

std::string status_json(StatusLevel level, const std::string& message) {
  // Replaces bytes that are not UTF-8 rather than throwing: a message may quote what a client sent.
  return Json{{"op", "status"}, {"level", static_cast<int>(level)}, {"message", message}}.dump(
      -1, ' ', false, Json::error_handler_t::replace);
}

ClientOp parse_client_op(std::string_view text) {
  const Json j = Json::parse(text.begin(), text.end(), nullptr, false);
  if (j.is_discarded()) return bad("malformed JSON");
  if (!j.is_object()) return bad("expected a JSON object with an \"op\"");
  const auto op = j.find("op");
  if (op == j.end() || !op->is_string()) return bad("expected a JSON object with an \"op\" string");
  const std::string& name = op->get_ref<const std::string&>();
  if (name == "subscribe") return parse_subscribe(j);
  if (name == "unsubscribe") return parse_unsubscribe(j);
  // The spec's other client operations: each needs a capability this server does not advertise.
  static const char* const kRefused[] = {"advertise",
                                         "unadvertise",
                                         "getParameters",
                                         "setParameters",
                                         "subscribeParameterUpdates",
                                         "unsubscribeParameterUpdates",
                                         "subscribeConnectionGraph",
                                         "unsubscribeConnectionGraph",
                                         "fetchAsset",
                                         "callService"};
  for (const char* r : kRefused) {
    if (name == r) {
      ClientOp refused;
      refused.kind = ClientOp::Kind::Refused;
      refused.error = "'" + name + "' is not supported: this server is read-only (capabilities: none)";
      return refused;
    }
  }
  return bad("unknown op '" + name + "'");
}

std::array<uint8_t, kMessageDataHeader> message_data_header(uint32_t subscription_id, uint64_t timestamp_ns) {
  std::array<uint8_t, kMessageDataHeader> h{};
  h[0] = 0x01;
  for (int i = 0; i < 4; ++i) h[1 + size_t(i)] = static_cast<uint8_t>(subscription_id >> (8 * i));
  for (int i = 0; i < 8; ++i) h[5 + size_t(i)] = static_cast<uint8_t>(timestamp_ns >> (8 * i));
  return h;
}

bool token_ok(std::string_view target, const std::string& token) {
  if (token.empty()) return true;
  const size_t q = target.find('?');
  if (q == std::string_view::npos) return false;
  std::string_view query = target.substr(q + 1);
  while (!query.empty()) {
    const size_t amp = query.find('&');
    const std::string_view pair = query.substr(0, amp);
    if (pair.substr(0, 6) == "token=") {
      const std::string got = percent_decode(pair.substr(6));
      // Compared in full whatever differs first: the time does not tell how much of it was right.
      unsigned diff = got.size() == token.size() ? 0u : 1u;
      for (size_t i = 0; i < got.size() && i < token.size(); ++i) diff |= unsigned(got[i] ^ token[i]);
      return diff == 0;
    }
    if (amp == std::string_view::npos) break;
    query = query.substr(amp + 1);
  }
  return false;
}

}  // namespace depthmask::detail
