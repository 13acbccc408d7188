/// \file
/// `depthmask live --serve`: one port that serves HTTP (the page) and WebSocket (the Foxglove
/// WebSocket protocol, `foxglove.websocket.v1`). The runner's output stage offers a frame when the
/// serve interval (live.serve_fps) has elapsed and someone subscribes; the server copies it and its
/// own encoder thread turns it into the channels' messages once for all clients. Clients that fall
/// behind lose their oldest messages (counted), clients that stop reading are closed: the pipeline
/// never waits for a viewer. docs/LIVE.md, "Watching it live: --serve".
#pragma once

#include <opencv2/core.hpp>

#include <chrono>
#include <cstdint>
#include <memory>
#include <string>

#include "depthmask/config.h"

namespace depthmask {

/// The run's counters as the stats channel (/depthmask/stats) shows them.
struct ServedRunStats {
  uint64_t processed = 0;       ///< frames masked and handed on
  uint64_t drops_overflow = 0;  ///< frames dropped by live.overflow
  uint64_t drops_unpaired = 0;  ///< frames dropped by the source: no partner
  uint64_t failed = 0;          ///< frames that failed
  uint64_t latency_p50_us = 0;  ///< recent capture-to-masked latency, median
  uint64_t latency_p99_us = 0;  ///< recent capture-to-masked latency, 99th percentile
};

/// One frame as the runner offers it; the images are only read during offer() (copied).
struct ServedFrame {
  const std::string& id;                           ///< the frame's name
  uint64_t sequence = 0;                           ///< the source's counter
  std::chrono::steady_clock::time_point captured;  ///< capture time (stamped as wall-clock ns)
  const cv::Mat& depth;                            ///< CV_32FC1 metres, output.invalid where dropped
  const cv::Mat& color;                            ///< CV_8UC3 BGR or empty
  const cv::Mat& reason;                           ///< CV_8UC1 reason codes or empty
};

/// What the server did over a run (LiveSummary's served counters).
struct ServeCounters {
  uint64_t clients = 0;         ///< WebSocket clients accepted
  uint64_t messages_sent = 0;   ///< messages written to clients (all clients)
  uint64_t client_dropped = 0;  ///< messages dropped for clients whose queue was full
  uint64_t clients_closed = 0;  ///< clients closed by the server (stalled, oversized frames, bad upgrade)
};

/// Whether this build serves, and why not (`depthmask info`).
struct ServeSupport {
  bool available = false;  ///< built with DEPTHMASK_WITH_SERVE and Boost.Beast
  std::string note;        ///< what it serves with, or why it cannot
};
/// This build's --serve support.
ServeSupport serve_support();

/// live.serve split: the address (default 127.0.0.1) and the port (0 = any free port).
struct ServeAddress {
  std::string host = "127.0.0.1";  ///< an IPv4 or IPv6 address
  uint16_t port = 0;               ///< 0: the system picks one (LiveServer::port() says which)
};
/// Parses "PORT" or "ADDR:PORT" ("[v6]:PORT" for IPv6). Throws ConfigError naming live.serve.
ServeAddress parse_serve_address(const std::string& text);

/// The server. Binds in the constructor; threads stop in the destructor.
class LiveServer {
 public:
  /// Binds live.serve (OutputError naming it when the address cannot be bound; ConfigError when this
  /// build cannot serve) and starts its network and encoder threads. Logs the bound address and port,
  /// and a warning when the address is not a loopback one.
  explicit LiveServer(const Config& config);
  ~LiveServer();
  LiveServer(const LiveServer&) = delete;
  LiveServer& operator=(const LiveServer&) = delete;

  /// The port bound (the system's pick for port 0).
  uint16_t port() const;
  /// True when a frame offered now would be served: the interval since the last one has passed and
  /// some client subscribes to a channel. Cheap (atomics), for the runner's output thread.
  bool due(std::chrono::steady_clock::time_point now) const;
  /// Copies what the subscribed channels need from `frame` and wakes the encoder; never waits for it
  /// (a frame offered while the encoder holds the buffer is skipped). Returns whether it was taken.
  bool offer(const ServedFrame& frame, const ServedRunStats& stats);
  /// The counters so far.
  ServeCounters counters() const;

 private:
  struct Impl;
  std::unique_ptr<Impl> impl_;
};

}  // namespace depthmask
