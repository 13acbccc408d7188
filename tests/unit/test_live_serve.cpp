// live --serve's pieces (lib/live_serve): the Foxglove protocol's client operations and messages, the
// messageData header, the per-client drop-oldest queue, the token, live.serve's address, the point
// cloud's subsampling, the kept mask; and the server itself over a loopback socket (HTTP: the page,
// 404, the token), skipped in a build without it.
#include <arpa/inet.h>
#include <gtest/gtest.h>
#include <netinet/in.h>
#include <sys/socket.h>
#include <unistd.h>

#include <nlohmann/json.hpp>

#include <cmath>
#include <limits>
#include <string>

#include "depthmask/detail/drop_queue.h"
#include "depthmask/detail/foxglove_protocol.h"
#include "depthmask/detail/serve_encode.h"
#include "depthmask/errors.h"
#include "depthmask/kernels/backproject.h"
#include "depthmask/live_server.h"

namespace dm = depthmask;
namespace d = depthmask::detail;
using Kind = d::ClientOp::Kind;

TEST(LiveServeProtocol, SubscribeAndUnsubscribeParse) {
  d::ClientOp op =
      d::parse_client_op(R"({"op":"subscribe","subscriptions":[{"id":0,"channelId":3},{"id":7,"channelId":1}]})");
  ASSERT_EQ(op.kind, Kind::Subscribe);
  ASSERT_EQ(op.subscribe.size(), 2u);
  EXPECT_EQ(op.subscribe[0], std::make_pair(0u, 3u));
  EXPECT_EQ(op.subscribe[1], std::make_pair(7u, 1u));
  op = d::parse_client_op(R"({"op":"unsubscribe","subscriptionIds":[7, 4294967295]})");
  ASSERT_EQ(op.kind, Kind::Unsubscribe);
  EXPECT_EQ(op.unsubscribe, (std::vector<uint32_t>{7u, 4294967295u}));
}

TEST(LiveServeProtocol, BadMessagesSayWhat) {
  const std::pair<const char*, const char*> cases[] = {
      {"not json", "malformed JSON"},
      {"", "malformed JSON"},
      {"[1]", "\"op\""},
      {R"({"op": 3})", "\"op\""},
      {R"({"op":"dance"})", "unknown op 'dance'"},
      {R"({"op":"subscribe"})", "subscriptions"},
      {R"({"op":"subscribe","subscriptions":[{"id":-1,"channelId":1}]})", "unsigned 32-bit"},
      {R"({"op":"subscribe","subscriptions":[{"id":1.5,"channelId":1}]})", "unsigned 32-bit"},
      {R"({"op":"subscribe","subscriptions":[{"id":4294967296,"channelId":1}]})", "unsigned 32-bit"},
      {R"({"op":"subscribe","subscriptions":[{"id":1}]})", "channelId"},
      {R"({"op":"unsubscribe","subscriptionIds":["1"]})", "unsigned 32-bit"},
  };
  for (const auto& [text, why] : cases) {
    const d::ClientOp op = d::parse_client_op(text);
    EXPECT_EQ(op.kind, Kind::Bad) << text;
    EXPECT_NE(op.error.find(why), std::string::npos) << text << ": " << op.error;
  }
}

