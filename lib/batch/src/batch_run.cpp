// The batch run (run_batch, pipeline.h) as a class with named steps, like the live runner's:
// prepare (the input, the output folder, the resume plan, the pool of frames in flight) → the frames
// (take → decode → mask → write → commit, overlapped) → finish (the manifest, the counts).

#include <tbb/concurrent_queue.h>
#include <tbb/global_control.h>
#include <tbb/parallel_pipeline.h>
#include <tbb/task_arena.h>
#include <time.h>
#include <unistd.h>

#include <algorithm>
#include <charconv>
#include <chrono>
#include <exception>
#include <fstream>
#include <memory>
#include <mutex>
#include <optional>
#include <string>

#include "depthmask/detail/frame_failure.h"
#include "depthmask/detail/log.h"
#include "depthmask/errors.h"
#include "depthmask/frame.h"
#include "depthmask/frame_writer.h"
#include "depthmask/layouts.h"
#include "depthmask/manifest.h"
#include "depthmask/pipeline.h"
#include "depthmask/registration.h"
#include "depthmask/run_record.h"
#include "depthmask/shard.h"
#include "depthmask/unit_check.h"

namespace fs = std::filesystem;

namespace depthmask {

namespace {

using Clock = std::chrono::steady_clock;

double ms_between(Clock::time_point a, Clock::time_point b) {
  return std::chrono::duration<double, std::milli>(b - a).count();
}

// Milliseconds since the kernel started this process: /proc/self/stat's starttime (field 22, clock
// ticks since boot, rounded down) against CLOCK_BOOTTIME, the clock it counts on. A steady-clock
// static set at load would miss exec, the dynamic loader (260 objects with Debian's OpenCV) and the
// libraries' initialisers. Empty where /proc cannot tell.
std::optional<double> ms_since_process_start() {
  std::ifstream f("/proc/self/stat");
  std::string line;
  if (!std::getline(f, line)) return std::nullopt;
  // The command name (field 2) is in parentheses and may hold spaces: count fields after the last ')'.
  size_t at = line.rfind(')');
  if (at == std::string::npos) return std::nullopt;
  for (int field = 2; field < 22; ++field) {
    at = line.find(' ', at + 1);
    if (at == std::string::npos) return std::nullopt;
  }
  unsigned long long ticks = 0;
  const char* first = line.data() + at + 1;
  if (std::from_chars(first, line.data() + line.size(), ticks).ec != std::errc()) return std::nullopt;
  const long hz = sysconf(_SC_CLK_TCK);
  timespec now{};
  if (hz <= 0 || clock_gettime(CLOCK_BOOTTIME, &now) != 0) return std::nullopt;
  const double now_ms = static_cast<double>(now.tv_sec) * 1e3 + static_cast<double>(now.tv_nsec) / 1e6;
  return now_ms - static_cast<double>(ticks) * 1e3 / static_cast<double>(hz);
}

// The unit sanity check, once per run: on the first masked output that keeps enough pixels. Frames
// reach it from several threads.
class UnitCheck {
 public:
  void observe(const FrameSlot& slot, const MaskParams& p, const std::string& id) {
    if (done_.load(std::memory_order_acquire)) return;
    const auto median = median_kept_depth(slot.out(), p.invalid);
    if (!median) return;
    const std::lock_guard<std::mutex> lock(mutex_);
    if (done_.exchange(true)) return;
    const std::string w = depth_unit_warning(*median, p.scale, slot.depth().type() == CV_32FC1);
    if (!w.empty()) detail::log().warn("frame {}: {}", id, w);
  }

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
  FrameStats stats;  // what the outputs kept, for the manifest
  std::optional<FrameFailure> failure;
  std::exception_ptr fatal;  // stops the batch (the device is gone)

  Work(MemoryBackend& b, const Config& c) : slot(b), writer(c, b) {}
  bool busy() const { return !resumed && !finished && !failure && !fatal; }
};

class BatchRun {
 public:
  BatchRun(const Config& config, MemoryBackend& backend, const BackendChoice& choice, RunObserver* observer,
           const std::atomic<bool>* stop)
      : config_(config), observer_(observer), stop_(stop) {
    use_backend(backend, choice);
  }
  // The backend is opened once the run is prepared (open_backend()).
  BatchRun(const Config& config, BackendOpener& opener, RunObserver* observer, const std::atomic<bool>* stop)
      : config_(config), opener_(&opener), observer_(observer), stop_(stop) {}

  RunSummary run() {
    prepare();
    try {
      run_frames();
    } catch (...) {
      // However the run ends (a batch-stopping error included), what finished stays recorded.
      try {
        resume_->flush();
      } catch (...) {
      }
      throw;
    }
    finish();
    return std::move(s_);
  }

