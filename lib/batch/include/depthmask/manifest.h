// Resume: the run manifest <output.dir>/depthmask-manifest.json (a shard's:
// depthmask-manifest.shard-K-of-N.json, manifest_name) records every finished frame (its output files
// with sizes and CRC-32s, and a fingerprint of its input files) under a hash of the settings that
// shape the outputs. A re-run skips frames that a record of any manifest in the folder still vouches
// for; run.force (--force) redoes them.
//
// Why a kill at any moment cannot make a re-run differ from an uninterrupted run:
//  - every output and the manifest itself are written to a temporary name and renamed, so each file
//    on disk is complete, old or new, never torn;
//  - a frame is recorded only after all its outputs are renamed into place, and before the first
//    output is touched the run's own manifest on disk is cut down to the frames this run will skip. So
//    every record on disk describes outputs that are final;
//  - the manifest is rewritten at most about once a second, less often when it is large
//    (manifest_save_interval), and at the end: a frame that finished
//    but was not recorded yet is simply redone by the next run, and the pipeline is deterministic,
//    so it writes the same bytes again;
//  - the temporary files a killed run leaves behind are removed by the next run on the same host
//    (remove_stale_temp_files).
// The CRC-32s additionally catch outputs changed or damaged after they were recorded.
//
// Several runs in one folder (shards, shard.h; or a sharded and an unsharded run): each writes only
// its own manifest and reads all of them, so no run drops another's records. Another run may rewrite
// an output that a manifest records while it redoes a frame, but with the same settings it writes the
// same bytes (atomically), so the record still holds; with other settings the CRC-32 tells.
//
// Version 2 adds what a reader of a finished run needs without opening an image (the QA report,
// report.h; `depthmask status`): each frame's kept-pixel count, pixel count and kept-depth histogram
// (frame_stats.h, its bins stored once in the head), and the frames that failed, as records of their
// own. Version 1 manifests are still read (their frames have no stats) and resume as before.
#pragma once

#include <chrono>
#include <cstdint>
#include <filesystem>
#include <functional>
#include <iosfwd>
#include <map>
#include <optional>
#include <string>
#include <vector>

#include "depthmask/config.h"
#include "depthmask/dataset.h"
#include "depthmask/encoders.h"
#include "depthmask/errors.h"
#include "depthmask/frame_stats.h"
#include "depthmask/run_files.h"
#include "depthmask/shard.h"

