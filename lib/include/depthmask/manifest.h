// Resume: the run manifest <output.dir>/depthmask-manifest.json records every finished frame (its
// output files with sizes and CRC-32s, and a fingerprint of its input files) under a hash of the
// settings that shape the outputs. A re-run skips frames whose record still holds; run.force (--force)
// redoes them.
//
// Why a kill at any moment cannot make a re-run differ from an uninterrupted run:
//  - every output and the manifest itself are written to a temporary name and renamed, so each file
//    on disk is complete, old or new, never torn;
//  - a frame is recorded only after all its outputs are renamed into place, and before the first
//    output is touched the manifest on disk is cut down to the frames this run will skip. So every
//    record on disk describes outputs that are final;
//  - the manifest is rewritten at most about once a second, less often when it is large
//    (manifest_save_interval), and at the end: a frame that finished
//    but was not recorded yet is simply redone by the next run, and the pipeline is deterministic,
//    so it writes the same bytes again;
//  - the temporary files a killed run leaves behind are removed by the next run
//    (remove_stale_temp_files).
// The CRC-32s additionally catch outputs changed or damaged after they were recorded.
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

namespace depthmask {

inline constexpr const char* kManifestName = "depthmask-manifest.json";

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
};

// The manifest's contents (file format version 2), one record per line:
// {"format": "depthmask-manifest", "version": 2, "settings": "<hash>",
//  "depth_hist": {"min": <metres>, "max": <metres>, "bins": <n>},
//  "frames": {"<manifest_key>": {"id": "<id>", "inputs": "<fingerprint>",
//                                "outputs": [{"file", "size", "crc32"}, ...],
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
  static std::string head_text(const std::string& settings, const std::optional<HistogramSpec>& hist);
  static std::string line_text(const std::string& key, const ManifestRecord& rec);
  static std::string failure_line_text(const std::string& key, const ManifestFailure& failure);
  static const char* middle_text();
  static const char* tail_text();
};

// Reads a manifest record by record, for readers of large manifests (a million frames): each record
// is handed to `on_frame` / `on_failure` as soon as it is parsed and not kept, so memory holds what
// the callbacks keep, never the whole document. Either callback may be empty. Returns the head.
// Throws InputError naming `name` (the file) and what is wrong, as Manifest::parse.
ManifestHead read_manifest(std::istream& in, const std::string& name,
                           const std::function<void(const std::string& key, ManifestRecord&&)>& on_frame,
                           const std::function<void(const std::string& key, ManifestFailure&&)>& on_failure = {});

// How long after a manifest save the next may start, given how long that save took: at least a
// second, and ten times the save, so that rewriting a large manifest (a million frames: ~110 MB)
// costs at most about a tenth of the committing thread's time. A frame finished but not yet recorded
// is only redone by a resumed run, identically.
std::chrono::steady_clock::duration manifest_save_interval(std::chrono::steady_clock::duration last_save_took);

// The resume state of one run over output.dir.
class ResumeLog {
 public:
  // Reads the manifest in c.output.dir. Missing: nothing is done yet. Corrupt or unreadable: a warning,
  // and every frame is redone. Other settings: an info line, and every frame is redone. run.force:
  // every frame is redone.
  explicit ResumeLog(const Config& c);

  // Decides, before any output is written, which listed frames are finished: recorded with the same
  // inputs and every recorded output present with its recorded size and CRC-32. Writes the manifest
  // cut down to those frames (so no record on disk names outputs this run may rewrite). Returns one
  // flag per frame. Throws OutputError when the manifest cannot be written.
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

 private:
  void save();
  void maybe_save();

  const Config* c_;
  std::filesystem::path path_;
  Manifest manifest_;  // as read; after plan(), only its head
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
