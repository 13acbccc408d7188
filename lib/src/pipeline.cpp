#include "depthmask/pipeline.h"

#include <spdlog/spdlog.h>

#include <opencv2/imgcodecs.hpp>

#include <tbb/concurrent_queue.h>
#include <tbb/global_control.h>
#include <tbb/parallel_pipeline.h>
#include <tbb/task_arena.h>

#include <algorithm>
#include <chrono>
#include <exception>
#include <mutex>
#include <optional>
#include <thread>

#include "depthmask/encoders.h"
#include "depthmask/errors.h"
#include "depthmask/frame.h"
#include "depthmask/frame_writer.h"
#include "depthmask/layouts.h"
#include "depthmask/manifest.h"
#include "depthmask/registration.h"
#include "depthmask/unit_check.h"

namespace depthmask {

std::vector<OutputFile> process_frame(const Config& c, const FrameEntry& f, FrameSlot& slot, const MaskParams& params,
                                      const MaskedHook& on_masked, FrameWriter* writer) {
  const bool want_color = writer ? writer->wants_color() : c.output.preview;
  std::vector<OutputFile> files;
  auto emit = [&](const FrameEntry& e) {
    if (on_masked) on_masked(slot, e.id);
    if (!writer) return;
    auto written = writer->write(e, slot);
    files.insert(files.end(), written.begin(), written.end());
  };
  if (f.instances.empty()) {
    slot.load(f, want_color);
    slot.run_mask(params);
    emit(f);
    return files;
  }
  slot.load_depth(f, want_color);
  if (!c.mask.per_instance) {
    slot.load_instance_union(f, params);
    slot.run_mask(union_mask_params(params));
    emit(f);
    return files;
  }
  for (const auto& [instance, mask_file] : f.instances) {
    slot.load_mask(mask_file, f.depth);
    slot.run_mask(params);
    FrameEntry one = f;
    one.id = f.id + "_" + instance;
    one.mask = mask_file;
    one.instances.clear();
    // output.layout mirror names outputs after the depth file: give each instance its own stem.
    if (!f.relative.empty())
      one.relative =
          f.relative.parent_path() / (f.relative.stem().string() + "_" + instance + f.relative.extension().string());
    emit(one);
  }
  return files;
}

namespace {

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
    if (!w.empty()) spdlog::warn("frame {}: {}", id, w);
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
  std::optional<FrameFailure> failure;
  std::exception_ptr fatal;  // stops the batch (the device is gone)

  Work(MemoryBackend& b, const Config& c) : slot(b), writer(c, b) {}
  bool busy() const { return !resumed && !finished && !failure && !fatal; }
};

// Runs one stage of a frame; what it throws becomes the frame's failure, or, for a sticky CUDA error
// (every later call would fail too), the batch's.
template <class F>
void stage(Work& w, MemoryBackend& backend, F&& f) {
  if (!w.busy()) return;
  try {
    f();
  } catch (const CudaError& e) {
    const std::string why = backend.health();
    if (!why.empty())
      w.fatal = std::make_exception_ptr(PlatformError(why + " (at frame " + w.frame->id + ": " + e.what() + ")"));
    else
      w.failure = FrameFailure{w.frame->id, e.what()};
  } catch (const ResourceError& e) {
    // Out of (device) memory for this frame: it fails; what its slot grew goes back, so the frames
    // after it start from nothing rather than from this frame's buffers.
    w.failure = FrameFailure{w.frame->id, e.what()};
    w.slot.release_buffers();
    w.writer.release_buffers();
  } catch (const std::bad_alloc&) {
    w.failure = FrameFailure{w.frame->id, "out of host memory"};
  } catch (const cv::Exception& e) {
    w.failure = FrameFailure{w.frame->id, std::string("OpenCV: ") + e.what()};
  } catch (const std::exception& e) {
    // InputError, OutputError, ResourceError and anything unexpected: this frame failed, the batch goes on.
    w.failure = FrameFailure{w.frame->id, e.what()};
  }
}

}  // namespace

size_t frames_in_flight(const Config& c, const MemoryBackend& backend) {
  if (!backend.host_access_during_kernels()) return 1;
  if (c.run.frames_in_flight > 0) return static_cast<size_t>(c.run.frames_in_flight);
  const size_t threads = c.run.threads > 0 ? static_cast<size_t>(c.run.threads) : std::thread::hardware_concurrency();
  return std::clamp<size_t>(threads + 2, 2, 32);
}

