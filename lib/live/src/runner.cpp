#include "depthmask/live_runner.h"

#include <opencv2/core.hpp>

#include <algorithm>
#include <chrono>
#include <condition_variable>
#include <exception>
#include <filesystem>
#include <memory>
#include <mutex>
#include <optional>
#include <thread>
#include <vector>

#include "depthmask/bag_output.h"
#include "depthmask/detail/frame_failure.h"
#include "depthmask/detail/log.h"
#include "depthmask/encoders.h"
#include "depthmask/errors.h"
#include "depthmask/frame_writer.h"
#include "depthmask/live_server.h"
#include "failure_log.h"
#include "fixed_size.h"
#include "live_masks.h"
#include "preview.h"
#include "publisher.h"
#include "ros2_live.h"

namespace depthmask {

namespace {

using Clock = std::chrono::steady_clock;
using detail::LatencyHistogram;

// One frame in flight: its slot (backend buffers reused frame after frame) and what is known of it.
struct Item {
  explicit Item(MemoryBackend& b) : slot(b) {}
  FrameSlot slot;
  CapturedFrame meta;  // sequence, id, captured; the images live in the slot
  uint64_t latency_us = 0;
  bool failed = false;
  // The slot's mask holds mask-test results (live.mask: 255 = keep), masked with union_mask_params.
  bool tests = false;
  cv::Mat combined;  // reused: the frame's mask test AND the static mask
};
using Ring = detail::Ring<Item>;

class Runner {
 public:
  Runner(const Config& c, MemoryBackend& b, LiveSource& src, const LiveLimits& limits, const std::atomic<bool>* stop,
         LiveObserver* obs)
      : c_(c),
        backend_(b),
        source_(src),
        limits_(limits),
        stop_(stop),
        observer_(obs),
        params_(detail::live_mask_params(c)),
        tests_params_(union_mask_params(params_)),
        mask_q_(static_cast<size_t>(c.live.buffers)),
        out_q_(static_cast<size_t>(c.live.buffers)),
        failures_(b) {
    DM_EXPECT(c.live.buffers >= 2, ConfigError, "live.buffers must be at least 2, got " << c.live.buffers);
    if (!c.live.mask.static_file.empty()) {
      static_mask_ = detail::read_static_mask(c.live.mask.static_file, input_limits(c));
      detail::log().info("live: static mask {} ({}x{})", c.live.mask.static_file.string(), static_mask_.cols,
                         static_mask_.rows);
    }
    const std::optional<ColorKey> key = color_key_of(c);
    if (key)
      detail::log().info("live: colour key h [{}, {}] s [{}, {}] v [{}, {}], keep {}, on the {}", key->h_min,
                         key->h_max, key->s_min, key->s_max, key->v_min, key->v_max,
                         key->keep_inside ? "inside" : "outside", b.device_executes() ? "GPU" : "CPU");
    // live.publish: ZeroMQ endpoints and ros2:// namespaces side by side (made first: /NODE/reason
    // needs the reason pass in every slot).
    bool publish_reason = false;
    for (const std::string& target : detail::publish_targets(c.live.publish)) {
      if (target.rfind("ros2://", 0) == 0) {
        ros2_.push_back(detail::make_ros2_output(target, c));
        publish_reason = publish_reason || ros2_.back()->wants_reason();
      } else {
        publishers_.push_back(std::make_unique<detail::ZmqPublisher>(target));
      }
      detail::log().info("live: publishing on {}", target);
    }
    pool_.reserve(static_cast<size_t>(c.live.buffers));
    free_.reserve(static_cast<size_t>(c.live.buffers));
    for (int i = 0; i < c.live.buffers; ++i) {
      pool_.push_back(std::make_unique<Item>(b));
      pool_.back()->slot.set_color_key(key);  // the slot runs the key pass before masking
      // The reason pass only where its file is written (live.output_every) or served; its codes tell
      // live.mask.depth_band (8) from depth.min..max (6, 7).
      pool_.back()->slot.set_reason(
          (wants_reason(c) && (c.live.output_every > 0 || !c.live.serve.empty())) || publish_reason, mask_params(c));
      free_.push_back(pool_.back().get());
    }
    if (c.live.output_every > 0) {
      ensure_output_dir(c.output.dir);
      writer_.emplace(c, b);
      // output.format mcap: the written frames also go to a bag, merged into depthmask.mcap at the end.
      if (writes_bag(c)) {
        bag_lock_ = std::make_unique<BagLock>(c.output.dir, BagLock::Mode::Shared);
        bag_ = std::make_unique<BagOutput>(c, "live");
        bag_->open();
      }
    }
    if (c.live.preview) preview_ = std::make_unique<detail::Preview>(c);
    if (!c.live.serve.empty()) server_ = std::make_unique<LiveServer>(c);
  }

