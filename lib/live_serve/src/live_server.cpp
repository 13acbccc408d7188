// LiveServer (live_server.h): the listening socket and the network thread (Boost.Asio), the encoder
// thread and the hand-over from the runner's output thread.
#include "depthmask/live_server.h"

#include <boost/asio/ip/tcp.hpp>
#include <boost/asio/post.hpp>

#include <condition_variable>
#include <mutex>
#include <thread>

#include "depthmask/detail/log.h"
#include "depthmask/errors.h"
#include "depthmask/frame_writer.h"
#include "serve_hub.h"

namespace depthmask {

namespace net = boost::asio;
using tcp = net::ip::tcp;
using Clock = std::chrono::steady_clock;
using detail::ServedChannel;

ServeSupport serve_support() {
  return {true, "HTTP and WebSocket (Foxglove protocol) with Boost.Beast " + std::to_string(BOOST_VERSION / 100000) +
                    "." + std::to_string(BOOST_VERSION / 100 % 1000)};
}

struct LiveServer::Impl {
  explicit Impl(const Config& c) : hub(ioc), acceptor(ioc) {
    enc.invalid = c.output.invalid;
    enc.depth_raw = c.live.serve_depth == "raw";
    enc.intrinsics = c.input.intrinsics;
    enc.frame_id = c.output.mcap.frame_id;
    interval = std::chrono::duration_cast<Clock::duration>(std::chrono::duration<double>(1.0 / c.live.serve_fps));
    hub.token = c.live.serve_token;
    hub.queue = static_cast<size_t>(c.live.serve_queue);
    hub.timeout = std::chrono::duration<double>(c.live.serve_timeout);
    hub.gate->max = static_cast<size_t>(c.live.serve_max_connections);
    hub.depth_raw = enc.depth_raw;
    for (const ServedChannel ch :
         {ServedChannel::Mask, ServedChannel::Depth, ServedChannel::CameraInfo, ServedChannel::Stats})
      hub.available[size_t(ch)] = true;
    hub.available[size_t(ServedChannel::Reason)] = reason_configured(c);
    if (enc.intrinsics && enc.intrinsics->valid())
      hub.available[size_t(ServedChannel::Points)] = true;
    else
      detail::log().info("live --serve: no /depthmask/points: input.intrinsics is not set");
    bind(c.live.serve);
    detail::start_accepting(acceptor, hub);
    io_thread = std::thread([this] { ioc.run(); });
    encoder = std::thread([this] { encode_loop(); });
  }

  ~Impl() {
    {
      std::lock_guard<std::mutex> lock(m);
      stop = true;
    }
    cv.notify_all();
    encoder.join();
    // Stops at once: clients see their connection close; an idle HTTP keep-alive connection would
    // otherwise hold run() until its read timed out. What is still queued is destroyed with ioc.
    net::post(ioc, [this] {
      boost::system::error_code ec;
      acceptor.close(ec);
      hub.close_all();
      ioc.stop();
    });
    io_thread.join();
  }

  // live.serve as an endpoint; binding to an address other than loopback says who can see the stream.
  void bind(const std::string& text) {
    const ServeAddress a = parse_serve_address(text);
    boost::system::error_code ec;
    const net::ip::address addr = net::ip::make_address(a.host == "localhost" ? "127.0.0.1" : a.host, ec);
    DM_EXPECT(!ec, ConfigError, "live.serve '" << text << "': '" << a.host << "' is not an IP address");
    const tcp::endpoint ep(addr, a.port);
    acceptor.open(ep.protocol(), ec);
    if (!ec) acceptor.set_option(net::socket_base::reuse_address(true), ec);
    if (!ec) acceptor.bind(ep, ec);
    if (!ec) acceptor.listen(net::socket_base::max_listen_connections, ec);
    DM_EXPECT(!ec, OutputError, "live.serve: cannot listen on " << text << ": " << ec.message());
    port = acceptor.local_endpoint().port();
    const std::string host = addr.is_v6() ? "[" + addr.to_string() + "]" : addr.to_string();
    detail::log().info("live --serve: serving on http://{}:{}/ (Foxglove: ws://{}:{})", host, port, host, port);
    if (!addr.is_loopback())
      detail::log().warn(
          "live --serve: listening on {}, not a loopback address: the stream is visible on the network{}", host,
          hub.token.empty() ? " to anyone (set live.serve_token to require a token)" : " (a token is required)");
  }

  static bool reason_configured(const Config& c);

  void encode_loop();
  bool offer(const ServedFrame& f, const ServedRunStats& stats);

  net::io_context ioc{1};
  detail::ServeHub hub;
  tcp::acceptor acceptor;
  detail::ServeEncoding enc;
  Clock::duration interval{};
  uint16_t port = 0;
  std::atomic<int64_t> next_due{0};     // steady-clock ns of the next served frame
  std::atomic<bool> color_seen{false};  // a frame had colour: /depthmask/color is advertised
  std::atomic<bool> probed{false};      // the first frame was looked at (whether frames have colour)

