// Helpers for the live runner's tests: a deterministic fake LiveSource (frames computed from their
// sequence number, injected failures, optional pacing) and the gold: FrameSlot::run_mask of the same
// frame on the cpu backend.
#pragma once

#include <opencv2/core.hpp>

#include <atomic>
#include <chrono>
#include <cstdint>
#include <map>
#include <memory>
#include <mutex>
#include <set>
#include <string>
#include <thread>

#include "depthmask/backend.h"
#include "depthmask/config.h"
#include "depthmask/errors.h"
#include "depthmask/frame.h"
#include "depthmask/live.h"
#include "depthmask/live_runner.h"

namespace dmtest {

// A live observer that keeps a copy of every frame's masked output, by sequence number.
class OutputRecorder : public depthmask::LiveObserver {
 public:
  std::map<uint64_t, cv::Mat> outputs;
  void on_frame(const depthmask::CapturedFrame& meta, const depthmask::FrameSlot& slot, uint64_t) override {
    outputs.emplace(meta.sequence, slot.out().clone());
  }
};

// Frame `seq`: 16-bit depth in mm with values across depth.max, an 8-bit mask of stripes; both
// change with seq, so a frame mixed up with another shows.
inline void fake_frame(uint64_t seq, int w, int h, cv::Mat& depth, cv::Mat& mask) {
  depth.create(h, w, CV_16UC1);
  mask.create(h, w, CV_8UC1);
  for (int y = 0; y < h; ++y)
    for (int x = 0; x < w; ++x) {
      depth.at<uint16_t>(y, x) = static_cast<uint16_t>((x * 37 + y * 101 + seq * 53) % 12000);
      mask.at<uint8_t>(y, x) = static_cast<uint8_t>(((x / 3 + y / 2 + seq) % 4) == 0 ? 0 : 1 + (x + seq) % 3);
    }
}

class FakeSource : public depthmask::LiveSource {
 public:
  FakeSource(int w, int h, uint64_t frames = 0) : w_(w), h_(h), frames_(frames) {}

  // read() of these sequence numbers throws once (a disconnect); the next `open_failures` open()
  // calls after each throw too.
  std::set<uint64_t> fail_reads;
  int open_failures = 0;
  bool open_always_fails_after_read_failure = false;
  std::chrono::microseconds pace{0};  // sleep per read
  int bad_mask_at = -1;               // this frame gets a 3-channel mask (the frame fails)
  bool no_mask = false;               // frames come without a mask (live.mask supplies one)
  bool waits = false;                 // can_wait(): an unpaced file source (live.overflow auto blocks)

  std::atomic<uint64_t> produced{0};
  std::atomic<int> opens{0};

  void open() override {
    ++opens;
    if (failed_read_ && (open_always_fails_after_read_failure || open_failures_left_ > 0)) {
      --open_failures_left_;
      throw depthmask::InputError("fake source: cannot open (injected)");
    }
    failed_read_ = false;
  }
  bool read(depthmask::CapturedFrame& f) override {
    if (frames_ > 0 && seq_ >= frames_) return false;
    if (pace.count() > 0) std::this_thread::sleep_for(pace);
    if (fail_reads.erase(seq_)) {
      failed_read_ = true;
      open_failures_left_ = open_failures;
      throw depthmask::InputError("fake source: read failed (injected)");
    }
    fake_frame(seq_, w_, h_, f.depth, f.mask);
    if (static_cast<int64_t>(seq_) == bad_mask_at) f.mask = cv::Mat(h_, w_, CV_8UC3, cv::Scalar(1, 1, 1));
    if (no_mask) f.mask.release();
    f.color.release();
    f.sequence = seq_;
    f.id = "f" + std::to_string(seq_);
    f.captured = std::chrono::steady_clock::now();
    ++seq_;
    ++produced;
    return true;
  }
  bool can_wait() const override { return waits; }
  std::string describe() const override { return "fake " + std::to_string(w_) + "x" + std::to_string(h_); }

 private:
  int w_, h_;
  uint64_t frames_;
  uint64_t seq_ = 0;
  bool failed_read_ = false;
  int open_failures_left_ = 0;
};

inline std::unique_ptr<depthmask::MemoryBackend> cpu_backend() {
  return depthmask::make_backend(depthmask::BackendChoice{depthmask::BackendKind::Cpu, 0, "test", false},
                                 depthmask::PlatformInfo{});
}

// The gold: frame `seq` through FrameSlot::run_mask on the cpu backend.
inline cv::Mat gold_frame(const depthmask::Config& c, uint64_t seq, int w, int h) {
  static std::mutex m;
  std::lock_guard<std::mutex> lock(m);
  static const auto backend = cpu_backend();
  depthmask::FrameSlot slot(*backend);
  cv::Mat depth, mask;
  fake_frame(seq, w, h, depth, mask);
  slot.set(depth, mask);
  slot.run_mask(depthmask::mask_params(c));
  return slot.out().clone();
}

}  // namespace dmtest
