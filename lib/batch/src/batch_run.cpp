// The batch run's steps around the frames (batch_run.h): prepare() before them, finish() after;
// the frames themselves are batch_frames.cpp.

#include <time.h>
#include <unistd.h>

#include <algorithm>
#include <charconv>
#include <chrono>
#include <fstream>
#include <memory>
#include <optional>
#include <string>

#include "batch_run.h"
#include "depthmask/detail/log.h"
#include "depthmask/errors.h"
#include "depthmask/registration.h"
#include "depthmask/run_record.h"

namespace fs = std::filesystem;

namespace depthmask {

namespace detail {

namespace {

using Clock = BatchRun::Clock;

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

}  // namespace

RunSummary BatchRun::run() {
  prepare();
  try {
    run_frames();
  } catch (...) {
    // However the run ends (a batch-stopping error included), what finished stays recorded.
    try {
      resume_->flush();
    } catch (...) {
    }
    bag_.reset();  // the part closed: every frame it holds is readable
    throw;
  }
  finish();
  if (bag_) finish_bag();
  return std::move(s_);
}

void BatchRun::prepare() {
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
  s_.unmatched_what = listing.unmatched_what;
  if (listing.unmatched_files > 0) {
    std::string ex;
    for (const auto& p : listing.unmatched_examples) ex += (ex.empty() ? "" : ", ") + p.filename().string();
    detail::log().info("ignoring {} {} that belong to no depth frame (e.g. {})", listing.unmatched_files,
                       listing.unmatched_what, ex);
  }
  for (const std::string& d : listing.damaged)  // a damaged bag: its frames before the damage run
    s_.failures.push_back(FrameFailure{"", d, Failure::Input});
  check_outputs_spare_inputs(c, listing);  // every frame's, not only this shard's: they share the folder
  if (writes_bag(c)) {
    DM_EXPECT(!c.mask.per_instance, ConfigError,
              "output.format mcap writes one depth message per frame: it does not take mask.per_instance");
    all_frames_ = listing.frames;
  }
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
  if (writes_bag(c)) prepare_bag();
  try {
    // The record says what runs here from now on (`status OUT` reads it), and again at the end.
    write_run_record_started(c);
  } catch (const OutputError& e) {
    detail::log().warn("the run record could not be written: {}", e.what());
  }
  if (observer_) observer_->on_start(listing);
  make_pool();
}

void BatchRun::use_backend(MemoryBackend& backend, const BackendChoice& choice) {
  backend_ = &backend;
  s_.backend = backend.kind();
  s_.backend_reason = choice.reason;
  s_.backend_degraded = choice.degraded;
}

void BatchRun::make_pool() {
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

void BatchRun::finish() {
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

}  // namespace detail

RunSummary run_batch(const Config& config, MemoryBackend& backend, const BackendChoice& choice, RunObserver* observer,
                     const std::atomic<bool>* stop) {
  return detail::BatchRun(config, backend, choice, observer, stop).run();
}

RunSummary run_batch(const Config& config, BackendOpener& opener, RunObserver* observer,
                     const std::atomic<bool>* stop) {
  return detail::BatchRun(config, opener, observer, stop).run();
}

}  // namespace depthmask