  std::mutex m;  // guards pending, has_pending, stop
  std::condition_variable cv;
  detail::ServedCopy pending, work;  // their buffers swap: no allocation per frame once sized
  bool has_pending = false, stop = false;
  uint64_t last_processed = 0;
  Clock::time_point last_offer{};

  std::thread io_thread, encoder;
};

// The reason codes are made where an output asks for them (output.format reason, or mcap with
// output.mcap.reason): the runner's slots run the reason pass then (FrameSlot::set_reason).
bool LiveServer::Impl::reason_configured(const Config& c) { return wants_reason(c); }

bool LiveServer::Impl::offer(const ServedFrame& f, const ServedRunStats& stats) {
  std::unique_lock<std::mutex> lock(m, std::try_to_lock);
  if (!lock.owns_lock()) return false;  // the encoder is swapping: the next frame will do
  const Clock::time_point now = Clock::now();
  next_due.store(std::chrono::duration_cast<std::chrono::nanoseconds>((now + interval).time_since_epoch()).count(),
                 std::memory_order_relaxed);
  const uint32_t wanted = hub.wanted.load(std::memory_order_relaxed);
  pending.id = f.id;
  pending.sequence = f.sequence;
  const auto wall = std::chrono::system_clock::now() -
                    std::chrono::duration_cast<std::chrono::system_clock::duration>(now - f.captured);
  pending.stamp_ns =
      static_cast<uint64_t>(std::chrono::duration_cast<std::chrono::nanoseconds>(wall.time_since_epoch()).count());
  f.depth.copyTo(pending.depth);
  if (!f.color.empty() && (wanted & (1u << int(ServedChannel::Color)) || !probed.load(std::memory_order_relaxed)))
    f.color.copyTo(pending.color);
  else
    pending.color.release();
  if (!f.reason.empty() && wanted & (1u << int(ServedChannel::Reason)))
    f.reason.copyTo(pending.reason);
  else
    pending.reason = cv::Mat();
  const double dt = last_offer == Clock::time_point{} ? 0 : std::chrono::duration<double>(now - last_offer).count();
  pending.fps = dt > 0 ? static_cast<double>(stats.processed - last_processed) / dt : 0;
  pending.stats = stats;
  last_processed = stats.processed;
  last_offer = now;
  has_pending = true;
  lock.unlock();
  cv.notify_one();
  return true;
}

void LiveServer::Impl::encode_loop() {
  for (;;) {
    {
      std::unique_lock<std::mutex> lock(m);
      cv.wait(lock, [this] { return stop || has_pending; });
      if (stop) return;
      std::swap(pending, work);
      has_pending = false;
    }
    if (!work.color.empty() && !color_seen.exchange(true))
      net::post(ioc, [this] { hub.advertise(ServedChannel::Color); });
    probed.store(true, std::memory_order_relaxed);
    const uint32_t wanted = hub.wanted.load(std::memory_order_relaxed);
    auto msgs = std::make_shared<detail::FrameMessages>();
    msgs->stamp_ns = work.stamp_ns;
    for (int c = 0; c < detail::kServedChannels; ++c) {
      const auto ch = ServedChannel(c);
      if (!(wanted & (1u << c))) continue;
      if ((ch == ServedChannel::Color && work.color.empty()) || (ch == ServedChannel::Reason && work.reason.empty()) ||
          (ch == ServedChannel::Points && !(enc.intrinsics && enc.intrinsics->valid())))
        continue;
      try {
        msgs->payload[size_t(c)] = std::make_shared<const std::vector<uint8_t>>(detail::encode_channel(ch, work, enc));
      } catch (const std::exception& e) {
        detail::log().error("live --serve: frame {}: encoding {} failed: {}", work.id,
                            detail::channel_spec(ch, enc.depth_raw).topic, e.what());
      }
    }
    net::post(ioc, [this, msgs = std::shared_ptr<const detail::FrameMessages>(std::move(msgs))] { hub.deliver(msgs); });
  }
}

LiveServer::LiveServer(const Config& config) : impl_(std::make_unique<Impl>(config)) {}
LiveServer::~LiveServer() = default;

uint16_t LiveServer::port() const { return impl_->port; }

bool LiveServer::due(Clock::time_point now) const {
  // Nothing subscribed: no frame, once the first one showed whether frames have colour.
  if (impl_->hub.wanted.load(std::memory_order_relaxed) == 0 && impl_->probed.load(std::memory_order_relaxed))
    return false;
  return std::chrono::duration_cast<std::chrono::nanoseconds>(now.time_since_epoch()).count() >=
         impl_->next_due.load(std::memory_order_relaxed);
}

bool LiveServer::offer(const ServedFrame& frame, const ServedRunStats& stats) { return impl_->offer(frame, stats); }

ServeCounters LiveServer::counters() const {
  const detail::ServeHub& h = impl_->hub;
  return {h.clients.load(), h.sent.load(), h.dropped.load(), h.closed.load()};
}

}  // namespace depthmask