  LiveSummary run() {
    s_.backend = backend_.kind();
    source_.open();
    unpaired_seen_ = source_.unpaired();
    s_.source = source_.describe();
    s_.overflow = resolve_overflow(c_.live.overflow, source_);
    detail::log().info("live: {} → {} frame slot(s) on {}, overflow {}", s_.source, c_.live.buffers,
                       to_string(backend_.kind()), s_.overflow.reason);
    t0_ = Clock::now();
    std::thread capture([this] { guarded([this] { capture_loop(); }); });
    std::thread mask([this] { guarded([this] { mask_loop(); }); });
    std::thread output([this] { guarded([this] { output_loop(); }); });
    supervise();
    capture.join();
    mask.join();
    output.join();
    finish_bag();
    s_.seconds = std::chrono::duration<double>(Clock::now() - t0_).count();
    s_.latency = total_latency_.stats();
    s_.previewed = preview_ ? preview_->shown() : 0;
    s_.failed_resource = failures_.resource();
    if (server_) {
      s_.served = server_->counters();
      server_.reset();  // its clients are closed when the run returns
    }
    preview_.reset();  // the window closes on the thread that drew it
    if (fatal_) std::rethrow_exception(fatal_);
    return s_;
  }

 private:
  // The live bag (output.format mcap): its part closed, then merged into depthmask.mcap and
  // metadata.yaml (a live run is a recording of its own: nothing else completes it).
  void finish_bag() {
    if (!bag_) return;
    bag_->close();
    bag_lock_.reset();
    const std::optional<ClosedPart>& part = bag_->closed_part();
    const BagMerge m = finalize_bag(c_.output.dir, part ? &*part : nullptr);
    if (m.merged)
      detail::log().info("live: {} frame(s) recorded in {}", m.depth_messages, (c_.output.dir / kBagName).string());
    else
      detail::log().warn("live: the bag's part was not merged: {}", m.why_not);
  }

  // What escapes a stage thread (a bug, a sticky device error) stops the run and is rethrown by run().
  template <class F>
  void guarded(F&& f) {
    try {
      f();
    } catch (...) {
      std::lock_guard<std::mutex> lock(m_);
      if (!fatal_) fatal_ = std::current_exception();
      stopping_ = true;
      abort_ = true;
      cv_.notify_all();
    }
    // A thread that ended early still lets the stages behind it finish.
    std::lock_guard<std::mutex> lock(m_);
    cv_.notify_all();
  }

  void request_stop() {
    std::lock_guard<std::mutex> lock(m_);
    stopping_ = true;
    cv_.notify_all();
  }

