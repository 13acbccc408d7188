// The batch run's frames (batch_run.h): run_frames() and the pipeline's stages, take → decode → mask
// → write → commit, overlapped over the pool of Works.

#include <tbb/global_control.h>
#include <tbb/parallel_pipeline.h>
#include <tbb/task_arena.h>

#include <algorithm>
#include <chrono>
#include <exception>
#include <string>

#include "batch_run.h"
#include "depthmask/detail/frame_failure.h"
#include "depthmask/detail/log.h"
#include "depthmask/errors.h"
#include "depthmask/unit_check.h"

namespace depthmask::detail {

void UnitCheck::observe(const FrameSlot& slot, const MaskParams& p, const std::string& id) {
  if (done_.load(std::memory_order_acquire)) return;
  const auto median = median_kept_depth(slot.out(), p.invalid);
  if (!median) return;
  const std::lock_guard<std::mutex> lock(mutex_);
  if (done_.exchange(true)) return;
  const std::string w = depth_unit_warning(*median, p.scale, slot.depth().type() == CV_32FC1);
  if (!w.empty()) detail::log().warn("frame {}: {}", id, w);
}

template <class F>
void BatchRun::stage(Work& w, F&& f) {
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

void BatchRun::run_frames() {
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

void BatchRun::pipeline() {
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

// Take: the next frame into a free Work, in listing order; none once stopping or interrupted.
Work* BatchRun::take(tbb::flow_control& fc) {
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
  w->messages.clear();
  w->stats = FrameStats{};
  w->failure.reset();
  w->fatal = nullptr;
  ++next_;
  return w;
}

// Decode (frames with instance masks do everything here: their masks and outputs interleave).
Work* BatchRun::decode(Work* w) {
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
    if (bag_) w->messages = bag_->encode(f, w->slot);  // the union of the instances (no per_instance)
    w->finished = true;
  });
  return w;
}

// Mask: on the device, on the slot's own stream (other frames' copies and kernels overlap it).
Work* BatchRun::mask(Work* w) {
  stage(*w, [&] { w->slot.run_mask(w->params); });
  return w;
}

// Encode and write: in parallel; in listing order with run.on_error: stop, so that no frame after
// a failed one is written (a serial run's outputs exactly).
Work* BatchRun::write(Work* w) {
  if (stop_at_failure_ && stopping()) return w;  // after the failure: dropped at commit
  stage(*w, [&] {
    units_.observe(w->slot, w->params, w->frame->id);
    w->files = w->writer.write(*w->frame, w->slot, &w->stats);
    if (bag_) w->messages = bag_->encode(*w->frame, w->slot);
    w->finished = true;
  });
  if (stop_at_failure_ && (w->failure || w->fatal)) stopping_after_ = w->index;
  return w;
}

// Commit, in listing order: the manifest, the counts, the observer. The Work goes back to the pool.
void BatchRun::commit(Work* w) {
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
    // The frame's chunk is in the bag's part before its record is in the manifest: a frame the
    // manifest names done is in some part.
    if (bag_) bag_->append(std::move(w->messages));
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

}  // namespace depthmask::detail
