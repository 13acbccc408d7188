// The server's connections (serve_hub.h): HTTP requests (the page, 404, the token) and WebSocket
// clients of the Foxglove protocol, on one port with Boost.Beast. All on the network thread.
#include <boost/asio/steady_timer.hpp>
#include <boost/beast/core.hpp>
#include <boost/beast/http.hpp>
#include <boost/beast/websocket.hpp>

#include <deque>
#include <map>
#include <optional>

#include "depthmask/detail/drop_queue.h"
#include "depthmask/detail/log.h"
#include "serve_hub.h"

namespace depthmask::detail {

namespace beast = boost::beast;
namespace http = beast::http;
namespace websocket = beast::websocket;
namespace net = boost::asio;
using tcp = net::ip::tcp;
using Clock = std::chrono::steady_clock;

namespace {

// Control messages (serverInfo, advertise, status replies) a client may have waiting; a client that
// makes more replies than it reads (a flood of bad requests) is closed.
constexpr size_t kMaxControl = 256;

// One message to a client: text (JSON), or binary messageData (its header, then a shared payload).
struct OutMsg {
  bool binary = false;
  std::string text;
  std::array<uint8_t, kMessageDataHeader> head{};
  std::shared_ptr<const std::vector<uint8_t>> payload;
};

std::string_view path_of(std::string_view target) { return target.substr(0, target.find('?')); }

}  // namespace

class WsSession : public std::enable_shared_from_this<WsSession> {
 public:
  WsSession(tcp::socket&& s, ServeHub& hub, ConnectionSlot&& slot)
      : slot_(std::move(slot)), ws_(std::move(s)), hub_(hub), data_(hub.queue), watchdog_(hub.ioc) {}

  void accept(const http::request<http::string_body>& req) {
    beast::get_lowest_layer(ws_).expires_never();  // the WebSocket's own timeouts from here
    websocket::stream_base::timeout t{};
    t.handshake_timeout = std::chrono::duration_cast<std::chrono::steady_clock::duration>(hub_.timeout);
    t.idle_timeout = t.handshake_timeout;
    t.keep_alive_pings = true;  // a healthy client answers them; a stalled one never does
    ws_.set_option(t);
    ws_.set_option(websocket::stream_base::decorator([](websocket::response_type& res) {
      res.set(http::field::sec_websocket_protocol, kFoxgloveSubprotocol);
      res.set(http::field::server, "depthmask");
    }));
    ws_.read_message_max(kMaxClientMessage);
    ws_.async_accept(req, [self = shared_from_this()](beast::error_code ec) { self->on_accept(ec); });
  }

  // A frame's messages for this client's subscriptions.
  void deliver(const FrameMessages& m) {
    for (const auto& [sub, ch] : subs_) {
      const auto& p = m.payload[size_t(ch)];
      if (!p) continue;
      OutMsg o;
      o.binary = true;
      o.head = message_data_header(sub, m.stamp_ns);
      o.payload = ch == int(ServedChannel::Stats)
                      ? std::make_shared<const std::vector<uint8_t>>(stats_for_client(*p, data_.dropped()))
                      : p;
      if (data_.push(std::move(o))) hub_.dropped.fetch_add(1, std::memory_order_relaxed);
    }
    write_next();
  }

  void send_text(std::string text) {
    if (control_.size() >= kMaxControl) {
      close("it does not read the server's replies");
      return;
    }
    OutMsg o;
    o.text = std::move(text);
    control_.push_back(std::move(o));
    write_next();
  }

  // Closes the connection now (pending operations end with an error, then finish()).
  // `counted`: closed for what the client did (ServeCounters::clients_closed), not because the run ends.
  void close(const char* why, bool counted = true) {
    if (closing_) return;
    closing_ = true;
    if (counted) {
      hub_.closed.fetch_add(1, std::memory_order_relaxed);
      detail::log().warn("live --serve: closing client {}: {}", id_, why);
    }
    beast::error_code ec;
    beast::get_lowest_layer(ws_).socket().close(ec);
  }

 private:
  void on_accept(beast::error_code ec) {
    if (ec) return;  // a failed handshake: nothing was registered
    id_ = ++hub_.next_session;
    hub_.sessions.insert(shared_from_this());
    hub_.clients.fetch_add(1, std::memory_order_relaxed);
    detail::log().info("live --serve: client {} connected ({} open)", id_, hub_.sessions.size());
    send_text(server_info_json("depthmask", std::to_string(id_)));
    send_text(advertise_json(hub_.advertised()));
    arm_watchdog();
    read();
  }

  void read() {
    ws_.async_read(in_, [self = shared_from_this()](beast::error_code ec, size_t) { self->on_read(ec); });
  }

  void on_read(beast::error_code ec) {
    if (ec) {
      if (ec == websocket::error::message_too_big) close("a message over the 64 KiB limit");
      // Beast's idle timeout: no pong to its keep-alive ping within live.serve_timeout.
      if (ec == beast::error::timeout) close("it stopped answering (live.serve_timeout)");
      finish();
      return;
    }
    if (!ws_.got_text()) {
      send_text(status_json(StatusLevel::Error,
                            "binary client messages are not supported (no clientPublish or services): ignored"));
    } else {
      handle(beast::buffers_to_string(in_.data()));
    }
    in_.consume(in_.size());
    read();
  }

