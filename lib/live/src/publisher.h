// The live runner's network output: a ZeroMQ PUB socket that sends each masked frame as one
// two-part message (a JSON header, then the float32 depth). The message format is in docs/LIVE.md.
#pragma once

#include <opencv2/core.hpp>

#include <cstdint>
#include <memory>
#include <string>

namespace depthmask::detail {

struct PublishedFrame {
  const std::string& id;
  uint64_t sequence;
  float invalid;
  uint64_t capture_to_ready_us;
  std::string_view backend;
};

class ZmqPublisher {
 public:
  // Binds a PUB socket to `endpoint`. Throws OutputError naming the endpoint and ZeroMQ's reason.
  explicit ZmqPublisher(const std::string& endpoint);
  ~ZmqPublisher();
  ZmqPublisher(const ZmqPublisher&) = delete;
  ZmqPublisher& operator=(const ZmqPublisher&) = delete;

  // Sends `depth` (CV_32FC1) without blocking; false when ZeroMQ would have to wait (a subscriber
  // past its high-water mark: PUB drops for it rather than stall the runner).
  bool publish(const PublishedFrame& f, const cv::Mat& depth);

 private:
  struct Impl;
  std::unique_ptr<Impl> impl_;
};

// The header's JSON text, written into `out` (its capacity reused frame after frame).
void publish_header(const PublishedFrame& f, int width, int height, std::string& out);

}  // namespace depthmask::detail
