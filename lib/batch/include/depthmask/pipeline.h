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

namespace depthmask {

struct FrameFailure {
  std::string id;
  std::string message;  // names the file and what was expected
  // Its class (classify_frame_failure): input (a bad or missing input file), resource (out of
  // memory, disk full, the output folder gone), platform (a CUDA error that was not sticky), internal.
  Failure failure = Failure::Input;
};

// Where a run's start-up went (issue 16): a one-frame run is mostly start-up. Logged at info level
// at the end of the run.
struct StartupTimes {
  // Process start to the first frame through the commit stage (ok, failed or already done), in ms;
  // 0 when no frame got there. The start is the kernel's (/proc/self/stat starttime against
  // CLOCK_BOOTTIME), so exec, the dynamic loader and static initialisers count; that start is kept in
  // clock ticks (10 ms at USER_HZ 100) and rounded down, so this reads up to one tick long.
  double first_frame_ms = 0;
  double run_first_frame_ms = 0;  // the same from run_batch's call (steady clock)
  double listing_ms = 0;          // resolving the input: the layout, the listing
  // The platform probe this run started (CUDA's driver and context on backend.device); 0 when the run
  // did not initialise CUDA: backend.kind cpu, or a backend opened before run_batch was called.
  double cuda_init_ms = 0;
  // Opening the backend after the run was prepared (run_batch with a BackendOpener): the wait for the
  // part of cuda_init_ms the preparation did not hide, and the backend's own start.
  double backend_open_ms = 0;
};

struct RunSummary {
  size_t total = 0;  // frames listed
  size_t ok = 0;
  size_t failed = 0;
  size_t skipped = 0;       // not attempted: stopped at an error (on_error: stop) or interrupted
  size_t skipped_done = 0;  // not redone: the resume manifest records them finished, outputs intact
  size_t unmatched_files = 0;
  double seconds = 0;
  bool interrupted = false;
  BackendKind backend = BackendKind::Cpu;
  std::string backend_reason;
  bool backend_degraded = false;  // auto fell back to cpu for lack of a GPU (the reason was a warning)
  std::vector<FrameFailure> failures;
  // Why the resume manifest could not be saved at the end (disk full, output folder gone ...): the
  // frames counted ok have their outputs, but a re-run redoes those not recorded. Empty: saved.
  std::string manifest_error;
  std::string shard;     // "K/N" when run.shard made this run one shard (shard.h); empty: every frame
  std::string manifest;  // this run's manifest, a file name in output.dir (manifest_name)
  StartupTimes startup;

  double fps() const { return seconds > 0 ? static_cast<double>(ok) / seconds : 0.0; }
  // How the run failed, empty when it did not: interrupted when the stop flag ended it; otherwise the
  // most severe class (most_severe: internal > platform > resource > input) among its frames'
  // failures and the manifest's (not saved: resource).
  std::optional<Failure> failure() const;
};

// The CLI's exit code of a finished batch: 0 when summary.failure() is empty, else its exit_code()
// (130 interrupted, 70 internal, 3 platform, 4 resource, 1 input). A run refused because its shard
// is busy throws ShardBusyError (shard.h, exit code 5) and returns no summary.
int exit_code(const RunSummary& summary);

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
