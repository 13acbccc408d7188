// `depthmask status`: how far the run over an output folder is, from its manifests alone (the
// unsharded depthmask-manifest.json and every shard's, manifest.h), optionally against the input's
// frame list. Which frames are done, which failed (with their class and message), which are missing
// and why, per manifest and in total, and whether the dataset is complete (docs/STATUS.md).
//
// Memory: the manifests are read once, record by record (ManifestSet), never as documents; what stays
// is one small entry per frame key, the failure records and the reasons of the frames not done.
#pragma once

#include <atomic>
#include <cstddef>
#include <cstdint>
#include <filesystem>
#include <optional>
#include <string>
#include <vector>

#include "depthmask/dataset.h"
#include "depthmask/errors.h"
#include "depthmask/layouts.h"
#include "depthmask/manifest.h"

namespace depthmask {

struct StatusOptions {
  // Count only records of manifests with this settings hash (settings_hash of the run's effective
  // configuration); the others are "other settings". None: the first readable manifest's settings
  // count (ManifestSet's rule).
  std::optional<std::string> settings;
  // The input's frames as `run` lists them (resolve_input): completeness is judged against them, a
  // record counts only while its inputs fingerprint matches. Null: judged from the manifests alone.
  const std::vector<FrameEntry>* frames = nullptr;
  std::string input;    // what `frames` lists (input.root), for the reader
  bool verify = false;  // also compare every done frame's outputs with their recorded CRC-32s
  // A dataset moved since the run (`--input` over the recorded root): `frames` lie under moved_to,
  // the records' fingerprints name them under moved_from (inputs_fingerprint's rebased form). Empty:
  // not moved.
  std::filesystem::path moved_from, moved_to;
  // The run records the settings and the frames come from (recorded_input), for the reader.
  std::vector<std::string> records;
  // Set (SIGINT, a cancel): compute_status throws InterruptedError between two records.
  const std::atomic<bool>* stop = nullptr;
};

// What one manifest file holds, and how much of it counts.
struct ManifestStatus {
  std::string file;             // the file name in the folder
  std::optional<Shard> shard;   // none: unsharded (or an unrecognised name)
  bool recognised = true;       // the unsharded name or a shard's (list_manifests)
  std::string error;            // not empty: unreadable or corrupt, and nothing of it counts
  int version = 0;              // as read
  std::string settings;         // its settings hash
  bool other_settings = false;  // not the counted settings: none of its records count
  size_t records = 0;           // frame records
  size_t done = 0;              // frames done that no earlier manifest (in list order) counts already
  size_t duplicates = 0;        // records of frames an earlier manifest counts done
  size_t invalid = 0;           // records whose outputs are missing, of another size or (--verify) CRC
  size_t stale = 0;             // records whose frame's inputs changed since (with a frame list)
  size_t not_listed = 0;        // records of frames the input does not list (with a frame list)
  size_t failure_records = 0;
  size_t failed = 0;      // its failure records of frames not done in any manifest
  size_t superseded = 0;  // its failure records of frames done in some manifest
};

// A frame whose last recorded attempt failed and that no manifest records done.
struct StatusFailure {
  std::string key, id;
  Failure failure = Failure::Input;
  std::string message;
  std::string manifest;  // the file that records it (the last one read, when several do)
  size_t order = 0;      // its place in frame order (the listing's index, else its key's rank)
};

// A frame that is neither done nor failed, and why.
struct StatusMissing {
  std::string key;
  std::string reason;  // "not recorded", "output 'x.tiff' is missing (recorded in ...)", ...
  size_t order = 0;    // as StatusFailure::order
};

struct DatasetStatus {
  std::filesystem::path dir;
  bool dir_exists = true;
  std::vector<ManifestStatus> manifests;  // list_manifests' order
  // Shards K/N with no manifest where other shards of N have one: how many, and the first 100.
  size_t missing_shard_count = 0;
  std::vector<Shard> missing_shards;
  std::optional<std::string> settings;     // StatusOptions::settings
  std::vector<std::string> settings_seen;  // the distinct settings of the readable manifests
  // The settings whose records counted (ManifestSet): StatusOptions::settings, else the first readable
  // manifest's; none when no manifest was readable.
  std::optional<std::string> counted_settings;
  bool listed = false;               // judged against a frame list
  std::string input;                 // StatusOptions::input
  std::vector<std::string> records;  // StatusOptions::records
  size_t frames = 0;                 // listed frames (with a frame list)
  // Totals, each frame once: done (in any counted manifest, outputs holding), failed (not done),
  // missing (not done, not failed: listed but not recorded, or recorded with outputs gone/damaged,
  // inputs changed or only other settings; without a frame list only the recorded ones).
  size_t done = 0;
  size_t not_listed = 0;                // frames recorded (with the settings) that the input does not list
  std::vector<StatusFailure> failures;  // in frame order (the listing's, else the keys')
  std::vector<StatusMissing> missing;   // in frame order

  // Complete: every manifest readable, no failure, nothing missing, and with a frame list every
  // listed frame done; without one at least one frame done, one settings hash (or StatusOptions::
  // settings given) and no shard manifest missing.
  bool complete() const;
  // 0 complete, 1 otherwise (the CLI's exit code).
  int exit_code() const { return complete() ? 0 : 1; }
  // What a rerun has to do, in frame order: the missing frames' keys and the failed ones'.
  std::vector<std::string> rerun_keys() const;

  // The report a person reads; lists (failures, missing frames) show at most `limit` entries each
  // (0: all), then "… and N more".
  std::string to_text(size_t limit = 20) const;
  // One JSON document (docs/STATUS.md): {"format": "depthmask-status", "version": 1, ...}; every
  // failure; with `with_lists` also "missing_frames" and "rerun".
  std::string to_json(bool with_lists) const;
};

// What `depthmask status OUT` (no --config, no --set) checks the folder against: its run records'
// (run_record.h: written when a run starts and when it ends) settings hash and configuration, the
// input listed as that configuration lists it, from `input_root` instead of the recorded root when
// given (a moved dataset).
struct RecordedInput {
  std::vector<std::string> records;     // the record files it comes from
  std::string settings;                 // the settings hash they agree on
  std::filesystem::path recorded_root;  // the input.root they name
  ResolvedInput input;                  // the recorded configuration, resolved (listing included)
};
// None when the folder has no run record that names settings and a configuration (none at all, or
// version 1 records only). Throws ConfigError naming the files when two records name different
// settings; InputError when the input cannot be listed; ConfigError when the recorded configuration
// does not load.
std::optional<RecordedInput> recorded_input(const std::filesystem::path& dir,
                                            const std::optional<std::filesystem::path>& input_root = std::nullopt);

// Reads every manifest in `dir` (list_manifests) and works out the status. A corrupt or unreadable
// manifest is a ManifestStatus::error, not an exception; throws InputError only when `dir` exists and
// is not a readable folder (and InterruptedError on StatusOptions::stop). A missing `dir` is a status
// with nothing done (dir_exists false).
DatasetStatus compute_status(const std::filesystem::path& dir, const StatusOptions& options = {});

}  // namespace depthmask