  void handle(const std::string& text) {
    const ClientOp op = parse_client_op(text);
    switch (op.kind) {
      case ClientOp::Kind::Bad:
      case ClientOp::Kind::Refused:
        send_text(status_json(StatusLevel::Error, op.error));
        return;
      case ClientOp::Kind::Subscribe:
        for (const auto& [sub, ch] : op.subscribe) {
          const int c = int(ch) - 1;
          if (subs_.count(sub)) {
            send_text(status_json(StatusLevel::Error, "subscription id " + std::to_string(sub) + " is in use"));
          } else if (c < 0 || c >= kServedChannels || !hub_.available[size_t(c)]) {
            send_text(status_json(StatusLevel::Error, "channel " + std::to_string(ch) + " is not advertised"));
          } else {
            subs_[sub] = c;
            hub_.subscribed(c, +1);
          }
        }
        return;
      case ClientOp::Kind::Unsubscribe:
        for (const uint32_t sub : op.unsubscribe) {
          const auto it = subs_.find(sub);
          if (it == subs_.end()) {
            send_text(status_json(StatusLevel::Warning, "no subscription " + std::to_string(sub)));
            continue;
          }
          hub_.subscribed(it->second, -1);
          subs_.erase(it);
        }
        return;
    }
  }

  void write_next() {
    if (busy_ || closing_ || finished_) return;
    if (!control_.empty()) {
      writing_ = std::move(control_.front());
      control_.pop_front();
    } else if (!data_.empty()) {
      writing_ = data_.pop();
    } else {
      return;
    }
    busy_ = true;
    write_started_ = Clock::now();
    auto done = [self = shared_from_this()](beast::error_code ec, size_t) { self->on_write(ec); };
    if (writing_.binary) {
      ws_.binary(true);
      const std::array<net::const_buffer, 2> bufs{net::buffer(writing_.head),
                                                  net::buffer(writing_.payload->data(), writing_.payload->size())};
      ws_.async_write(bufs, std::move(done));
    } else {
      ws_.text(true);
      ws_.async_write(net::buffer(writing_.text), std::move(done));
    }
  }

  void on_write(beast::error_code ec) {
    busy_ = false;
    writing_ = OutMsg{};
    if (ec) {
      if (ec == beast::error::timeout) close("it stopped reading (live.serve_timeout)");
      finish();
      return;
    }
    hub_.sent.fetch_add(1, std::memory_order_relaxed);
    write_next();
  }

  // Every quarter of live.serve_timeout: a write outstanding for longer than it means a client that
  // stopped reading.
  void arm_watchdog() {
    watchdog_.expires_after(std::chrono::duration_cast<Clock::duration>(hub_.timeout / 4));
    watchdog_.async_wait([self = shared_from_this()](beast::error_code ec) {
      if (ec || self->finished_) return;
      if (self->busy_ && Clock::now() - self->write_started_ > self->hub_.timeout)
        self->close("it stopped reading (live.serve_timeout)");
      self->arm_watchdog();
    });
  }

  // The connection is gone: its subscriptions and queue with it.
  void finish() {
    if (finished_) return;
    finished_ = true;
    for (const auto& [sub, ch] : subs_) hub_.subscribed(ch, -1);
    subs_.clear();
    data_.clear();
    control_.clear();
    watchdog_.cancel();
    beast::error_code ec;
    beast::get_lowest_layer(ws_).socket().close(ec);
    hub_.sessions.erase(shared_from_this());
    detail::log().info("live --serve: client {} disconnected ({} open)", id_, hub_.sessions.size());
  }

  ConnectionSlot slot_;  // first: released after the socket below is closed
  websocket::stream<beast::tcp_stream> ws_;
  ServeHub& hub_;
  beast::flat_buffer in_;
  DropOldestQueue<OutMsg> data_;
  std::deque<OutMsg> control_;
  OutMsg writing_;
  net::steady_timer watchdog_;
  std::map<uint32_t, int> subs_;  // subscription id → channel
  Clock::time_point write_started_;
  uint64_t id_ = 0;
  bool busy_ = false, closing_ = false, finished_ = false;
};

namespace {

// One HTTP connection: requests answered in turn until one is a WebSocket upgrade or it closes.
class HttpSession : public std::enable_shared_from_this<HttpSession> {
 public:
  HttpSession(tcp::socket&& s, ServeHub& hub) : slot_(hub.gate), stream_(std::move(s)), hub_(hub) {}

  void read() {
    parser_.emplace();
    parser_->header_limit(16 * 1024);
    parser_->body_limit(kMaxClientMessage);
    stream_.expires_after(std::chrono::duration_cast<Clock::duration>(hub_.timeout));
    http::async_read(stream_, buf_, *parser_,
                     [self = shared_from_this()](beast::error_code ec, size_t) { self->on_read(ec); });
  }

