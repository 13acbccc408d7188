#include "publisher.h"

#include <zmq.hpp>

#include <cmath>
#include <cstdio>

#include "depthmask/errors.h"

namespace depthmask::detail {

namespace {

void append_json_string(std::string& out, const std::string& s) {
  out += '"';
  for (const char ch : s) {
    const auto c = static_cast<unsigned char>(ch);
    if (c == '"' || c == '\\') {
      out += '\\';
      out += ch;
    } else if (c < 0x20) {
      char b[8];
      std::snprintf(b, sizeof b, "\\u%04x", c);
      out += b;
    } else {
      out += ch;
    }
  }
  out += '"';
}

}  // namespace

void publish_header(const PublishedFrame& f, int width, int height, std::string& out) {
  // Written by hand into a reused string: no allocation per frame once it has grown.
  char num[64];
  out.clear();
  out += "{\"id\":";
  append_json_string(out, f.id);
  std::snprintf(num, sizeof num, ",\"sequence\":%llu", static_cast<unsigned long long>(f.sequence));
  out += num;
  std::snprintf(num, sizeof num, ",\"width\":%d,\"height\":%d", width, height);
  out += num;
  out += ",\"dtype\":\"float32\",\"units\":\"m\",\"invalid\":";
  if (std::isnan(f.invalid)) {
    out += "null";  // JSON has no NaN: null means the invalid value is NaN
  } else {
    std::snprintf(num, sizeof num, "%.9g", static_cast<double>(f.invalid));
    out += num;
  }
  std::snprintf(num, sizeof num, ",\"capture_to_ready_us\":%llu",
                static_cast<unsigned long long>(f.capture_to_ready_us));
  out += num;
  out += ",\"backend\":\"";
  out += f.backend;
  out += "\"}";
}

struct ZmqPublisher::Impl {
  zmq::context_t context{1};
  zmq::socket_t socket{context, zmq::socket_type::pub};
  std::string header;
};

ZmqPublisher::ZmqPublisher(const std::string& endpoint) : impl_(std::make_unique<Impl>()) {
  try {
    // A few frames per subscriber at most: a slow subscriber loses frames, it does not queue them.
    impl_->socket.set(zmq::sockopt::sndhwm, 4);
    // At the end, up to half a second to hand the last frames to connected subscribers.
    impl_->socket.set(zmq::sockopt::linger, 500);
    impl_->socket.bind(endpoint);
  } catch (const zmq::error_t& e) {
    throw OutputError("cannot publish on '" + endpoint + "' (live.publish): " + e.what());
  }
  impl_->header.reserve(256);
}

ZmqPublisher::~ZmqPublisher() = default;

bool ZmqPublisher::publish(const PublishedFrame& f, const cv::Mat& depth) {
  DM_EXPECT(depth.type() == CV_32FC1 && depth.isContinuous(), std::logic_error, "publish needs continuous CV_32FC1");
  publish_header(f, depth.cols, depth.rows, impl_->header);
  const size_t bytes = depth.total() * depth.elemSize();
  try {
    if (!impl_->socket.send(zmq::buffer(impl_->header), zmq::send_flags::sndmore | zmq::send_flags::dontwait))
      return false;
    // The payload is copied into ZeroMQ's message: the slot goes back to the pool right after.
    return impl_->socket.send(zmq::const_buffer(depth.data, bytes), zmq::send_flags::dontwait).has_value();
  } catch (const zmq::error_t& e) {
    throw OutputError(std::string("publishing frame ") + f.id + ": " + e.what());
  }
}

}  // namespace depthmask::detail
