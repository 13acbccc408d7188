// What the server's connections share (live_server.cpp makes it, ws_session.cpp serves with it): the
// channels, the sessions, the subscription counts the encoder reads, the counters. Everything but the
// atomics is touched on the network thread only (the encoder posts to it).
#pragma once

#include <boost/asio/io_context.hpp>
#include <boost/asio/ip/tcp.hpp>

#include <array>
#include <atomic>
#include <chrono>
#include <cstdint>
#include <functional>
#include <memory>
#include <set>
#include <string>
#include <string_view>
#include <vector>

#include "depthmask/detail/foxglove_protocol.h"
#include "depthmask/detail/serve_encode.h"

namespace depthmask::detail {

// A client message may be at most this long (a subscribe of many channels fits many times over);
// longer ones close the client.
inline constexpr size_t kMaxClientMessage = size_t{64} * 1024;

// One frame's messages, encoded once; null where no client subscribes. Stats is the prefix that
// stats_for_client completes per client.
struct FrameMessages {
  uint64_t stamp_ns = 0;
  std::array<std::shared_ptr<const std::vector<uint8_t>>, kServedChannels> payload;
};

class WsSession;

// The connections open (HTTP and WebSocket) against live.serve_max_connections: at the cap the
// acceptor stops accepting (new connections wait in the kernel's listen queue) until one closes.
// Shared with the connections' slots, which may outlive the hub in handlers the io_context destroys.
struct ConnectionGate {
  size_t open = 0, max = 1;
  bool paused = false;                             // the acceptor waits for a slot
  std::function<void()> resume;                    // accepts again (start_accepting sets it)
  std::chrono::steady_clock::time_point warned{};  // the last warning that the cap was reached
};

// One open connection, counted by the gate while it lives; moved from the HTTP session to the
// WebSocket session an upgrade makes. Network thread only.
class ConnectionSlot {
 public:
  explicit ConnectionSlot(const std::shared_ptr<ConnectionGate>& gate) : gate_(gate) { ++gate->open; }
  ConnectionSlot(ConnectionSlot&&) noexcept = default;
  ConnectionSlot& operator=(ConnectionSlot&&) = delete;
  ConnectionSlot(const ConnectionSlot&) = delete;
  ConnectionSlot& operator=(const ConnectionSlot&) = delete;
  ~ConnectionSlot() {
    const auto g = gate_.lock();  // null when moved from, or once the server is gone
    if (!g) return;
    --g->open;
    if (g->paused && g->open < g->max && g->resume) {
      g->paused = false;
      g->resume();
    }
  }

 private:
  std::weak_ptr<ConnectionGate> gate_;
};

struct ServeHub {
  explicit ServeHub(boost::asio::io_context& io) : ioc(io) {}
  boost::asio::io_context& ioc;
  std::string token;                      // live.serve_token; empty = none
  size_t queue = 0;                       // live.serve_queue
  std::chrono::duration<double> timeout;  // live.serve_timeout
  // live.serve_max_connections
  std::shared_ptr<ConnectionGate> gate = std::make_shared<ConnectionGate>();
  bool depth_raw = false;
  std::array<bool, kServedChannels> available{};   // advertised (network thread)
  std::set<std::shared_ptr<WsSession>> sessions;   // open WebSocket clients (network thread)
  std::array<int, kServedChannels> subscribers{};  // subscriptions per channel (network thread)
  uint64_t next_session = 0;

  std::atomic<uint32_t> wanted{0};  // bit per channel with a subscriber (the encoder and due() read it)
  std::atomic<uint64_t> clients{0}, sent{0}, dropped{0}, closed{0};

  // The advertisement of every available channel.
  std::vector<ChannelSpec> advertised() const;
  // A subscription to channel `ch` came or went.
  void subscribed(int ch, int delta);
  // Makes `ch` available and advertises it to every client.
  void advertise(ServedChannel ch);
  // Hands a frame's messages to every client's queue.
  void deliver(const std::shared_ptr<const FrameMessages>& m);
  // Closes every client (the server stops).
  void close_all();
};

// The page served on GET / (lib/live_serve/src/page.html, embedded at build time).
std::string_view serve_page();

// Accepts connections on `acceptor` until it is closed: HTTP requests, WebSocket upgrades.
void start_accepting(boost::asio::ip::tcp::acceptor& acceptor, ServeHub& hub);

}  // namespace depthmask::detail
