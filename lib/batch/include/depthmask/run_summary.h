/// \file
/// What a batch run did: its counts, its failures, the backend it ran on and why, where its start-up
/// went. Returned by run_batch (pipeline.h), Masker::run (masker.h) and depthmask::run of the C ABI.
#pragma once

#include <cstddef>
#include <optional>
#include <string>
#include <vector>

#include "depthmask/backend_kind.h"
#include "depthmask/errors.h"

namespace depthmask {

/// A frame that failed, and why.
struct FrameFailure {
  std::string id;       ///< the frame's id
  std::string message;  ///< names the file and what was expected
  /// Its class (classify_frame_failure): input (a bad or missing input file), resource (out of
  /// memory, disk full, the output folder gone), platform (a CUDA error that was not sticky), internal.
  Failure failure = Failure::Input;
};

/// Where a run's start-up went (issue 16): a one-frame run is mostly start-up. Logged at info level
/// at the end of the run.
struct StartupTimes {
  /// Process start to the first frame through the commit stage (ok, failed or already done), in ms;
  /// 0 when no frame got there. The start is the kernel's (/proc/self/stat starttime against
  /// CLOCK_BOOTTIME), so exec, the dynamic loader and static initialisers count; that start is kept in
  /// clock ticks (10 ms at USER_HZ 100) and rounded down, so this reads up to one tick long.
  double first_frame_ms = 0;
  double run_first_frame_ms = 0;  ///< the same from run_batch's call (steady clock)
  double listing_ms = 0;          ///< resolving the input: the layout, the listing
  /// The platform probe this run started (CUDA's driver and context on backend.device); 0 when the run
  /// did not initialise CUDA: backend.kind cpu, or a backend opened before run_batch was called.
  double cuda_init_ms = 0;
  /// Opening the backend after the run was prepared (run_batch with a BackendOpener): the wait for the
  /// part of cuda_init_ms the preparation did not hide, and the backend's own start.
  double backend_open_ms = 0;
};

/// What a batch run did (Masker::run, `depthmask run`); the C ABI's dm_masker_run gives it as JSON.
struct RunSummary {
  size_t total = 0;                        ///< frames listed
  size_t ok = 0;                           ///< frames masked and written this run
  size_t failed = 0;                       ///< frames that failed (`failures` says why)
  size_t skipped = 0;                      ///< not attempted: stopped at an error (on_error: stop) or interrupted
  size_t skipped_done = 0;                 ///< not redone: the resume manifest records them finished, outputs intact
  size_t unmatched_files = 0;              ///< files in the input's folders that belong to no frame (DatasetListing)
  std::string unmatched_what = "file(s)";  ///< what those are: "file(s)", or a bag's "message(s)"
  double seconds = 0;                      ///< the run's wall time
  bool interrupted = false;                ///< stopped by a signal or a cancel before every frame was done
  BackendKind backend = BackendKind::Cpu;  ///< the backend the frames ran on
  std::string backend_reason;              ///< why that backend (auto's reason)
  bool backend_degraded = false;           ///< auto fell back to cpu for lack of a GPU (the reason was a warning)
  std::vector<FrameFailure> failures;      ///< every failed frame, in listing order
  /// Why the resume manifest could not be saved at the end (disk full, output folder gone ...): the
  /// frames counted ok have their outputs, but a re-run redoes those not recorded. Empty: saved.
  std::string manifest_error;
  std::string shard;     ///< "K/N" when run.shard made this run one shard (shard.h); empty: every frame
  std::string manifest;  ///< this run's manifest, a file name in output.dir (manifest_name)
  StartupTimes startup;  ///< where the start-up went

  /// Frames done per second: ok / seconds (0 when no time passed).
  double fps() const { return seconds > 0 ? static_cast<double>(ok) / seconds : 0.0; }
  /// How the run failed, empty when it did not: interrupted when the stop flag ended it; otherwise the
  /// most severe class (most_severe: internal > platform > resource > input) among its frames'
  /// failures and the manifest's (not saved: resource).
  std::optional<Failure> failure() const;
};

/// The CLI's exit code of a finished batch: 0 when summary.failure() is empty, else its exit_code()
/// (130 interrupted, 70 internal, 3 platform, 4 resource, 1 input). A run refused because its shard
/// is busy throws an Error of class Busy (exit code 5) and returns no summary.
int exit_code(const RunSummary& summary);

}  // namespace depthmask