RunSummary run_batch(const Config& config, MemoryBackend& backend, const BackendChoice& choice, RunObserver* observer,
                     const std::atomic<bool>* stop) {
  using Clock = std::chrono::steady_clock;
  const ResolvedInput input = resolve_input(config);
  spdlog::info("layout {} ({})", to_string(input.layout), input.reason);
  const Config& c = input.config;  // with the layout's defaults for the keys the user did not set
  // The input's camera geometry when its depth comes from another camera than the mask (APC raw/
  // with cam.info.txt); without one, 'reproject' is refused here, up front.
  std::optional<CameraGeometry> geometry;
  if (input.depth_from_depth_camera) geometry = input.geometry;
  check_registration(c.registration.mode, geometry);
  RunSummary s;
  s.backend = backend.kind();
  s.backend_reason = choice.reason;

  const DatasetListing& listing = input.listing;
  s.total = listing.frames.size();
  s.unmatched_files = listing.unmatched_files;
  if (listing.unmatched_files > 0) {
    std::string ex;
    for (const auto& p : listing.unmatched_examples) ex += (ex.empty() ? "" : ", ") + p.filename().string();
    spdlog::info("ignoring {} file(s) that belong to no depth frame (e.g. {})", listing.unmatched_files, ex);
  }
  check_outputs_spare_inputs(c, listing);
  ensure_output_dir(c.output.dir);
  if (const size_t n = remove_stale_temp_files(c.output.dir))
    spdlog::info("removed {} temporary file(s) an interrupted run left in {}", n, c.output.dir.string());
  ResumeLog resume(c);
  const std::vector<bool> finished_before = resume.plan(listing.frames);
  if (observer) observer->on_start(listing);

  const MaskParams params = mask_params(c);
  UnitCheck units;
  // The pool: one Work (slot + writer) per frame in flight; the pipeline never admits more frames
  // than there are Works, so memory is bounded by the pool, not by the dataset.
  const size_t tokens = std::min(frames_in_flight(c, backend), std::max<size_t>(listing.frames.size(), 1));
  std::vector<std::unique_ptr<Work>> pool;
  tbb::concurrent_queue<Work*> free_works;
  for (size_t i = 0; i < tokens; ++i) {
    pool.push_back(std::make_unique<Work>(backend, c));
    pool.back()->slot.set_registration(c.registration.mode, geometry);
    pool.back()->slot.set_limits(input_limits(c));
    // Many frames wait on the device at once: their threads sleep, leaving the cores to the codecs.
    pool.back()->slot.set_wait(Wait::Block);
    free_works.push(pool.back().get());
  }
  spdlog::debug("{} frame(s) in flight", tokens);
  const bool want_color = pool.front()->writer.wants_color();

  const auto t0 = Clock::now();
  // However the run ends (a batch-stopping error included), what finished stays recorded.
  struct FlushOnExit {
    ResumeLog& log;
    ~FlushOnExit() {
      try {
        log.flush();
      } catch (...) {
      }
    }
  } flush_on_exit{resume};

  size_t next = 0, done = 0;
  // run.on_error: stop — the index of the failed frame, once one failed: no later frame is admitted,
  // written or committed.
  constexpr size_t kNone = ~size_t{0};
  std::atomic<size_t> stopping_after{kNone};
  auto stopping = [&] { return stopping_after.load() != kNone; };
  auto take = [&](tbb::flow_control& fc) -> Work* {
    if (next >= listing.frames.size() || stopping()) {
      fc.stop();
      return nullptr;
    }
    if (stop && stop->load(std::memory_order_relaxed)) {
      s.interrupted = true;
      fc.stop();
      return nullptr;
    }
    Work* w = nullptr;
    const bool got = free_works.try_pop(w);
    DM_EXPECT(got, std::logic_error, "frame pool exhausted with " << tokens << " tokens");
    w->index = next;
    w->frame = &listing.frames[next];
    w->resumed = finished_before[next];
    w->finished = false;
    w->files.clear();
    w->failure.reset();
    w->fatal = nullptr;
    ++next;
    return w;
  };
  // Decode (frames with instance masks do everything here: their masks and outputs interleave).
  auto decode = [&](Work* w) -> Work* {
    stage(*w, backend, [&] {
      const FrameEntry& f = *w->frame;
      w->params = f.depth_scale ? mask_params(c, f) : params;  // BOP: a frame may have its own depth scale
      if (f.instances.empty()) {
        w->slot.load(f, want_color);
        return;
      }
      w->files = process_frame(
          c, f, w->slot, w->params,
          [&](const FrameSlot& masked, const std::string& id) { units.observe(masked, w->params, id); }, &w->writer);
      w->finished = true;
    });
    return w;
  };
  // Mask: on the device, on the slot's own stream (other frames' copies and kernels overlap it).
  auto mask = [&](Work* w) -> Work* {
    stage(*w, backend, [&] { w->slot.run_mask(w->params); });
    return w;
  };
  // Encode and write: in parallel; in listing order with run.on_error: stop, so that no frame after
  // a failed one is written (a serial run's outputs exactly).
  const bool stop_at_failure = c.run.on_error == OnError::Stop;
  auto write = [&](Work* w) -> Work* {
    if (stop_at_failure && stopping()) return w;  // after the failure: dropped at commit
    stage(*w, backend, [&] {
      units.observe(w->slot, w->params, w->frame->id);
      w->files = w->writer.write(*w->frame, w->slot);
      w->finished = true;
    });
    if (stop_at_failure && (w->failure || w->fatal)) stopping_after = w->index;
    return w;
  };
  // Commit, in listing order: the manifest, the counts, the observer. The Work goes back to the pool.
  auto commit = [&](Work* w) {
    struct Recycle {
      tbb::concurrent_queue<Work*>& q;
      Work* w;
      ~Recycle() { q.push(w); }
    } recycle{free_works, w};
    if (w->fatal) std::rethrow_exception(w->fatal);
    if (w->index > stopping_after.load()) return;  // after the failure that stopped the run: not done
    const FrameEntry& f = *w->frame;
    ++done;
    if (w->resumed) {
      ++s.skipped_done;
      if (observer) observer->on_frame(f, done, s.total, nullptr);
      return;
    }
    const bool ok = w->finished && !w->failure;
    if (ok) {
      resume.finished(f, std::move(w->files));
      ++s.ok;
    } else {
      ++s.failed;
      FrameFailure failure = w->failure.value_or(FrameFailure{f.id, "not processed"});
      failure.message = "frame " + f.id + " (#" + std::to_string(f.index + 1) + "): " + failure.message;
      s.failures.push_back(failure);
    }
    // The observer goes first so a progress bar can clear its line before the error is logged.
    if (observer) observer->on_frame(f, done, s.total, ok ? nullptr : &s.failures.back());
    if (!ok) spdlog::error("{}", s.failures.back().message);
    if (!ok && c.run.on_error == OnError::Stop) {
      spdlog::error("stopping at the first failed frame (run.on_error: stop)");
      stopping_after = std::min(stopping_after.load(), w->index);
    }
  };
  auto pipeline = [&] {
    tbb::parallel_pipeline(
        tokens, tbb::make_filter<void, Work*>(tbb::filter_mode::serial_in_order, take) &
                    tbb::make_filter<Work*, Work*>(tbb::filter_mode::parallel, decode) &
                    tbb::make_filter<Work*, Work*>(tbb::filter_mode::parallel, mask) &
                    tbb::make_filter<Work*, Work*>(
                        stop_at_failure ? tbb::filter_mode::serial_in_order : tbb::filter_mode::parallel, write) &
                    tbb::make_filter<Work*, void>(tbb::filter_mode::serial_in_order, commit));
  };
  if (c.run.threads > 0) {
    // An arena of run.threads slots (the CPU loop's parallel_for inside it stays within them too);
    // global_control lets oneTBB start more workers than the default when more are asked for.
    const tbb::global_control workers(
        tbb::global_control::max_allowed_parallelism,
        std::max<size_t>(static_cast<size_t>(c.run.threads),
                         tbb::global_control::active_value(tbb::global_control::max_allowed_parallelism)));
    tbb::task_arena(c.run.threads).execute(pipeline);
  } else {
    pipeline();
  }
  try {
    resume.flush();
  } catch (const OutputError& e) {
    s.manifest_error = e.what();
    spdlog::error("the resume manifest could not be saved: {}; a re-run redoes the frames it does not record",
                  e.what());
  }
  s.skipped = s.total - s.ok - s.failed - s.skipped_done;
  s.seconds = std::chrono::duration<double>(Clock::now() - t0).count();
  return s;
}

}  // namespace depthmask