  // The calling thread: the stop flag, the duration, the stats lines; until every stage has finished.
  void supervise() {
    const bool stats_on = c_.live.stats_interval > 0;
    const auto interval =
        std::chrono::duration_cast<Clock::duration>(std::chrono::duration<double>(c_.live.stats_interval));
    auto next_stats = t0_ + interval;
    auto last_stats = t0_;
    std::unique_lock<std::mutex> lock(m_);
    while (!output_done_) {
      cv_.wait_for(lock, std::chrono::milliseconds(preview_ && preview_->on() ? 10 : 20));
      if (preview_) {
        lock.unlock();
        preview_->pump();
        lock.lock();
      }
      const auto now = Clock::now();
      if (!stopping_ && stop_ && stop_->load(std::memory_order_relaxed)) {
        s_.interrupted = true;
        stopping_ = true;
        cv_.notify_all();
      }
      if (!stopping_ && limits_.duration > 0 && std::chrono::duration<double>(now - t0_).count() >= limits_.duration) {
        stopping_ = true;
        cv_.notify_all();
      }
      if (stopping_) source_.interrupt();  // wakes a read() waiting on a silent source (idempotent)
      if (stats_on && now >= next_stats) {
        LiveStats st;
        st.seconds = std::chrono::duration<double>(now - last_stats).count();
        st.processed = s_.processed - last_.processed;
        st.drops_overflow = s_.drops_overflow - last_.drops_overflow;
        st.drops_unpaired = s_.drops_unpaired - last_.drops_unpaired;
        st.failed = s_.failed - last_.failed;
        st.fps = st.seconds > 0 ? static_cast<double>(st.processed) / st.seconds : 0;
        st.latency = interval_latency_.stats();
        interval_latency_.clear();
        last_ = s_;
        last_stats = now;
        next_stats = now + interval;
        const uint64_t source_errors = s_.source_errors;
        lock.unlock();
        detail::log().info(
            "live: {:.1f} fps, latency p50 {} µs p99 {} µs, drops {} overflow {} unpaired {} failed, {} source "
            "error(s)",
            st.fps, st.latency.p50_us, st.latency.p99_us, st.drops_overflow, st.drops_unpaired, st.failed,
            source_errors);
        if (observer_) observer_->on_stats(st);
        lock.lock();
      }
    }
  }

  // Waits `delay` unless the run stops first; true when it stops.
  bool wait_or_stop(std::chrono::duration<double> delay) {
    std::unique_lock<std::mutex> lock(m_);
    return cv_.wait_for(lock, delay, [this] { return stopping_ || stop_requested(); });
  }
  bool stop_requested() const { return stop_ && stop_->load(std::memory_order_relaxed); }

  // After a read() failure: reopen with back-off until it works or the run stops. False when stopped.
  bool reconnect(const std::exception& first) {
    detail::log().warn("live: source failed: {}; reconnecting", first.what());
    double delay = 0.1;
    for (;;) {
      if (wait_or_stop(std::chrono::duration<double>(delay))) return false;
      try {
        source_.open();
        std::lock_guard<std::mutex> lock(m_);
        ++s_.reconnects;
        detail::log().info("live: source reopened ({} reconnect(s))", s_.reconnects);
        return true;
      } catch (const std::exception& e) {
        {
          std::lock_guard<std::mutex> lock(m_);
          ++s_.source_errors;
        }
        delay = std::min(delay * 2, c_.live.reconnect_max);
        detail::log().warn("live: reopening the source failed: {}; next try in {:.1f} s", e.what(), delay);
      }
    }
  }

  // A free slot: from the pool, or (drop_oldest) the oldest waiting frame's, or (block) the next one
  // to come back. Null when the run stops meanwhile.
  Item* take_slot() {
    std::unique_lock<std::mutex> lock(m_);
    for (;;) {
      if (abort_) return nullptr;
      if (!free_.empty()) {
        Item* it = free_.back();
        free_.pop_back();
        return it;
      }
      if (s_.overflow.policy == Overflow::DropOldest) {
        // The frames waiting for the output are older than those waiting for the mask.
        Ring& q = !out_q_.empty() ? out_q_ : mask_q_;
        if (!q.empty()) {
          ++s_.drops_overflow;
          return q.pop();
        }
      }
      // Every slot is being worked on (or block): wait for one to come back. Stopping does not end
      // this wait: the frame in hand is still processed, and slots always come back.
      cv_.wait(lock);
    }
  }