namespace depthmask {

// One manifest file of an output folder, as list_manifests finds it.
struct ManifestFileName {
  std::filesystem::path path;
  std::optional<Shard> shard;  // none: the unsharded depthmask-manifest.json, or another name
  bool recognised = true;      // false: a depthmask-manifest*.json of neither form (a copy ...)
};

// Every regular file named depthmask-manifest*.json in `dir` (not recursive): the unsharded one
// first, then the shards by count and index, then other names in byte order. Empty when `dir` is
// missing. Throws InputError when `dir` exists but cannot be listed or is not a folder.
std::vector<ManifestFileName> list_manifests(const std::filesystem::path& dir);

// The manifest of a run: kManifestName without a shard, "depthmask-manifest.shard-K-of-N.json" for
// shard K of N (`depthmask status` reads K and N from the name).
std::string manifest_name(const std::optional<Shard>& shard);
// Whether `file_name` is a manifest's, any shard's or none (depthmask-manifest*.json): the files
// ResumeLog::plan reads.
bool is_manifest_name(const std::string& file_name);
// The shard a manifest's name names: nullopt for kManifestName (and for a name that is no
// manifest_name(); is_manifest_name tells those apart).
std::optional<Shard> manifest_shard(const std::string& file_name);

// 64-bit FNV-1a, as 16 hex digits.
std::string fnv1a64_hex(const std::string& text);

// A hash of everything in the configuration that can change an output byte (depth, mask,
// registration and output settings, the input patterns, root and intrinsics values, the depthmask
// version); not the output folder, backend, run, fsync or logging settings. Backends give identical
// outputs (CPU/GPU parity), so switching backends keeps finished frames.
std::string settings_hash(const Config& c);

// A fingerprint of frame f's inputs: its files' paths, sizes and modification times, and its own
// intrinsics, depth scale and relative path. A re-captured depth or re-computed mask redoes the frame.
std::string inputs_fingerprint(const FrameEntry& f);
// The same of a dataset moved since: f's files lie under `now`; the paths hashed are theirs under
// `then` (the root the run read them from), the sizes and times are the files' own.
std::string inputs_fingerprint(const FrameEntry& f, const std::filesystem::path& now,
                               const std::filesystem::path& then);

// Which record is frame f's: the depth file's path relative to input.root (unique even where ids
// repeat across folders, e.g. 7-Scenes sequences), or the id when that is not known.
std::string manifest_key(const FrameEntry& f);

struct ManifestRecord {
  std::string id;
  std::string inputs;  // inputs_fingerprint
  std::vector<OutputFile> files;
  std::optional<FrameStats> stats;  // version 2; none in a version 1 record
};

// A frame whose last attempt failed: its id, the failure class (to_string(Failure): input, resource,
// platform, internal) and the message the run logged. A later success removes it.
struct ManifestFailure {
  std::string id;
  Failure failure = Failure::Input;
  std::string message;
};

// The head of a manifest: everything but the records.
struct ManifestHead {
  int version = 2;  // as read: 1 or 2; written: always 2
  std::string settings;
  std::optional<HistogramSpec> hist;  // the bins of every frame's "hist"; none in version 1
  std::optional<Shard> shard;         // the shard that wrote it; none: an unsharded run (or older file)
};

// The manifest's contents (file format version 2), one record per line:
// {"format": "depthmask-manifest", "version": 2, "settings": "<hash>",
//  "depth_hist": {"min": <metres>, "max": <metres>, "bins": <n>},
//  "shard": {"index": <K>, "count": <N>},  (a shard's manifest only; optional when read)
//  "frames": {"<manifest_key>": {"id": "<id>", "inputs": "<fingerprint>",
//                                "outputs": [{"file", "size", "crc32"}, ...] (empty: the bag is the only output),
//                                "kept": <pixels kept>, "pixels": <pixels>, "hist": [<n counts>]}, ...},
//  "failures": {"<manifest_key>": {"id": "<id>", "class": "<failure class>", "message": "..."}, ...}}
// Version 1 is the same without depth_hist, failures and the frames' kept, pixels and hist. Keys are
// sorted, so the same records give the same bytes.
struct Manifest {
  ManifestHead head;
  std::map<std::string, ManifestRecord> frames;
  std::map<std::string, ManifestFailure> failures;

  std::string to_json() const;
  // Throws InputError naming `name` and what is wrong.
  static Manifest parse(const std::string& text, const std::string& name);
  // Reads the file at `path` (InputError when it cannot be read or parsed).
  static Manifest read(const std::filesystem::path& path);