 private:
  // Prepare the run: resolve the input (layout, listing, geometry), refuse what cannot work before
  // any output is touched, ready the output folder, plan the resume, make the pool.
  void prepare() {
    // Which share of the frames (shard.h): a bad run.shard or engine variable stops the run first.
    const ShardChoice sharding = resolve_shard(config_.run, process_env());
    if (!sharding.log.empty()) detail::log().info("{}", sharding.log);
    shard_ = sharding.shard;
    const Clock::time_point resolving = Clock::now();
    input_ = resolve_input(config_);
    // The effective configuration says which shard ran (auto resolved): the run record, the writers'
    // temporary names.
    input_.config.run.shard = shard_ ? to_string(*shard_) : "";
    s_.startup.listing_ms = ms_between(resolving, Clock::now());
    detail::log().info("layout {} ({})", to_string(input_.layout), input_.reason);
    const Config& c = input_.config;  // with the layout's defaults for the keys the user did not set
    // The input's camera geometry when its depth comes from another camera than the mask (APC raw/
    // with cam.info.txt); without one, 'reproject' is refused here, up front.
    if (input_.depth_from_depth_camera) geometry_ = input_.geometry;
    check_registration(c.registration.mode, geometry_);

    DatasetListing& listing = input_.listing;
    s_.unmatched_files = listing.unmatched_files;
    if (listing.unmatched_files > 0) {
      std::string ex;
      for (const auto& p : listing.unmatched_examples) ex += (ex.empty() ? "" : ", ") + p.filename().string();
      detail::log().info("ignoring {} file(s) that belong to no depth frame (e.g. {})", listing.unmatched_files, ex);
    }
    check_outputs_spare_inputs(c, listing);  // every frame's, not only this shard's: they share the folder
    if (shard_) {
      const size_t all = listing.frames.size();
      listing.frames = shard_frames(listing.frames, *shard_);
      const size_t k = shard_->index, n = shard_->count;
      detail::log().info("shard {}: {} of {} frame(s) (positions {}, {}, {}, ... of the frames sorted by path)",
                         to_string(*shard_), listing.frames.size(), all, k, k + n, k + 2 * n);
    }
    s_.total = listing.frames.size();
    s_.shard = c.run.shard;
    s_.manifest = manifest_name(shard_);
    resume_.emplace(c, shard_);  // plan() below reads the manifests and writes this run's
    params_ = mask_params(c);
    stop_at_failure_ = c.run.on_error == OnError::Stop;

    // One process per shard and folder: a second one is refused (ShardBusyError, exit 5) before it
    // touches a file and before it waits for CUDA; the lock is held until the run is destroyed (and
    // its file removed then). A folder that does not exist yet is locked once it is made, below.
    std::error_code ec;
    if (fs::is_directory(c.output.dir, ec)) lock_.emplace(c.output.dir, shard_);
    // Up to here CUDA's start-up (the opener's probe) runs beside the run; the backend is needed from
    // here on, and a backend that cannot start must fail before the output folder is touched.
    if (opener_) {
      opened_ = opener_->open();
      use_backend(*opened_->backend, opened_->choice);
      s_.startup.cuda_init_ms = opener_->cuda_init_ms();
      s_.startup.backend_open_ms = opener_->open_ms();
    }
    ensure_output_dir(c.output.dir);
    if (!lock_) lock_.emplace(c.output.dir, shard_);
    if (const size_t n = remove_stale_temp_files(c.output.dir))
      detail::log().info("removed {} temporary file(s) an interrupted run left in {}", n, c.output.dir.string());
    finished_before_ = resume_->plan(listing.frames);
    try {
      // The record says what runs here from now on (`status OUT` reads it), and again at the end.
      write_run_record_started(c);
    } catch (const OutputError& e) {
      detail::log().warn("the run record could not be written: {}", e.what());
    }
    if (observer_) observer_->on_start(listing);
    make_pool();
  }

  void use_backend(MemoryBackend& backend, const BackendChoice& choice) {
    backend_ = &backend;
    s_.backend = backend.kind();
    s_.backend_reason = choice.reason;
    s_.backend_degraded = choice.degraded;
  }

  // The pool: one Work (slot + writer) per frame in flight; the pipeline never admits more frames
  // than there are Works, so memory is bounded by the pool, not by the dataset.
  void make_pool() {
    const Config& c = input_.config;
    tokens_ = std::min(frames_in_flight(c, *backend_), std::max<size_t>(input_.listing.frames.size(), 1));
    for (size_t i = 0; i < tokens_; ++i) {
      pool_.push_back(std::make_unique<Work>(*backend_, c));
      pool_.back()->slot.set_registration(c.registration.mode, geometry_);
      pool_.back()->slot.set_limits(input_limits(c));
      pool_.back()->slot.set_reason(wants_reason(c));
      // Many frames wait on the device at once: their threads sleep, leaving the cores to the codecs.
      pool_.back()->slot.set_wait(Wait::Block);
      free_works_.push(pool_.back().get());
    }
    detail::log().debug("{} frame(s) in flight", tokens_);
    want_color_ = pool_.front()->writer.wants_color();
  }

