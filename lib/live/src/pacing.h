// Internal: what the live sources share: the fixed-rate pacer and the sources that live in their own
// files (replay.cpp, openni2.cpp), made by make_live_source.
#pragma once

#include <algorithm>
#include <chrono>
#include <cstdint>
#include <memory>
#include <string>
#include <thread>

#include "depthmask/live.h"

namespace depthmask::detail {

using Clock = std::chrono::steady_clock;

// Frames due every 1/fps seconds from the first one; fps 0: always due.
class Pacer {
 public:
  explicit Pacer(double fps)
      : period_(fps > 0 ? std::chrono::duration_cast<Clock::duration>(std::chrono::duration<double>(1.0 / fps))
                        : Clock::duration::zero()) {}
  void restart() { started_ = false; }
  // Sleeps until the next frame is due.
  void wait() {
    const auto now = Clock::now();
    if (!started_) {
      next_ = now;
      started_ = true;
    }
    if (next_ > now) std::this_thread::sleep_until(next_);
    // Late frames move the schedule instead of bursting to catch up.
    next_ = std::max(next_, now) + period_;
  }

 private:
  Clock::duration period_;
  Clock::time_point next_{};
  bool started_ = false;
};

// "000042": the id of a frame that has no name of its own.
std::string padded_id(uint64_t n);

std::unique_ptr<LiveSource> make_replay_source(const SourceUri& uri, const Config& config);
// Only in builds with OpenNI2 (DEPTHMASK_HAVE_OPENNI2).
std::unique_ptr<LiveSource> make_openni2_source(const SourceUri& uri, const Config& config);

}  // namespace depthmask::detail