  // The pieces of to_json: the head (up to the frames), one frame's line ("<key>":{...}, no
  // separator), the text between the frames and the failures, one failure's line, and the tail.
  // to_json() == head + frame lines joined by ",\n" + middle + failure lines joined by ",\n" + tail.
  static std::string head_text(const std::string& settings, const std::optional<HistogramSpec>& hist,
                               const std::optional<Shard>& shard = std::nullopt);
  static std::string line_text(const std::string& key, const ManifestRecord& rec);
  static std::string failure_line_text(const std::string& key, const ManifestFailure& failure);
  static const char* middle_text();
  static const char* tail_text();
};

// Reads a manifest record by record, for readers of large manifests (a million frames): each record
// is handed to `on_frame` / `on_failure` as soon as it is parsed and not kept, so memory holds what
// the callbacks keep, never the whole document. Either callback may be empty. Returns the head.
// Throws InputError naming `name` (the file) and what is wrong, as Manifest::parse. `on_head`, when
// given, is called once before the first record with the head's format-checked version and settings
// (not its depth_hist or shard) when those precede the records, as depthmask writes them; not at all
// when they follow (a hand-made file): the returned head then is the first word on them.
ManifestHead read_manifest(std::istream& in, const std::string& name,
                           const std::function<void(const std::string& key, ManifestRecord&&)>& on_frame,
                           const std::function<void(const std::string& key, ManifestFailure&&)>& on_failure = {},
                           const std::function<void(const ManifestHead& early)>& on_head = {});

// Whether a recorded output still holds. Ok: a regular file of the recorded size (and, when checked,
// CRC-32); otherwise what differs.
enum class OutputState { Ok, Missing, NotAFile, SizeDiffers, CrcDiffers, Unreadable };
struct OutputCheck {
  OutputState state = OutputState::Ok;
  uint64_t size = 0;  // the file's size when it has one
  bool ok() const { return state == OutputState::Ok; }
};
// Checks `file` (relative to `dir`): a stat, and with `crc` a read of the whole file into `buf`
// (reused between calls). Never throws for what it finds on disk.
OutputCheck check_output(const std::filesystem::path& dir, const OutputFile& file, bool crc, std::vector<uint8_t>& buf);
// One sentence naming the file and what is wrong: "output 'a.tiff' is missing", "... has 10 bytes,
// the manifest records 12", ...; empty for Ok.
std::string describe(const OutputCheck& check, const OutputFile& file);

// How long after a manifest save the next may start, given how long that save took: at least a
// second, and ten times the save, so that rewriting a large manifest (a million frames: ~110 MB)
// costs at most about a tenth of the committing thread's time. A frame finished but not yet recorded
// is only redone by a resumed run, identically.
std::chrono::steady_clock::duration manifest_save_interval(std::chrono::steady_clock::duration last_save_took);

// The resume state of one run (one shard, or the unsharded run) over output.dir.
class ResumeLog {
 public:
  // This run's manifest is manifest_name(shard); nothing is read yet (plan() reads). run.force:
  // every frame is redone.
  explicit ResumeLog(const Config& c, const std::optional<Shard>& shard = std::nullopt);

  // Decides, before any output is written, which listed frames are finished: a record in any manifest
  // of output.dir (is_manifest_name: every shard's and the unsharded run's) with this run's settings
  // hash, the frame's inputs fingerprint, and every recorded output present with its recorded size
  // and CRC-32. Each manifest is streamed (read_manifest): memory holds this run's frames, never the
  // other manifests. One that cannot be read or parsed is a warning naming it, and is ignored; one of
  // other settings is an info line. Writes this run's manifest cut down to its finished frames (so no
  // record on disk names outputs this run may rewrite); other manifests are never written. Returns
  // one flag per frame. Throws OutputError when the manifest cannot be written.
  std::vector<bool> plan(const std::vector<FrameEntry>& frames);

  // Records a frame whose outputs are all written, with what they kept (and drops the frame's failure
  // record, if any); rewrites the manifest when the last write is manifest_save_interval old (a
  // second, or ten times the last save). When that write fails (disk full, folder removed or
  // read-only) it logs a warning and keeps the record for the next try; flush() reports the failure.
  void finished(const FrameEntry& f, std::vector<OutputFile> files, const std::optional<FrameStats>& stats);
  // Records a frame that failed (replacing its earlier failure), saved as finished() saves.
  void failed(const FrameEntry& f, Failure failure, const std::string& message);

  // Writes the manifest now when it changed since the last write. Throws OutputError.
  void flush();

  const std::filesystem::path& path() const { return path_; }

 private:
  void save();
  void maybe_save();

  const Config* c_;
  std::filesystem::path path_;
  ManifestHead head_info_;  // this run's settings, bins and shard
  // The frames to record, each already as its manifest line: a save joins them into text_, whose
  // capacity is kept from save to save. Rebuilding the whole manifest's JSON every second made a
  // new multi-megabyte string each time, on whichever thread committed, and glibc kept a copy's
  // worth in each thread's arena: on 16 threads RSS grew 4 KB per frame (a 40,000-frame soak).
  std::map<std::string, std::string> lines_;
  std::map<std::string, std::string> failure_lines_;  // the same for the failure records
  std::string head_, text_;
  std::map<std::string, std::string> fingerprints_;  // manifest_key -> inputs, from plan()
  bool dirty_ = false;
  bool save_failing_ = false;  // the last save failed (warned once until one succeeds)
  std::chrono::steady_clock::time_point last_save_;
  std::chrono::steady_clock::duration save_interval_ = std::chrono::seconds(1);  // manifest_save_interval
};

}  // namespace depthmask