  // The frames, overlapped: in an arena of run.threads slots when that is set (the CPU loop's
  // parallel_for inside it stays within them too); global_control lets oneTBB start more workers
  // than the default when more are asked for.
  void run_frames() {
    t0_ = Clock::now();
    const int threads = input_.config.run.threads;
    if (threads > 0) {
      const tbb::global_control workers(
          tbb::global_control::max_allowed_parallelism,
          std::max<size_t>(static_cast<size_t>(threads),
                           tbb::global_control::active_value(tbb::global_control::max_allowed_parallelism)));
      tbb::task_arena(threads).execute([this] { pipeline(); });
    } else {
      pipeline();
    }
  }

  void pipeline() {
    tbb::parallel_pipeline(
        tokens_, tbb::make_filter<void, Work*>(tbb::filter_mode::serial_in_order,
                                               [this](tbb::flow_control& fc) { return take(fc); }) &
                     tbb::make_filter<Work*, Work*>(tbb::filter_mode::parallel, [this](Work* w) { return decode(w); }) &
                     tbb::make_filter<Work*, Work*>(tbb::filter_mode::parallel, [this](Work* w) { return mask(w); }) &
                     tbb::make_filter<Work*, Work*>(
                         stop_at_failure_ ? tbb::filter_mode::serial_in_order : tbb::filter_mode::parallel,
                         [this](Work* w) { return write(w); }) &
                     tbb::make_filter<Work*, void>(tbb::filter_mode::serial_in_order, [this](Work* w) { commit(w); }));
  }

  // Finish: save the manifest (a failure is the summary's manifest_error, not an exception), count,
  // write the run record (report.h).
  void finish() {
    try {
      resume_->flush();
    } catch (const OutputError& e) {
      s_.manifest_error = e.what();
      detail::log().error("the resume manifest could not be saved: {}; a re-run redoes the frames it does not record",
                          e.what());
    }
    s_.skipped = s_.total - s_.ok - s_.failed - s_.skipped_done;
    s_.seconds = std::chrono::duration<double>(Clock::now() - t0_).count();
    if (first_commit_) {
      // The first frame's moment, read back from now: /proc is read once, outside the pipeline.
      const double since_first = ms_between(*first_commit_, Clock::now());
      s_.startup.first_frame_ms = std::max(0.0, ms_since_process_start().value_or(0.0) - since_first);
      s_.startup.run_first_frame_ms = ms_between(start_, *first_commit_);
    }
    try {
      write_run_record(input_.config, s_);
    } catch (const OutputError& e) {
      // The outputs and the manifest are what a re-run needs; the record only feeds the report.
      detail::log().warn("the run record could not be written: {}", e.what());
    }
    const StartupTimes& t = s_.startup;
    detail::log().info(
        "start-up: first frame {:.1f} ms after the process started ({:.1f} ms after the run's start); CUDA "
        "initialisation {:.1f} ms{}, listing {:.1f} ms, opening the backend after the listing {:.1f} ms",
        t.first_frame_ms, t.run_first_frame_ms, t.cuda_init_ms, t.cuda_init_ms > 0 ? "" : " (not initialised)",
        t.listing_ms, t.backend_open_ms);
  }

  // run.on_error: stop — the index of the failed frame, once one failed: no later frame is admitted,
  // written or committed.
  static constexpr size_t kNone = ~size_t{0};
  bool stopping() const { return stopping_after_.load() != kNone; }

  // Take: the next frame into a free Work, in listing order; none once stopping or interrupted.
  Work* take(tbb::flow_control& fc) {
    const auto& frames = input_.listing.frames;
    if (next_ >= frames.size() || stopping()) {
      fc.stop();
      return nullptr;
    }
    if (stop_ && stop_->load(std::memory_order_relaxed)) {
      s_.interrupted = true;
      fc.stop();
      return nullptr;
    }
    Work* w = nullptr;
    const bool got = free_works_.try_pop(w);
    DM_EXPECT(got, std::logic_error, "frame pool exhausted with " << tokens_ << " tokens");
    w->index = next_;
    w->frame = &frames[next_];
    w->resumed = finished_before_[next_];
    w->finished = false;
    w->files.clear();
    w->stats = FrameStats{};
    w->failure.reset();
    w->fatal = nullptr;
    ++next_;
    return w;
  }

