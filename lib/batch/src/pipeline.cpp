#include "depthmask/pipeline.h"

#include <algorithm>
#include <optional>
#include <thread>

#include "depthmask/errors.h"
#include "depthmask/frame.h"
#include "depthmask/frame_writer.h"

namespace depthmask {

FrameOutputs process_frame(const Config& c, const FrameEntry& f, FrameSlot& slot, const MaskParams& params,
                           const MaskedHook& on_masked, FrameWriter* writer) {
  const bool want_color = writer ? writer->wants_color() : c.output.preview;
  FrameOutputs files;
  auto emit = [&](const FrameEntry& e) {
    if (on_masked) on_masked(slot, e.id);
    if (!writer) return;
    auto written = writer->write(e, slot, &files.stats);
    files.files.insert(files.files.end(), written.begin(), written.end());
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

size_t frames_in_flight(const Config& c, const MemoryBackend& backend) {
  if (!backend.host_access_during_kernels()) return 1;
  if (c.run.frames_in_flight > 0) return static_cast<size_t>(c.run.frames_in_flight);
  const size_t threads = c.run.threads > 0 ? static_cast<size_t>(c.run.threads) : std::thread::hardware_concurrency();
  return std::clamp<size_t>(threads + 2, 2, 32);
}

std::optional<Failure> RunSummary::failure() const {
  if (interrupted) return Failure::Interrupted;
  std::optional<Failure> worst;
  auto add = [&](Failure f) { worst = worst ? most_severe(*worst, f) : f; };
  for (const FrameFailure& f : failures) add(f.failure);
  if (failed > failures.size()) add(Failure::Input);  // counted without a record: as a frame's failure
  if (!manifest_error.empty()) add(Failure::Resource);
  return worst;
}

int exit_code(const RunSummary& summary) {
  const std::optional<Failure> f = summary.failure();
  return f ? exit_code(*f) : 0;
}

}  // namespace depthmask
