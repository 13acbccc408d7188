// Pairs frames of separate streams by timestamp: depth (the primary, stream 0) with color, a mask
// stream, ... each arriving with its own timestamps (TUM's depth.txt and rgb.txt, a camera's depth and
// color sensors). Payload-free: a frame is a handle the caller maps back to its data.
//
// The rule: each primary frame, in time order, takes from every partner stream the closest pending
// frame within the tolerance (|t_partner - t_primary| <= tolerance; the earlier on a tie); a frame
// taken is not taken again. A primary frame is decided as soon as no later arrival could change its
// choice: per partner stream, a pending frame at or after its time within the tolerance (later
// frames of that stream are farther), or that stream's clock past its time + tolerance. A primary
// frame without a partner within the tolerance is dropped; so is a partner frame no primary frame
// can take any more (older than the next primary's time - tolerance). Drops are counted per stream.
//
// Streams may interleave in any order; within one stream frames are expected in time order (a
// stream's clock is the latest time seen on it), so a frame older than its stream's clock may find
// the frame it belonged with already decided, and one that arrives after a later primary frame was
// decided is dropped. Primary frames may arrive out of order while they are pending. Pending
// frames are bounded per stream (max_pending): a stream whose partner stalls drops its oldest frames
// rather than grow.
#pragma once

#include <array>
#include <cstddef>
#include <cstdint>
#include <deque>

namespace depthmask {

class StreamPairer {
 public:
  static constexpr int kMaxStreams = 4;

  struct Set {
    double t = 0;                              // the primary frame's timestamp
    std::array<uint64_t, kMaxStreams> item{};  // item[k]: the handle pushed on stream k
  };

  // `streams`: 1..kMaxStreams (stream 0 is the primary); `tolerance`: seconds >= 0. Throws
  // ConfigError on other values.
  StreamPairer(int streams, double tolerance, size_t max_pending = 64);

  // A frame of `stream` at time `t` (seconds, any origin shared by the streams).
  void push(int stream, double t, uint64_t handle);
  // No frame earlier than `t` will arrive on any stream any more (a shared clock: a replay's time, a
  // camera's now minus its latency): frames waiting on a stalled partner are decided.
  void advance(double t);
  // Every stream has ended: everything pending is decided.
  void finish();
  // The next complete set, oldest first; false when none is ready.
  bool pop(Set& out);

  uint64_t unpaired(int stream) const;  // frames of `stream` dropped so far
  uint64_t unpaired() const;            // all streams
  int streams() const { return n_; }
  double tolerance() const { return tol_; }

 private:
  struct Item {
    double t;
    uint64_t handle;
  };
  void drop(int stream) { ++unpaired_[static_cast<size_t>(stream)]; }
  void process();
  bool decidable(double t) const;
  void drop_dead_partners(double horizon);

  int n_;
  double tol_;
  size_t max_pending_;
  std::array<std::deque<Item>, kMaxStreams> pending_;  // sorted by t
  std::array<double, kMaxStreams> clock_{};            // the latest time seen or advanced to, per stream
  std::array<uint64_t, kMaxStreams> unpaired_{};
  double decided_ = 0;  // the last decided primary time
  bool any_decided_ = false;
  std::deque<Set> ready_;
};

}  // namespace depthmask