TEST(LiveServeProtocol, OpsThatChangeSomethingAreRefused) {
  for (const char* name : {"advertise", "unadvertise", "setParameters", "getParameters", "subscribeParameterUpdates",
                           "callService", "fetchAsset", "subscribeConnectionGraph"}) {
    const d::ClientOp op = d::parse_client_op(std::string(R"({"op":")") + name + R"("})");
    EXPECT_EQ(op.kind, Kind::Refused) << name;
    EXPECT_NE(op.error.find("read-only"), std::string::npos) << op.error;
  }
}

TEST(LiveServeProtocol, ServerMessagesAreTheSpecsJson) {
  const auto info = nlohmann::json::parse(d::server_info_json("depthmask", "7"));
  EXPECT_EQ(info["op"], "serverInfo");
  EXPECT_EQ(info["name"], "depthmask");
  EXPECT_TRUE(info["capabilities"].is_array() && info["capabilities"].empty());
  EXPECT_TRUE(info["supportedEncodings"].is_array());
  const d::ChannelSpec depth = d::channel_spec(d::ServedChannel::Depth, false);
  const auto adv = nlohmann::json::parse(d::advertise_json({depth}));
  EXPECT_EQ(adv["op"], "advertise");
  EXPECT_EQ(adv["channels"][0]["id"], 3);
  EXPECT_EQ(adv["channels"][0]["topic"], "/depthmask/depth");
  EXPECT_EQ(adv["channels"][0]["encoding"], "cdr");
  EXPECT_EQ(adv["channels"][0]["schemaName"], "sensor_msgs/msg/CompressedImage");
  EXPECT_EQ(adv["channels"][0]["schemaEncoding"], "ros2msg");
  EXPECT_NE(adv["channels"][0]["schema"].get<std::string>().find("string format"), std::string::npos);
  EXPECT_EQ(d::channel_spec(d::ServedChannel::Depth, true).schema_name, "sensor_msgs/msg/Image");
  const d::ChannelSpec stats = d::channel_spec(d::ServedChannel::Stats, false);
  EXPECT_EQ(stats.encoding, "json");
  EXPECT_EQ(stats.schema_encoding, "jsonschema");
  EXPECT_EQ(stats.schema_name, "depthmask.LiveStats");
  EXPECT_NO_THROW((void)nlohmann::json::parse(stats.schema));
  EXPECT_EQ(nlohmann::json::parse(d::unadvertise_json({1, 5}))["channelIds"], nlohmann::json::array({1, 5}));
  const auto st = nlohmann::json::parse(d::status_json(d::StatusLevel::Error, std::string("bad \xff byte")));
  EXPECT_EQ(st["op"], "status");
  EXPECT_EQ(st["level"], 2);
}

TEST(LiveServeProtocol, MessageDataHeaderIsLittleEndian) {
  const auto h = d::message_data_header(0x04030201u, 0x0c0b0a0908070605ull);
  const uint8_t want[13] = {0x01, 1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12};
  for (size_t i = 0; i < 13; ++i) EXPECT_EQ(h[i], want[i]) << i;
}

TEST(LiveServeProtocol, StatsCarryTheClientsOwnDrops) {
  d::ServedCopy f;
  f.id = "a\"b";
  f.sequence = 9;
  f.fps = 29.5;
  f.stats.processed = 100;
  f.stats.failed = 2;
  f.depth = cv::Mat(2, 2, CV_32FC1, cv::Scalar(1));
  const std::vector<uint8_t> prefix = d::encode_channel(d::ServedChannel::Stats, f, {});
  const std::vector<uint8_t> msg = d::stats_for_client(prefix, 41);
  const auto j = nlohmann::json::parse(msg.begin(), msg.end());
  EXPECT_EQ(j["id"], "a\"b");
  EXPECT_EQ(j["sequence"], 9);
  EXPECT_DOUBLE_EQ(j["fps"].get<double>(), 29.5);
  EXPECT_EQ(j["processed"], 100);
  EXPECT_EQ(j["failed"], 2);
  EXPECT_EQ(j["client_dropped"], 41);
  for (const char* k : {"latency_p50_us", "latency_p99_us", "drops_overflow", "drops_unpaired"})
    EXPECT_TRUE(j.contains(k)) << k;
}

TEST(LiveServeQueue, FullQueueDropsTheOldestAndCounts) {
  d::DropOldestQueue<int> q(3);
  for (int i = 1; i <= 3; ++i) EXPECT_FALSE(q.push(i));
  EXPECT_TRUE(q.push(4));
  EXPECT_TRUE(q.push(5));
  EXPECT_EQ(q.size(), 3u);
  EXPECT_EQ(q.dropped(), 2u);
  EXPECT_EQ(q.pop(), 3);
  EXPECT_FALSE(q.push(6));
  EXPECT_EQ(q.pop(), 4);
  EXPECT_EQ(q.pop(), 5);
  EXPECT_EQ(q.pop(), 6);
  EXPECT_TRUE(q.empty());
  EXPECT_EQ(d::DropOldestQueue<int>(0).capacity(), 1u);  // never unbounded, never zero
}

TEST(LiveServeToken, QueryTokenIsRequiredWhenSet) {
  EXPECT_TRUE(d::token_ok("/", ""));
  EXPECT_FALSE(d::token_ok("/", "abc"));
  EXPECT_FALSE(d::token_ok("/?token=abd", "abc"));
  EXPECT_FALSE(d::token_ok("/?token=ab", "abc"));
  EXPECT_FALSE(d::token_ok("/?tok=abc", "abc"));
  EXPECT_TRUE(d::token_ok("/?token=abc", "abc"));
  EXPECT_TRUE(d::token_ok("/index.html?x=1&token=a%2Fb%2B", "a/b+"));
}

TEST(LiveServeAddress, PortOrAddressAndPort) {
  dm::ServeAddress a = dm::parse_serve_address("8765");
  EXPECT_EQ(a.host, "127.0.0.1");
  EXPECT_EQ(a.port, 8765);
  a = dm::parse_serve_address("0.0.0.0:0");
  EXPECT_EQ(a.host, "0.0.0.0");
  EXPECT_EQ(a.port, 0);
  a = dm::parse_serve_address("[::1]:9000");
  EXPECT_EQ(a.host, "::1");
  EXPECT_EQ(a.port, 9000);
  for (const char* bad : {"", "x", ":80", "host:", "1.2.3.4:65536", "1.2.3.4:-1"})
    EXPECT_THROW(dm::parse_serve_address(bad), dm::ConfigError) << bad;
}

namespace {
dm::Intrinsics pinhole() {
  dm::Intrinsics k;
  k.fx = 100, k.fy = 120, k.cx = 10.5, k.cy = 4.25;
  return k;
}
}  // namespace

TEST(LiveServePoints, AllKeptPixelsWhenFewerThanTheCap) {
  cv::Mat depth(7, 9, CV_32FC1, cv::Scalar(0));
  const float nan = std::numeric_limits<float>::quiet_NaN();
  depth.at<float>(0, 0) = 1.5f;
  depth.at<float>(2, 3) = 0.25f;
  depth.at<float>(6, 8) = 3.0f;
  depth.at<float>(1, 1) = nan;   // not kept
  depth.at<float>(1, 2) = -1.f;  // not kept
  size_t kept = 0;
  const std::vector<float> xyz = d::served_points(depth, 0.f, pinhole(), 50000, &kept);
  EXPECT_EQ(kept, 3u);
  ASSERT_EQ(xyz.size(), 9u);
  const dm::Pinhole pin = dm::make_pinhole(100, 120, 10.5, 4.25);
  const int px[3][2] = {{0, 0}, {3, 2}, {8, 6}};
  for (int i = 0; i < 3; ++i) {
    float want[3];
    dm::backproject_pixel(px[i][0], px[i][1], depth.at<float>(px[i][1], px[i][0]), 0.f, pin, want);
    for (int c = 0; c < 3; ++c) EXPECT_EQ(xyz[size_t(3 * i + c)], want[c]) << i << "," << c;
  }
}

TEST(LiveServePoints, SubsampledEvenlyToTheCap) {
  cv::Mat depth(300, 300, CV_32FC1);
  for (int v = 0; v < depth.rows; ++v)
    for (int u = 0; u < depth.cols; ++u) depth.at<float>(v, u) = 1.0f + float(v * 300 + u) * 1e-5f;
  size_t kept = 0;
  const std::vector<float> xyz = d::served_points(depth, 0.f, pinhole(), d::kMaxServedPoints, &kept);
  EXPECT_EQ(kept, 90000u);
  ASSERT_EQ(xyz.size(), 3 * d::kMaxServedPoints);
  // The i-th point is pixel floor(i * 90000 / 50000): z tells which pixel it is.
  for (size_t i = 0; i < d::kMaxServedPoints; i += 997) {
    const size_t p = i * 90000 / d::kMaxServedPoints;
    EXPECT_EQ(xyz[3 * i + 2], depth.at<float>(int(p / 300), int(p % 300))) << i;
  }
  EXPECT_EQ(xyz[2], depth.at<float>(0, 0));
  // Exactly the cap when one more pixel than the cap is kept, all of them when exactly the cap.
  cv::Mat small = depth.rowRange(0, 167).clone();  // 50100 pixels
  EXPECT_EQ(d::served_points(small, 0.f, pinhole(), 50100).size(), 3u * 50100);
  EXPECT_EQ(d::served_points(small, 0.f, pinhole(), 50099).size(), 3u * 50099);
}

TEST(LiveServeMask, KeptWhereTheOutputIsNotInvalid) {
  cv::Mat depth = (cv::Mat_<float>(1, 4) << 0.f, 1.f, std::numeric_limits<float>::quiet_NaN(), 2.f);
  const cv::Mat m0 = d::kept_mask(depth, 0.f);
  EXPECT_EQ(m0.at<uint8_t>(0), 0);
  EXPECT_EQ(m0.at<uint8_t>(1), 255);
  EXPECT_EQ(m0.at<uint8_t>(2), 255);  // NaN is not output.invalid 0: as the bag's mask reads it
  const cv::Mat mn = d::kept_mask(depth, std::numeric_limits<float>::quiet_NaN());
  EXPECT_EQ(mn.at<uint8_t>(0), 255);
  EXPECT_EQ(mn.at<uint8_t>(2), 0);
}

namespace {
// One HTTP/1.1 request over loopback; the whole response (the server closes after an error status,
// and the request asks it to close).
std::string http_get(uint16_t port, const std::string& target) {
  const int fd = ::socket(AF_INET, SOCK_STREAM, 0);
  sockaddr_in a{};
  a.sin_family = AF_INET;
  a.sin_port = htons(port);
  a.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
  if (::connect(fd, reinterpret_cast<sockaddr*>(&a), sizeof a) != 0) {
    ::close(fd);
    return "";
  }
  const std::string req = "GET " + target + " HTTP/1.1\r\nHost: x\r\nConnection: close\r\n\r\n";
  (void)::send(fd, req.data(), req.size(), 0);
  std::string out;
  char buf[4096];
  ssize_t n = 0;
  while ((n = ::recv(fd, buf, sizeof buf, 0)) > 0) out.append(buf, size_t(n));
  ::close(fd);
  return out;
}
}  // namespace

TEST(LiveServeServer, ServesThePageAnd404AndAsksForTheToken) {
  if (!dm::serve_support().available) GTEST_SKIP() << "built without the server: " << dm::serve_support().note;
  dm::Config c;
  c.live.serve = "127.0.0.1:0";
  c.live.serve_token = "t0k";
  dm::LiveServer server(c);
  ASSERT_NE(server.port(), 0);
  const std::string page = http_get(server.port(), "/?token=t0k");
  EXPECT_EQ(page.rfind("HTTP/1.1 200", 0), 0u) << page.substr(0, 200);
  EXPECT_NE(page.find("Content-Type: text/html"), std::string::npos);
  EXPECT_NE(page.find("Cache-Control: no-store"), std::string::npos);
  EXPECT_NE(page.find("foxglove.websocket.v1"), std::string::npos);
  EXPECT_EQ(http_get(server.port(), "/index.html?token=t0k").rfind("HTTP/1.1 200", 0), 0u);
  EXPECT_EQ(http_get(server.port(), "/x.js?token=t0k").rfind("HTTP/1.1 404", 0), 0u);
  EXPECT_EQ(http_get(server.port(), "/").rfind("HTTP/1.1 401", 0), 0u);
  EXPECT_EQ(http_get(server.port(), "/?token=t0").rfind("HTTP/1.1 401", 0), 0u);
  EXPECT_EQ(server.counters().clients, 0u);  // HTTP requests are not WebSocket clients
}

TEST(LiveServeServer, AnAddressInUseOrNotAnAddressFailsClearly) {
  if (!dm::serve_support().available) GTEST_SKIP() << "built without the server: " << dm::serve_support().note;
  dm::Config c;
  c.live.serve = "127.0.0.1:0";
  dm::LiveServer first(c);
  c.live.serve = "127.0.0.1:" + std::to_string(first.port());
  try {
    dm::LiveServer second(c);
    FAIL() << "bound a port in use";
  } catch (const dm::OutputError& e) {
    EXPECT_NE(std::string(e.what()).find("live.serve"), std::string::npos) << e.what();
  }
  c.live.serve = "nohost:80";
  EXPECT_THROW(dm::LiveServer{c}, dm::ConfigError);
}