  void capture_loop() {
    backend_.make_current();
    CapturedFrame frame;
    while (!stopping_now() && !stop_requested()) {
      if (limits_.max_frames > 0 && s_.captured >= limits_.max_frames) break;
      bool got = false;
      try {
        got = source_.read(frame);
      } catch (const std::exception& e) {
        {
          std::lock_guard<std::mutex> lock(m_);
          ++s_.source_errors;
        }
        count_unpaired();
        if (!reconnect(e)) break;
        continue;
      }
      count_unpaired();
      if (!got) {
        std::lock_guard<std::mutex> lock(m_);
        if (stopping_) break;  // interrupted by the stop (LiveSource::interrupt), not the stream's end
        s_.source_ended = true;
        detail::log().info("live: the source ended after {} frame(s)", s_.captured);
        break;
      }
      if (frame.captured == Clock::time_point{}) frame.captured = Clock::now();
      if (!frame.three_channel_depth.empty() && !three_channel_logged_) {
        three_channel_logged_ = true;  // once per run
        detail::log().info("live: {}", three_channel_depth_note(frame.three_channel_depth));
      }
      check_static_size(frame);  // a mismatch stops the run: every frame of a fixed camera would fail
      check_color(frame);        // likewise: a source without (registered) colour never has it
      Item* it = take_slot();
      if (!it) break;
      it->meta.sequence = frame.sequence;
      it->meta.captured = frame.captured;
      it->meta.header = frame.header;  // ros2:// sources: published with the frame
      it->meta.camera_info = frame.camera_info;
      it->meta.id = frame.id.empty() ? std::to_string(frame.sequence) : frame.id;
      it->failed = false;
      it->latency_us = 0;
      try {
        it->slot.set(frame.depth, frame_mask(frame, *it), frame.color);
      } catch (...) {
        it->failed = true;
        if (auto fatal = failures_.frame_failed(it->meta, "copy", std::current_exception(), it->slot))
          std::rethrow_exception(fatal);
      }
      std::lock_guard<std::mutex> lock(m_);
      ++s_.captured;
      mask_q_.push(it);
      cv_.notify_all();
    }
    std::lock_guard<std::mutex> lock(m_);
    // The flag may reach this thread before supervise() sees it.
    if (!s_.source_ended && stop_requested()) s_.interrupted = true;
    stopping_ = true;  // a limit or the source's end stops the run as the flag does
    capture_done_ = true;
    cv_.notify_all();
  }

  // The source's unpaired drops since the last look (capture thread).
  void count_unpaired() {
    const uint64_t n = source_.unpaired();
    if (n == unpaired_seen_) return;
    std::lock_guard<std::mutex> lock(m_);
    s_.drops_unpaired += n - unpaired_seen_;
    unpaired_seen_ = n;
  }

  void check_static_size(const CapturedFrame& f) const {
    if (static_mask_.empty()) return;
    const cv::Size frame_size = f.mask.empty() ? f.depth.size() : f.mask.size();
    DM_EXPECT(static_mask_.size() == frame_size, InputError,
              "live.mask.static '" << c_.live.mask.static_file.string() << "' is " << static_mask_.cols << "x"
                                   << static_mask_.rows << " but the source's frames are " << frame_size.width << "x"
                                   << frame_size.height << "; expected the same size");
  }

  // live.mask.color_key needs each frame's colour: 8-bit BGR of the depth's size. A frame without it
  // stops the run (InputError naming the frame): a source that lacks colour, or whose colour is not
  // registered to the depth, would fail every frame alike.
  void check_color(const CapturedFrame& f) const {
    if (!c_.live.mask.color_key) return;
    const std::string frame = f.id.empty() ? std::to_string(f.sequence) : f.id;
    DM_EXPECT(!f.color.empty(), InputError,
              "live frame " << frame << " from " << source_.describe()
                            << " has no color image, but live.mask.color_key needs one (registered to the depth, "
                            << f.depth.cols << "x" << f.depth.rows << "); use a source that delivers color");
    DM_EXPECT(f.color.type() == CV_8UC3, InputError,
              "live frame " << frame << ": the color image has " << f.color.channels() << " channel(s) of OpenCV depth "
                            << f.color.depth() << "; live.mask.color_key expects 8-bit BGR (CV_8UC3)");
    DM_EXPECT(f.color.size() == f.depth.size(), InputError,
              "live frame " << frame << ": the color image is " << f.color.cols << "x" << f.color.rows
                            << " but the depth is " << f.depth.cols << "x" << f.depth.rows
                            << "; live.mask.color_key needs color registered to the depth (the same size)");
  }

