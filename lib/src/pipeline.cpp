#include "depthmask/pipeline.h"

#include <spdlog/spdlog.h>

#include <opencv2/imgcodecs.hpp>

#include <chrono>

#include "depthmask/errors.h"
#include "depthmask/frame.h"
#include "depthmask/layouts.h"
#include "depthmask/registration.h"
#include "depthmask/units.h"
#include "depthmask/writers.h"

namespace depthmask {

namespace {

void write_frame(const Config& c, const FrameEntry& f, const FrameSlot& slot) {
  const bool sync = c.output.fsync;
  for (const OutputFormat fmt : c.output.formats) {
    if (fmt == OutputFormat::Tiff) {
      const auto bytes = encode_tiff(slot.out());
      write_file_atomic(output_path(c.output.dir, f.id, "tiff"), bytes.data(), bytes.size(), sync);
    } else {
      const auto bytes = encode_npy(slot.out());
      write_file_atomic(output_path(c.output.dir, f.id, "npy"), bytes.data(), bytes.size(), sync);
    }
  }
  if (c.output.preview) {
    std::vector<uint8_t> png;
    const cv::Mat preview = make_preview(slot.color(), slot.mask(), slot.out(), c.output.invalid);
    DM_EXPECT(cv::imencode(".png", preview, png), OutputError, "OpenCV could not encode the preview of frame " << f.id);
    write_file_atomic(output_path(c.output.dir, f.id, "preview.png"), png.data(), png.size(), sync);
  }
}

// Settings the configuration accepts but this build does not act on yet are refused, never ignored.
void check_supported(const Config& c) {
  auto refuse = [](const std::string& what) { throw ConfigError(what + " is not supported yet"); };
  if (c.output.layout != OutputLayout::Flat) refuse("output.layout 'mirror'");
  for (auto f : c.output.formats)
    if (f != OutputFormat::Tiff && f != OutputFormat::Npy) refuse("output.format '" + std::string(to_string(f)) + "'");
}

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

void process_frame(const Config& c, const FrameEntry& f, FrameSlot& slot, const MaskParams& params,
                   const MaskedHook& on_masked) {
  if (f.instances.empty()) {
    slot.load(f, c.output.preview);
    slot.run_mask(params);
    if (on_masked) on_masked(slot, f.id);
    write_frame(c, f, slot);
    return;
  }
  slot.load_depth(f, c.output.preview);
  if (!c.mask.per_instance) {
    slot.load_instance_union(f, params);
    slot.run_mask(union_mask_params(params));
    if (on_masked) on_masked(slot, f.id);
    write_frame(c, f, slot);
    return;
  }
  for (const auto& [instance, mask_file] : f.instances) {
    slot.load_mask(mask_file, f.depth);
    slot.run_mask(params);
    FrameEntry one = f;
    one.id = f.id + "_" + instance;
    one.mask = mask_file;
    one.instances.clear();
    if (on_masked) on_masked(slot, one.id);
    write_frame(c, one, slot);
  }
}

RunSummary run_batch(const Config& config, MemoryBackend& backend, const BackendChoice& choice, RunObserver* observer,
                     const std::atomic<bool>* stop) {
  using Clock = std::chrono::steady_clock;
  check_supported(config);
  const ResolvedInput input = resolve_input(config);
  spdlog::info("layout {} ({})", to_string(input.layout), input.reason);
  const Config& c = input.config;  // with the layout's defaults for the keys the user did not set
  check_supported(c);
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
  if (observer) observer->on_start(listing);

  const MaskParams params = mask_params(c);
  FrameSlot slot(backend);
  UnitCheck units;
  slot.set_registration(c.registration.mode, geometry);
  const auto t0 = Clock::now();
  size_t done = 0;
  for (const FrameEntry& f : listing.frames) {
    if (stop && stop->load(std::memory_order_relaxed)) {
      s.interrupted = true;
      break;
    }
    FrameFailure failure;
    bool ok = false;
    try {
      // A frame with its own depth scale (BOP) gets its own parameters.
      const MaskParams frame_params = f.depth_scale ? mask_params(c, f) : params;
      process_frame(c, f, slot, frame_params,
                    [&](const FrameSlot& masked, const std::string& id) { units.observe(masked, frame_params, id); });
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
  s.skipped = s.total - s.ok - s.failed;
  s.seconds = std::chrono::duration<double>(Clock::now() - t0).count();
  return s;
}

}  // namespace depthmask
