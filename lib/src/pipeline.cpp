#include "depthmask/pipeline.h"

#include <spdlog/spdlog.h>

#include <opencv2/imgcodecs.hpp>

#include <chrono>

#include "depthmask/errors.h"
#include "depthmask/frame.h"
#include "depthmask/layouts.h"
#include "depthmask/manifest.h"
#include "depthmask/outputs.h"
#include "depthmask/registration.h"
#include "depthmask/units.h"
#include "depthmask/writers.h"

namespace depthmask {

namespace {

// The unit sanity check, once per run: on the first masked output that keeps enough pixels.
struct UnitCheck {
  bool done = false;
  void observe(const FrameSlot& slot, const MaskParams& p, const std::string& id) {
    if (done) return;
    const auto median = median_kept_depth(slot.out(), p.invalid);
    if (!median) return;
    done = true;
    const std::string w = depth_unit_warning(*median, p.scale, slot.depth().type() == CV_32FC1);
    if (!w.empty()) spdlog::warn("frame {}: {}", id, w);
  }
};

}  // namespace

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
      one.relative = f.relative.parent_path() / (f.relative.stem().string() + "_" + instance + f.relative.extension().string());
    emit(one);
  }
  return files;
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
  ensure_output_dir(c.output.dir);
  if (const size_t n = remove_stale_temp_files(c.output.dir))
    spdlog::info("removed {} temporary file(s) an interrupted run left in {}", n, c.output.dir.string());
  ResumeLog resume(c);
  const std::vector<bool> finished_before = resume.plan(listing.frames);
  if (observer) observer->on_start(listing);

  const MaskParams params = mask_params(c);
  FrameSlot slot(backend);
  UnitCheck units;
  slot.set_registration(c.registration.mode, geometry);
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
      // A frame with its own depth scale (BOP) gets its own parameters.
      const MaskParams frame_params = f.depth_scale ? mask_params(c, f) : params;
      resume.finished(f, process_frame(c, f, slot, frame_params,
                                       [&](const FrameSlot& masked, const std::string& id) { units.observe(masked, frame_params, id); },
                                       &writer));
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