  // The mask frame `f` is masked with (live.mask): its own (masked with params_); or mask-test results
  // (it.tests, masked with tests_params_): its own AND the static mask, the static mask alone, or all
  // 255 when the depth band alone decides.
  const cv::Mat& frame_mask(const CapturedFrame& f, Item& it) {
    it.tests = !static_mask_.empty() || f.mask.empty() || f.mask_tests;
    if (!it.tests) return f.mask;
    if (!static_mask_.empty()) {
      if (f.mask.empty()) return static_mask_;
      check_mask_type(f.mask, "<memory>");
      // A mask of test results already (replay's instance union) is tested by its own rule.
      const MaskParams& p = f.mask_tests ? tests_params_ : params_;
      if (f.mask.type() == CV_8UC1)
        detail::and_tests<uint8_t>(f.mask, static_mask_, p, it.combined);
      else
        detail::and_tests<uint16_t>(f.mask, static_mask_, p, it.combined);
      return it.combined;
    }
    if (!f.mask.empty()) return f.mask;  // f.mask_tests
    DM_EXPECT(c_.live.mask.depth_band.has_value() || c_.live.mask.color_key.has_value(), InputError,
              "the frame has no mask and none of live.mask.static, live.mask.depth_band, live.mask.color_key is set");
    if (keep_all_.size() != f.depth.size()) keep_all_ = cv::Mat(f.depth.size(), CV_8UC1, cv::Scalar(255));
    return keep_all_;  // the depth band and/or the colour key decide
  }

  bool stopping_now() {
    std::lock_guard<std::mutex> lock(m_);
    return stopping_;
  }

  // Pops from `q`, waiting; null once `upstream_done` and `q` is empty (or on abort).
  Item* pop(Ring& q, const bool& upstream_done) {
    std::unique_lock<std::mutex> lock(m_);
    cv_.wait(lock, [&] { return abort_ || !q.empty() || upstream_done; });
    if (abort_ || q.empty()) return nullptr;
    return q.pop();
  }

  void mask_loop() {
    backend_.make_current();
    while (Item* it = pop(mask_q_, capture_done_)) {
      if (!it->failed) {
        try {
          it->slot.run_mask(it->tests ? tests_params_ : params_);
          it->latency_us = static_cast<uint64_t>(
              std::chrono::duration_cast<std::chrono::microseconds>(Clock::now() - it->meta.captured).count());
        } catch (...) {
          it->failed = true;
          if (auto fatal = failures_.frame_failed(it->meta, "mask", std::current_exception(), it->slot)) {
            give_back(it);
            std::rethrow_exception(fatal);
          }
        }
      }
      std::lock_guard<std::mutex> lock(m_);
      out_q_.push(it);
      cv_.notify_all();
    }
    std::lock_guard<std::mutex> lock(m_);
    mask_done_ = true;
    cv_.notify_all();
  }

  void give_back(Item* it) {
    std::lock_guard<std::mutex> lock(m_);
    free_.push_back(it);
    cv_.notify_all();
  }

  void output_loop() {
    backend_.make_current();
    struct Done {
      Runner& r;
      ~Done() {
        std::lock_guard<std::mutex> lock(r.m_);
        r.output_done_ = true;
        r.cv_.notify_all();
      }
    } done{*this};
    FrameEntry entry;  // reused: what FrameWriter names outputs after
    const std::string_view backend_name = to_string(backend_.kind());
    uint64_t seen = 0;
    while (Item* it = pop(out_q_, mask_done_)) {
      bool ok = !it->failed;
      bool wrote = false, sent = false;
      if (ok) {
        try {
          ++seen;
          if (writer_ && seen % static_cast<uint64_t>(c_.live.output_every) == 0) {
            entry.index = static_cast<size_t>(it->meta.sequence);
            entry.id = it->meta.id;
            entry.relative = it->meta.id + ".png";  // output.layout mirror: the id is the whole path
            writer_->write(entry, it->slot);
            if (bag_) {  // stamped by capture time from the start of the run
              entry.timestamp = std::chrono::duration<double>(it->meta.captured - t0_).count();
              bag_->append(bag_->encode(entry, it->slot));
            }
            wrote = true;
          }
          for (auto& publisher : publishers_) {
            const detail::PublishedFrame pf{it->meta.id, it->meta.sequence, c_.output.invalid, it->latency_us,
                                            backend_name};
            sent = publisher->publish(pf, it->slot.out()) || sent;
          }
          for (auto& r : ros2_) sent = r->publish(it->meta, it->slot) || sent;
          if (server_ && server_->due(Clock::now())) serve(*it);  // copies, never waits
          if (preview_) preview_->offer(it->slot.out());          // never waits
          if (observer_) observer_->on_frame(it->meta, it->slot, it->latency_us);
        } catch (...) {
          ok = false;
          if (auto fatal = failures_.frame_failed(it->meta, "output", std::current_exception(), it->slot,
                                                  writer_ ? &*writer_ : nullptr)) {
            give_back(it);
            std::rethrow_exception(fatal);
          }
        }
      }
      std::lock_guard<std::mutex> lock(m_);
      if (ok) {
        ++s_.processed;
        total_latency_.add(it->latency_us);
        interval_latency_.add(it->latency_us);
      } else {
        ++s_.failed;
      }
      s_.written += wrote ? 1 : 0;
      s_.published += sent ? 1 : 0;
      free_.push_back(it);
      cv_.notify_all();
    }
  }