  // Decode (frames with instance masks do everything here: their masks and outputs interleave).
  Work* decode(Work* w) {
    stage(*w, [&] {
      const FrameEntry& f = *w->frame;
      w->params = f.depth_scale ? mask_params(input_.config, f) : params_;  // BOP: a frame's own depth scale
      if (f.instances.empty()) {
        w->slot.load(f, want_color_);
        return;
      }
      FrameOutputs out = process_frame(
          input_.config, f, w->slot, w->params,
          [&](const FrameSlot& masked, const std::string& id) { units_.observe(masked, w->params, id); }, &w->writer);
      w->files = std::move(out.files);
      w->stats = std::move(out.stats);
      w->finished = true;
    });
    return w;
  }

  // Mask: on the device, on the slot's own stream (other frames' copies and kernels overlap it).
  Work* mask(Work* w) {
    stage(*w, [&] { w->slot.run_mask(w->params); });
    return w;
  }

  // Encode and write: in parallel; in listing order with run.on_error: stop, so that no frame after
  // a failed one is written (a serial run's outputs exactly).
  Work* write(Work* w) {
    if (stop_at_failure_ && stopping()) return w;  // after the failure: dropped at commit
    stage(*w, [&] {
      units_.observe(w->slot, w->params, w->frame->id);
      w->files = w->writer.write(*w->frame, w->slot, &w->stats);
      w->finished = true;
    });
    if (stop_at_failure_ && (w->failure || w->fatal)) stopping_after_ = w->index;
    return w;
  }

  // Commit, in listing order: the manifest, the counts, the observer. The Work goes back to the pool.
  void commit(Work* w) {
    struct Recycle {
      tbb::concurrent_queue<Work*>& q;
      Work* w;
      ~Recycle() { q.push(w); }
    } recycle{free_works_, w};
    if (w->fatal) std::rethrow_exception(w->fatal);
    if (w->index > stopping_after_.load()) return;  // after the failure that stopped the run: not done
    const FrameEntry& f = *w->frame;
    if (!first_commit_) first_commit_ = Clock::now();
    ++done_;
    if (w->resumed) {
      ++s_.skipped_done;
      if (observer_) observer_->on_frame(f, done_, s_.total, nullptr);
      return;
    }
    const bool ok = w->finished && !w->failure;
    if (ok && w->slot.depth_stored_channels() == 3 && !three_channel_logged_) {
      three_channel_logged_ = true;  // once per run, the first such file in listing order
      detail::log().info("{}", three_channel_depth_note(f.depth));
    }
    if (ok) {
      resume_->finished(f, std::move(w->files), std::move(w->stats));
      ++s_.ok;
    } else {
      ++s_.failed;
      FrameFailure failure = w->failure.value_or(FrameFailure{f.id, "not processed", Failure::Internal});
      failure.message = "frame " + f.id + " (#" + std::to_string(f.index + 1) + "): " + failure.message;
      // In the manifest too, for the report and `status`: the last attempt's class and message.
      resume_->failed(f, failure.failure, failure.message);
      s_.failures.push_back(failure);
    }
    // The observer goes first so a progress bar can clear its line before the error is logged.
    if (observer_) observer_->on_frame(f, done_, s_.total, ok ? nullptr : &s_.failures.back());
    if (!ok) detail::log().error("{}", s_.failures.back().message);
    if (!ok && input_.config.run.on_error == OnError::Stop) {
      detail::log().error("stopping at the first failed frame (run.on_error: stop)");
      stopping_after_ = std::min(stopping_after_.load(), w->index);
    }
  }

  // Runs one stage of a frame that is still busy; what it throws is classified as the live runner
  // classifies it (classify_frame_failure): the frame's failure, or the batch's fatal error.
  template <class F>
  void stage(Work& w, F&& f) {
    if (!w.busy()) return;
    try {
      f();
    } catch (...) {
      detail::ClassifiedFailure v =
          detail::classify_frame_failure(std::current_exception(), *backend_, "frame " + w.frame->id);
      if (v.fatal) {
        w.fatal = v.fatal;
        return;
      }
      w.failure = FrameFailure{w.frame->id, std::move(v.message), v.failure};
      if (v.out_of_memory) {
        // What the slot grew goes back, so the frames after it start from nothing rather than from
        // this frame's buffers.
        w.slot.release_buffers();
        w.writer.release_buffers();
      }
    }
  }

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

}  // namespace

RunSummary run_batch(const Config& config, MemoryBackend& backend, const BackendChoice& choice, RunObserver* observer,
                     const std::atomic<bool>* stop) {
  return BatchRun(config, backend, choice, observer, stop).run();
}

RunSummary run_batch(const Config& config, BackendOpener& opener, RunObserver* observer,
                     const std::atomic<bool>* stop) {
  return BatchRun(config, opener, observer, stop).run();
}

}  // namespace depthmask
