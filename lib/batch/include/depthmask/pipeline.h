// The batch run: list frames, load each into backend buffers, mask, write outputs; record failures
// and keep going (or stop, per run.on_error); report progress to an observer.
#pragma once

#include <atomic>
#include <cstddef>
#include <functional>
#include <optional>
#include <string>
#include <vector>

#include "depthmask/backend.h"
#include "depthmask/config.h"
#include "depthmask/dataset.h"
#include "depthmask/errors.h"
#include "depthmask/frame_writer.h"
#include "depthmask/kernels/mask_rule.h"
#include "depthmask/open_backend.h"
#include "depthmask/platform.h"
#include "depthmask/run_summary.h"

namespace depthmask {

// What the caller (the CLI) sees as the run goes: called in listing order, one call at a time, from
// the batch's commit stage (which may run on any of the pipeline's threads).
class RunObserver {
 public:
  virtual ~RunObserver() = default;
  virtual void on_start(const DatasetListing& /*listing*/) {}
  virtual void on_frame(const FrameEntry& /*frame*/, size_t /*done*/, size_t /*total*/,
                        const FrameFailure* /*failure*/) {}
};

// Called after each masking pass of a frame with the output's id (`{id}`, or `{id}_{instance}`).
using MaskedHook = std::function<void(const FrameSlot& slot, const std::string& output_id)>;

// What process_frame wrote: its files (relative to output.dir) and what they kept, summed over the
// frame's outputs (one per instance with mask.per_instance); stats are zero without a writer.
struct FrameOutputs {
  std::vector<OutputFile> files;
  FrameStats stats;
};

// One frame: load, mask, write. The mask is the frame's mask file, or the union of its instance masks
// (FrameEntry::instances), or, with mask.per_instance, each instance mask in turn over the depth
// decoded once, written as `{id}_{instance}`. Throws what loading, masking and writing throw; an
// instance that fails fails the frame.
FrameOutputs process_frame(const Config& config, const FrameEntry& frame, FrameSlot& slot, const MaskParams& params,
                           const MaskedHook& on_masked = {}, FrameWriter* writer = nullptr);

// How many frames run_batch keeps in flight: run.frames_in_flight, or hardware threads + 2 (at most
// 32); 1 when the backend's memory must not be touched by the CPU while kernels run.
size_t frames_in_flight(const Config& config, const MemoryBackend& backend);

// Runs the batch (a BatchRun, batch_run.cpp: prepare → the frames → finish) as an overlapped
// pipeline (oneTBB parallel_pipeline): list → decode straight into backend buffers (in parallel) →
// mask on each slot's stream (in parallel) → encode + write (in parallel) → commit in listing order
// (manifest, progress). frames_in_flight() slots bound memory; buffers are reused, so a run of
// same-sized frames allocates nothing in steady state.
// `stop` (optional) is polled before each frame is admitted (set it from a signal handler): frames
// in flight finish and are recorded, frames not yet started count as skipped and the summary says
// interrupted. A frame's failure is classified as the live runner's is (classify_frame_failure):
// it fails the frame with its class (out of memory also gives back what its slot grew), and a sticky
// device error stops the batch (PlatformError). Throws InputError when no frame can be listed and
// OutputError when the output folder cannot be written at all (at the start); an output that fails
// later fails its frame, a manifest that cannot be saved at the end sets manifest_error.
// Process-wide while it runs (docs/ARCHITECTURE.md, "Process-wide state"): with run.threads set, the
// frames run in a task_arena of run.threads slots, and when run.threads is above oneTBB's active
// max_allowed_parallelism (by default the machine's hardware threads) a tbb::global_control raises
// that limit to run.threads until run_batch returns, so the process's other oneTBB work may use that
// many workers meanwhile. It never lowers the limit and cannot lift a lower one the host holds (oneTBB
// applies the smallest of the global_controls alive); without run.threads it changes nothing.
RunSummary run_batch(const Config& config, MemoryBackend& backend, const BackendChoice& choice,
                     RunObserver* observer = nullptr, const std::atomic<bool>* stop = nullptr);

// The same with the backend opened by the run: `opener` (made as early as possible, so CUDA's
// start-up has begun) is opened once the input is listed and the resume manifest read, before the
// output folder is touched (a backend that cannot start leaves it as it was); the backend lives until
// run_batch returns. summary.startup says how much of CUDA's start-up the preparation hid.
RunSummary run_batch(const Config& config, BackendOpener& opener, RunObserver* observer = nullptr,
                     const std::atomic<bool>* stop = nullptr);

}  // namespace depthmask
