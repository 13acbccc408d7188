// The live runner: frames from a LiveSource through a fixed pool of frame slots, masked on the
// backend and handed on (files every Nth frame, a ZeroMQ PUB socket, an observer) with bounded
// latency.
//
// Three threads, one stage each: capture (source.read() → a free slot → the mask queue), mask
// (run_mask; latency = ready − captured) and output (FrameWriter, publish, observer; then the slot
// goes back to the pool). The pool holds live.buffers slots made up front, so memory is bounded and
// a run of same-sized frames allocates nothing after its first frames. When no slot is free,
// live.overflow decides: drop_oldest takes the slot of the oldest frame still waiting in a queue
// (counted as a drop), block makes capture wait; auto is resolved once, after the source opened
// (resolve_overflow).
//
// live.mask adds masks to the frames' own, AND-ed: a static image (nonzero = keep) and a depth band
// (the rule's depth range narrowed to it). A frame with its own mask and a static mask is masked by
// one mask of test results (its mask test AND static != 0), made on the CPU before the copy; a frame
// without a mask uses the static mask, else (depth band or colour key only) a mask that keeps
// everything. A colour key (an HSV range on the frame's colour, color_key.h) is evaluated by the frame
// slot on the backend — the GPU kernel for GPU backends, the CPU loop for cpu — AND-ed with that mask
// test before masking (FrameSlot::set_color_key).
//
// live.preview: the output stage offers frames to a preview window without ever waiting; the thread
// that called run_live draws it between its other duties (HighGUI wants one GUI thread).
#pragma once

#include <atomic>
#include <cstdint>
#include <string>

#include "depthmask/backend.h"
#include "depthmask/config.h"
#include "depthmask/frame.h"
#include "depthmask/live.h"
#include "depthmask/live_server.h"

namespace depthmask {

// When a run ends besides the stop flag and the end of a finite source.
struct LiveLimits {
  uint64_t max_frames = 0;  // frames captured; 0 = no limit
  double duration = 0;      // seconds; 0 = no limit
};

// Latency from capture (CapturedFrame::captured) to the masked depth being ready on the host, before
// any writing or publishing, in microseconds.
struct LatencyStats {
  uint64_t p50_us = 0, p99_us = 0, max_us = 0;
};

// The overflow policy a run applies, and why (for the start log line and the summary).
struct OverflowChoice {
  Overflow policy = Overflow::DropOldest;  // DropOldest or Block, never Auto
  std::string reason;                      // "auto → block: an unpaced replay waits"
};

// live.overflow as a run applies it: an explicit value as it is; auto → block for a source that can
// wait (LiveSource::can_wait: an unpaced replay, which loses frames otherwise), drop_oldest for
// cameras and paced sources (a frame that waits ages; the newest matters).
OverflowChoice resolve_overflow(Overflow configured, const LiveSource& source);

struct LiveSummary {
  uint64_t captured = 0;         // frames read from the source
  uint64_t processed = 0;        // masked and handed to every output without error
  uint64_t written = 0;          // written to output.dir (live.output_every)
  uint64_t published = 0;        // sent on live.publish
  uint64_t previewed = 0;        // shown in the live.preview window (0 when it is off)
  uint64_t drops_overflow = 0;   // dropped by drop_oldest: captured = processed + drops_overflow + failed
  uint64_t drops_unpaired = 0;   // dropped by the source before capture: no partner frame (LiveSource::unpaired)
  uint64_t failed = 0;           // frames whose copy, masking or writing threw
  uint64_t failed_resource = 0;  // of those, for a resource: out of memory, disk full, the output folder gone
  uint64_t source_errors = 0;    // read() or a reopen threw
  uint64_t reconnects = 0;       // successful reopens after a failure
  double seconds = 0;
  LatencyStats latency;
  bool interrupted = false;   // the stop flag ended the run
  bool source_ended = false;  // a finite source ran out
  BackendKind backend = BackendKind::Cpu;
  std::string source;       // LiveSource::describe()
  OverflowChoice overflow;  // the policy applied (live.overflow resolved) and why
  ServeCounters served;     // live.serve: clients, messages sent, dropped for clients, clients closed

  double fps() const { return seconds > 0 ? static_cast<double>(processed) / seconds : 0.0; }
};

// One interval's figures, as logged every live.stats_interval seconds.
struct LiveStats {
  double seconds = 0;  // the interval's length
  uint64_t processed = 0, drops_overflow = 0, drops_unpaired = 0, failed = 0;
  double fps = 0;
  LatencyStats latency;
};

// What the caller sees as the run goes.
class LiveObserver {
 public:
  virtual ~LiveObserver() = default;
  // Each processed frame, on the output thread, after it was written and published and before its
  // slot goes back to the pool (slot.out() is the masked depth). Time spent here delays the frames
  // behind it, as a slow output would.
  virtual void on_frame(const CapturedFrame& /*meta: sequence, id, captured; no images*/, const FrameSlot& /*slot*/,
                        uint64_t /*latency_us*/) {}
  // Every live.stats_interval seconds, from the thread that called run_live.
  virtual void on_stats(const LiveStats& /*stats*/) {}
};

// Runs until `stop` is set, a limit is reached or a finite source ends; then stops capturing,
// finishes the frames in flight and returns the summary. Opens the source first (what open() throws
// propagates: a wrong URI fails at once); a later read() failure is logged, counted and answered by
// reopening with back-off (0.1 s doubling up to live.reconnect_max; `stop` is honoured meanwhile).
// A frame that fails is classified as the batch's frames are (classify_frame_failure): it is
// counted (failed, failed_resource) and the run goes on; out of memory also gives back what its slot
// grew; a sticky device error stops the run and is thrown (PlatformError). Throws OutputError when
// live.publish cannot be bound or output.dir written; InputError when live.mask.static cannot be
// read (at once) or its size differs from the source's frames (at the first frame), or when
// live.mask.color_key is set and a frame has no colour image or one that is not 8-bit BGR of the
// depth's size (at that frame, naming it).
LiveSummary run_live(const Config& config, MemoryBackend& backend, LiveSource& source, const LiveLimits& limits,
                     const std::atomic<bool>* stop, LiveObserver* observer = nullptr);

}  // namespace depthmask
