#include "depthmask/pipeline.h"

#include <spdlog/spdlog.h>

#include <opencv2/imgcodecs.hpp>

#include <chrono>

#include "depthmask/errors.h"
#include "depthmask/frame.h"
#include "depthmask/manifest.h"
#include "depthmask/outputs.h"
#include "depthmask/writers.h"

namespace depthmask {

namespace {

// Settings the configuration accepts but this build does not act on yet are refused, never ignored.
void check_supported(const Config& c) {
  auto refuse = [](const std::string& what) { throw ConfigError(what + " is not supported yet"); };
  if (c.input.layout != InputLayout::Auto && c.input.layout != InputLayout::Pattern)
    refuse("input.layout '" + std::string(to_string(c.input.layout)) + "'");
  if (!c.input.object.empty()) refuse("input.object");
  if (c.depth.encoding != DepthEncoding::Plain) refuse("depth.encoding 'apc'");
  if (!c.depth.invalid_values.empty()) refuse("depth.invalid_values");
  if (c.mask.threshold_fraction) refuse("mask.threshold_fraction");
  if (c.mask.erode != 0) refuse("mask.erode");
  if (c.mask.per_instance) refuse("mask.per_instance");
  if (c.registration.mode == RegistrationMode::Resample || c.registration.mode == RegistrationMode::Reproject)
    refuse("registration.mode '" + std::string(to_string(c.registration.mode)) + "'");
}

}  // namespace

RunSummary run_batch(const Config& c, MemoryBackend& backend, const BackendChoice& choice, RunObserver* observer,
                     const std::atomic<bool>* stop) {
  using Clock = std::chrono::steady_clock;
  check_supported(c);
  RunSummary s;
  s.backend = backend.kind();
  s.backend_reason = choice.reason;

  const DatasetListing listing = list_frames(c.input);
  s.total = listing.frames.size();
  s.unmatched_files = listing.unmatched_files;
  if (listing.unmatched_files > 0) {
    std::string ex;
    for (const auto& p : listing.unmatched_examples) ex += (ex.empty() ? "" : ", ") + p.filename().string();
    spdlog::info("ignoring {} file(s) that belong to no depth frame (e.g. {})", listing.unmatched_files, ex);
  }
  ensure_output_dir(c.output.dir);
  if (const size_t n = remove_stale_temp_files(c.output.dir))
    spdlog::info("removed {} temporary file(s) an interrupted run left in {}", n, c.output.dir.string());
  ResumeLog resume(c);
  const std::vector<bool> finished_before = resume.plan(listing.frames);
  if (observer) observer->on_start(listing);

  const MaskParams params = mask_params(c);
  FrameSlot slot(backend);
  FrameWriter writer(c, backend);
  const auto t0 = Clock::now();
  size_t done = 0;
  // However the loop ends (a batch-stopping error included), what finished stays recorded.
  struct FlushOnExit {
    ResumeLog& log;
    ~FlushOnExit() {
      try {
        log.flush();
      } catch (...) {
      }
    }
  } flush_on_exit{resume};
  for (size_t i = 0; i < listing.frames.size(); ++i) {
    const FrameEntry& f = listing.frames[i];
    if (stop && stop->load(std::memory_order_relaxed)) {
      s.interrupted = true;
      break;
    }
    if (finished_before[i]) {  // resume: recorded as finished by an earlier run, outputs intact
      ++s.skipped_done;
      ++done;
      if (observer) observer->on_frame(f, done, s.total, nullptr);
      continue;
    }
    FrameFailure failure;
    bool ok = false;
    try {
      slot.load(f, writer.wants_color());
      slot.run_mask(params);
      resume.finished(f, writer.write(f, slot));
      ok = true;
    } catch (const CudaError& e) {
      // A sticky error (illegal address, launch failure) fails every later call too: stop the batch
      // and report the platform; anything else is this frame's failure.
      const std::string why = backend.health();
      if (!why.empty()) throw PlatformError(why + " (at frame " + f.id + ": " + e.what() + ")");
      failure = {f.id, e.what()};
    } catch (const std::bad_alloc&) {
      failure = {f.id, "out of host memory"};
    } catch (const cv::Exception& e) {
      failure = {f.id, std::string("OpenCV: ") + e.what()};
    } catch (const std::exception& e) {
      // InputError, OutputError, ResourceError and anything unexpected: this frame failed, the batch goes on.
      failure = {f.id, e.what()};
    }
    ++done;
    if (ok) {
      ++s.ok;
    } else {
      ++s.failed;
      failure.message = "frame " + f.id + " (#" + std::to_string(f.index + 1) + "): " + failure.message;
      s.failures.push_back(failure);
    }
    // The observer goes first so a progress bar can clear its line before the error is logged.
    if (observer) observer->on_frame(f, done, s.total, ok ? nullptr : &s.failures.back());
    if (!ok) spdlog::error("{}", s.failures.back().message);
    if (!ok && c.run.on_error == OnError::Stop) {
      spdlog::error("stopping at the first failed frame (run.on_error: stop)");
      break;
    }
  }
  resume.flush();
  s.skipped = s.total - s.ok - s.failed - s.skipped_done;
  s.seconds = std::chrono::duration<double>(Clock::now() - t0).count();
  return s;
}

}  // namespace depthmask
