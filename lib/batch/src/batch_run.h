// The batch run (run_batch, pipeline.h) as a class with named steps, like the live runner's:
// prepare (the input, the output folder, the resume plan, the pool of frames in flight) → the frames
// (take → decode → mask → write → commit, overlapped) → finish (the manifest, the counts).
// batch_run.cpp: the run, prepare(), finish(); batch_frames.cpp: run_frames() and the stages.
#pragma once

#include <tbb/concurrent_queue.h>
#include <tbb/parallel_pipeline.h>

#include <atomic>
#include <chrono>
#include <exception>
#include <memory>
#include <mutex>
#include <optional>
#include <string>
#include <vector>

#include "depthmask/bag_output.h"
#include "depthmask/frame.h"
#include "depthmask/frame_writer.h"
#include "depthmask/layouts.h"
#include "depthmask/manifest.h"
#include "depthmask/open_backend.h"
#include "depthmask/pipeline.h"
#include "depthmask/shard.h"

namespace depthmask::detail {

// The unit sanity check, once per run: on the first masked output that keeps enough pixels. Frames
// reach it from several threads.
class UnitCheck {
 public:
  void observe(const FrameSlot& slot, const MaskParams& p, const std::string& id);

 private:
  std::atomic<bool> done_{false};
  std::mutex mutex_;
};

// One frame in flight: its place in the listing, the buffers it works in (a slot and the writer
// beside it, reused by the frames that follow), and how it went.
struct Work {
  FrameSlot slot;
  FrameWriter writer;
  size_t index = 0;
  const FrameEntry* frame = nullptr;
  bool resumed = false;   // recorded as finished by an earlier run: nothing to do
  bool finished = false;  // all outputs written
  MaskParams params;
  std::vector<OutputFile> files;
  std::vector<BagMessage> messages;  // output.format mcap: the frame's, appended at commit
  FrameStats stats;                  // what the outputs kept, for the manifest
  std::optional<FrameFailure> failure;
  std::exception_ptr fatal;  // stops the batch (the device is gone)

  Work(MemoryBackend& b, const Config& c) : slot(b), writer(c, b) {}
  bool busy() const { return !resumed && !finished && !failure && !fatal; }
};

// One batch run: run() is prepare(), run_frames(), finish(); run_batch (pipeline.h) makes one per call.
class BatchRun {
 public:
  using Clock = std::chrono::steady_clock;

  BatchRun(const Config& config, MemoryBackend& backend, const BackendChoice& choice, RunObserver* observer,
           const std::atomic<bool>* stop)
      : config_(config), observer_(observer), stop_(stop) {
    use_backend(backend, choice);
  }
  // The backend is opened once the run is prepared (open_backend()).
  BatchRun(const Config& config, BackendOpener& opener, RunObserver* observer, const std::atomic<bool>* stop)
      : config_(config), opener_(&opener), observer_(observer), stop_(stop) {}

  RunSummary run();

 private:
  // Prepare the run: resolve the input (layout, listing, geometry), refuse what cannot work before
  // any output is touched, ready the output folder, plan the resume, make the pool.
  void prepare();
  void use_backend(MemoryBackend& backend, const BackendChoice& choice);
  // The pool: one Work (slot + writer) per frame in flight; the pipeline never admits more frames
  // than there are Works, so memory is bounded by the pool, not by the dataset.
  void make_pool();
  // The frames, overlapped: in an arena of run.threads slots when that is set (the CPU loop's
  // parallel_for inside it stays within them too); global_control lets oneTBB start more workers
  // than the default when more are asked for.
  void run_frames();
  void pipeline();
  // Finish: save the manifest (a failure is the summary's manifest_error, not an exception), count,
  // write the run record (report.h).
  void finish();
  // output.format mcap (batch_bag.cpp): the bag's part opened (the lock taken) before the first frame;
  // after the run, closed, and the parts merged when the folder holds every frame of the listing.
  void prepare_bag();
  void finish_bag();

  // run.on_error: stop — the index of the failed frame, once one failed: no later frame is admitted,
  // written or committed.
  static constexpr size_t kNone = ~size_t{0};
  bool stopping() const { return stopping_after_.load() != kNone; }

  // The stages of a frame (batch_frames.cpp), in the pipeline's order.
  Work* take(tbb::flow_control& fc);
  Work* decode(Work* w);
  Work* mask(Work* w);
  Work* write(Work* w);
  void commit(Work* w);
  // Runs one stage of a frame that is still busy; what it throws is classified as the live runner
  // classifies it (classify_frame_failure): the frame's failure, or the batch's fatal error.
  template <class F>
  void stage(Work& w, F&& f);

  const Config& config_;  // as given; input_.config is the effective one
  BackendOpener* opener_ = nullptr;
  std::optional<OpenedBackend> opened_;  // opener_'s; declared before pool_, whose buffers it owns
  MemoryBackend* backend_ = nullptr;     // set in prepare() at the latest
  RunObserver* observer_;
  const std::atomic<bool>* stop_;

  // Prepared once (prepare(), make_pool()), read by every stage.
  ResolvedInput input_;
  std::optional<CameraGeometry> geometry_;
  std::optional<Shard> shard_;       // this run's share; none: every frame
  std::optional<ShardLock> lock_;    // held from before the first file is touched to the end
  std::optional<ResumeLog> resume_;  // holds a pointer to input_.config
  std::optional<BagLock> bag_lock_;  // output.format mcap: held shared while this run writes its part
  std::optional<BagOutput> bag_;
  std::vector<FrameEntry> all_frames_;  // output.format mcap: every shard's, for the merge's check
  std::vector<bool> finished_before_;
  MaskParams params_;
  bool stop_at_failure_ = false;
  bool want_color_ = false;
  size_t tokens_ = 0;
  std::vector<std::unique_ptr<Work>> pool_;
  tbb::concurrent_queue<Work*> free_works_;

  // As the frames go: take() and commit() are serial, the other stages touch only their Work.
  UnitCheck units_;
  bool three_channel_logged_ = false;  // commit(): three_channel_depth_note, once
  size_t next_ = 0, done_ = 0;
  std::atomic<size_t> stopping_after_{kNone};
  Clock::time_point start_ = Clock::now();
  Clock::time_point t0_;
  std::optional<Clock::time_point> first_commit_;
  RunSummary s_;
};

}  // namespace depthmask::detail