 private:
  void on_read(beast::error_code ec) {
    if (ec) {
      beast::error_code ignored;
      stream_.socket().shutdown(tcp::socket::shutdown_send, ignored);
      return;
    }
    http::request<http::string_body> req = parser_->release();
    const std::string_view target(req.target().data(), req.target().size());
    if (!token_ok(target, hub_.token))
      return respond(req, http::status::unauthorized, "text/plain", "a token is required: ?token=...\n");
    if (websocket::is_upgrade(req)) return upgrade(req);
    if (req.method() != http::verb::get && req.method() != http::verb::head)
      return respond(req, http::status::method_not_allowed, "text/plain", "GET only\n");
    const std::string_view path = path_of(target);
    if (path == "/" || path == "/index.html")
      return respond(req, http::status::ok, "text/html; charset=utf-8", serve_page());
    respond(req, http::status::not_found, "text/plain", "not found\n");
  }

  void upgrade(const http::request<http::string_body>& req) {
    const std::string_view path = path_of(std::string_view(req.target().data(), req.target().size()));
    if (path != "/" && path != "/index.html") return respond(req, http::status::not_found, "text/plain", "not found\n");
    const auto offered = req[http::field::sec_websocket_protocol];
    if (std::string_view(offered.data(), offered.size()).find(kFoxgloveSubprotocol) == std::string_view::npos)
      return respond(req, http::status::bad_request, "text/plain", "expected the subprotocol foxglove.websocket.v1\n");
    std::make_shared<WsSession>(stream_.release_socket(), hub_, std::move(slot_))->accept(req);
  }

  void respond(const http::request<http::string_body>& req, http::status status, const char* type,
               std::string_view body) {
    auto res = std::make_shared<http::response<http::string_body>>(status, req.version());
    res->set(http::field::server, "depthmask");
    res->set(http::field::content_type, type);
    res->set(http::field::cache_control, "no-store");
    res->keep_alive(req.keep_alive() && status == http::status::ok);
    if (req.method() != http::verb::head) res->body() = std::string(body);
    res->prepare_payload();
    if (req.method() == http::verb::head) res->content_length(body.size());
    http::async_write(stream_, *res, [self = shared_from_this(), res](beast::error_code ec, size_t) {
      if (ec || !res->keep_alive()) {
        beast::error_code ignored;
        self->stream_.socket().shutdown(tcp::socket::shutdown_send, ignored);
        return;
      }
      self->read();
    });
  }

  ConnectionSlot slot_;  // first: released after the socket below is closed
  beast::tcp_stream stream_;
  ServeHub& hub_;
  beast::flat_buffer buf_;
  std::optional<http::request_parser<http::string_body>> parser_;
};

void accept_next(tcp::acceptor& acceptor, ServeHub& hub) {
  if (!acceptor.is_open()) return;  // the server stops
  ConnectionGate& gate = *hub.gate;
  if (gate.open >= gate.max) {  // a closing connection's slot resumes
    gate.paused = true;
    const auto now = Clock::now();
    if (gate.warned == Clock::time_point{} || now - gate.warned > std::chrono::seconds(10)) {  // not a flood of lines
      gate.warned = now;
      detail::log().warn(
          "live --serve: {} connections open (live.serve_max_connections): new ones wait until one closes", gate.open);
    }
    return;
  }
  acceptor.async_accept(hub.ioc, [&acceptor, &hub](beast::error_code ec, tcp::socket s) {
    if (ec == net::error::operation_aborted || !acceptor.is_open()) return;  // the server stops
    if (!ec) std::make_shared<HttpSession>(std::move(s), hub)->read();
    accept_next(acceptor, hub);
  });
}

}  // namespace

void start_accepting(tcp::acceptor& acceptor, ServeHub& hub) {
  hub.gate->resume = [&acceptor, &hub] { accept_next(acceptor, hub); };
  accept_next(acceptor, hub);
}

std::vector<ChannelSpec> ServeHub::advertised() const {
  std::vector<ChannelSpec> out;
  for (int c = 0; c < kServedChannels; ++c)
    if (available[size_t(c)]) out.push_back(channel_spec(ServedChannel(c), depth_raw));
  return out;
}

void ServeHub::subscribed(int ch, int delta) {
  subscribers[size_t(ch)] += delta;
  uint32_t bits = 0;
  for (int c = 0; c < kServedChannels; ++c)
    if (subscribers[size_t(c)] > 0) bits |= 1u << c;
  wanted.store(bits, std::memory_order_relaxed);
}

void ServeHub::advertise(ServedChannel ch) {
  if (available[size_t(ch)]) return;
  available[size_t(ch)] = true;
  const std::string msg = advertise_json({channel_spec(ch, depth_raw)});
  for (const auto& s : sessions) s->send_text(msg);
}

void ServeHub::deliver(const std::shared_ptr<const FrameMessages>& m) {
  for (const auto& s : std::vector<std::shared_ptr<WsSession>>(sessions.begin(), sessions.end())) s->deliver(*m);
}

void ServeHub::close_all() {
  for (const auto& s : std::vector<std::shared_ptr<WsSession>>(sessions.begin(), sessions.end())) {
    s->close("the run ends", false);
  }
}

}  // namespace depthmask::detail