  // Offers the frame to live.serve with the run's counters (output thread).
  void serve(const Item& it) {
    std::unique_lock<std::mutex> lock(m_);
    const LatencyStats l = interval_latency_.stats();
    const ServedRunStats st{s_.processed, s_.drops_overflow, s_.drops_unpaired, s_.failed, l.p50_us, l.p99_us};
    lock.unlock();
    server_->offer({it.meta.id, it.meta.sequence, it.meta.captured, it.slot.out(), it.slot.color(), it.slot.reason()},
                   st);
  }

  const Config& c_;
  MemoryBackend& backend_;
  LiveSource& source_;
  const LiveLimits limits_;
  const std::atomic<bool>* stop_;
  LiveObserver* observer_;
  const MaskParams params_;            // the configured rule, with live.mask.depth_band
  const MaskParams tests_params_;      // the same for a mask of test results (Item::tests)
  cv::Mat static_mask_;                // live.mask.static as kTestKeep / kTestLiveDrop, or empty
  cv::Mat keep_all_;                   // all 255, for frames the depth band alone decides (capture thread)
  uint64_t unpaired_seen_ = 0;         // source_.unpaired() as last counted (capture thread)
  bool three_channel_logged_ = false;  // three_channel_depth_note logged this run (capture thread)

  std::vector<std::unique_ptr<Item>> pool_;
  std::optional<FrameWriter> writer_;
  std::unique_ptr<BagLock> bag_lock_;  // held while the part is written (a merge waits for it)
  std::unique_ptr<BagOutput> bag_;     // output.format mcap
  std::vector<std::unique_ptr<detail::ZmqPublisher>> publishers_;  // live.publish's ZeroMQ endpoints
  std::vector<std::unique_ptr<detail::Ros2Output>> ros2_;          // live.publish's ros2:// namespaces
  std::unique_ptr<detail::Preview> preview_;                       // live.preview; null when not asked for
  std::unique_ptr<LiveServer> server_;                             // live.serve; null when not asked for

  // Guards everything below, the queues and the summary's counters.
  std::mutex m_;
  std::condition_variable cv_;
  std::vector<Item*> free_;
  Ring mask_q_, out_q_;
  bool stopping_ = false;  // capture stops; frames in flight finish
  bool abort_ = false;     // a fatal error: everything stops now
  bool capture_done_ = false, mask_done_ = false, output_done_ = false;
  std::exception_ptr fatal_;
  LiveSummary s_, last_;
  LatencyHistogram total_latency_, interval_latency_;
  detail::FailureLog failures_;
  Clock::time_point t0_;
};

}  // namespace

LiveSummary run_live(const Config& config, MemoryBackend& backend, LiveSource& source, const LiveLimits& limits,
                     const std::atomic<bool>* stop, LiveObserver* observer) {
  // The histograms are 18 KiB each: on the heap, not the caller's stack.
  auto runner = std::make_unique<Runner>(config, backend, source, limits, stop, observer);
  return runner->run();
}

}  // namespace depthmask
