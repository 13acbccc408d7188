// The live runner's record of failed frames (runner.cpp), apart from the runner to keep it short.
#pragma once

#include <atomic>
#include <cstdint>
#include <exception>

#include "depthmask/backend.h"
#include "depthmask/detail/frame_failure.h"
#include "depthmask/detail/log.h"
#include "depthmask/frame.h"
#include "depthmask/frame_writer.h"
#include "depthmask/live.h"

namespace depthmask::detail {

// A frame's failure, classified as the batch classifies it (classify_frame_failure): logged (the
// first few, then every 100th) and counted by the caller; out of memory gives back what the frame's
// slot (and the writer) grew. A sticky device error instead becomes the run's fatal error.
class FailureLog {
 public:
  explicit FailureLog(MemoryBackend& b) : backend_(b) {}
  // Returns the fatal error to stop the run with, or null when the run goes on.
  std::exception_ptr frame_failed(const CapturedFrame& meta, const char* stage, const std::exception_ptr& e,
                                  FrameSlot& slot, FrameWriter* writer = nullptr) {
    const ClassifiedFailure v = classify_frame_failure(e, backend_, "live frame " + meta.id);
    if (v.fatal) return v.fatal;
    if (v.out_of_memory) {
      slot.release_buffers();
      if (writer) writer->release_buffers();
    }
    if (v.failure == Failure::Resource) ++resource_;
    const uint64_t n = ++count_;
    if (n <= 5 || n % 100 == 0)
      log().error("live frame {} ({}, {}): {}{}", meta.id, stage, to_string(v.failure), v.message,
                  n == 5 ? " (further failures: every 100th)" : "");
    return nullptr;
  }
  uint64_t resource() const { return resource_.load(); }

 private:
  MemoryBackend& backend_;
  std::atomic<uint64_t> count_{0}, resource_{0};
};

}  // namespace depthmask::detail
