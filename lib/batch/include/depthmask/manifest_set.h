// Every manifest of an output folder, read once: the one reader behind resume (ResumeLog::plan),
// `depthmask status` and the QA report, and so the one rule of what the folder says is done.
//
// The rule:
//  - the manifests are list_manifests' (every depthmask-manifest*.json: the unsharded one, the shards',
//    and other names read as unsharded), in its order, ManifestSetOptions::first first when present;
//  - one settings hash counts: ManifestSetOptions::settings when given (the run's), else the first
//    readable manifest's; a manifest of other settings counts for nothing;
//  - a frame is done when a record of it in a counted manifest holds: the reader's check (resume:
//    the inputs fingerprint and every output's size and CRC-32; status: the same, the CRC-32 with
//    --verify; the report: none), and done in one manifest it is done: later records of it are
//    duplicates and not checked;
//  - a manifest that cannot be opened or parsed counts for nothing, not even for the records before
//    its fault (what it marked done is undone);
//  - a frame's failure is the last failure record of it read from a counted manifest, and stands only
//    while no manifest holds the frame done.
//
// Memory: each manifest is streamed (read_manifest), so the set holds one small entry per frame key
// and the failure records, never a manifest's records; what a reader keeps of them is its own. The
// head (format, version, settings) precedes the records in every file depthmask writes, so whether a
// manifest counts is known before its first record; a hand-made file with its head after the records
// is held whole until its end.
#pragma once

#include <atomic>
#include <cstddef>
#include <cstdint>
#include <filesystem>
#include <optional>
#include <string>
#include <unordered_map>
#include <vector>

#include "depthmask/manifest.h"

namespace depthmask {

struct ManifestSetOptions {
  // The settings hash whose manifests count (settings_hash of the run's configuration); none: the
  // first readable manifest's.
  std::optional<std::string> settings;
  // A manifest read before the others when it is in the folder (resume: the run's own).
  std::filesystem::path first;
  // Whether a record of a key not added (add_key) gets a slot of its own (status, the report); false:
  // it is handed to ManifestSetReader::on_unknown only (resume: this run's frames only are held).
  bool keys_from_records = true;
  // Set (SIGINT, a cancel): read() throws InterruptedError between two records.
  const std::atomic<bool>* stop = nullptr;
};

// The caller's side of ManifestSet::read: what it keeps and checks. `m` is the manifest's index in
// ManifestSet::files(), `slot` the frame key's (ManifestSet::key).
class ManifestSetReader {
 public:
  virtual ~ManifestSetReader() = default;
  // A record of a counted manifest whose frame no earlier record holds: whether it holds (the
  // caller's check). True marks the frame done.
  virtual bool on_record(size_t m, size_t slot, ManifestRecord&& record) = 0;
  // A record of a counted manifest whose frame an earlier record holds already.
  virtual void on_duplicate(size_t /*m*/, size_t /*slot*/) {}
  // A record of a manifest of other settings (its key need not have a slot).
  virtual void on_other_settings(size_t /*m*/, const std::string& /*key*/) {}
  // keys_from_records false: a record of a counted manifest whose key was not added.
  virtual void on_unknown(size_t /*m*/, const std::string& /*key*/) {}
  // Any failure record (counted: of a counted manifest; those are kept, failures()).
  virtual void on_failure_record(size_t /*m*/, bool /*counted*/) {}
  // A manifest read to its end: its whole head, and whether it counted.
  virtual void on_manifest(size_t /*m*/, const ManifestHead& /*head*/, bool /*counted*/) {}
  // A manifest that cannot be opened or parsed: the set undid what it marked done; the caller undoes
  // what it kept of it.
  virtual void on_error(size_t /*m*/, const std::string& /*message*/) {}
};

class ManifestSet {
 public:
  // Lists the manifests of `dir` (list_manifests; none when `dir` is missing). Throws InputError when
  // `dir` exists but cannot be listed.
  ManifestSet(const std::filesystem::path& dir, ManifestSetOptions options);

  const std::filesystem::path& dir() const { return dir_; }
  const std::vector<ManifestFileName>& files() const { return files_; }

  // A frame key's slot, before read() (slots count up from 0 in the order keys are added).
  size_t add_key(const std::string& key);
  size_t slots() const { return keys_.size(); }
  // A key's slot when it has one.
  std::optional<size_t> find(const std::string& key) const;
  const std::string& key(size_t slot) const { return *keys_[slot]; }

  // Reads every manifest once, in files() order. Throws InterruptedError on ManifestSetOptions::stop;
  // a manifest that cannot be read is the reader's on_error, never an exception.
  void read(ManifestSetReader& reader);

  // After read(): the settings that counted (none: no manifest was readable), whether a frame is done
  // and by which manifest.
  const std::optional<std::string>& settings() const { return settings_; }
  bool done(size_t slot) const { return done_by_[slot] >= 0; }
  int32_t done_by(size_t slot) const { return done_by_[slot]; }

  struct Failure {
    size_t slot = 0;
    size_t manifest = 0;
    ManifestFailure failure;
  };
  // Every failure record of the counted manifests, in the order read.
  const std::vector<Failure>& failures() const { return failures_; }
  // Whether failures()[i] is its frame's failure: the last read of a frame no manifest holds done.
  bool standing(size_t i) const;

 private:
  struct Pending;
  void read_one(size_t m, ManifestSetReader& reader);
  void record(size_t m, Pending& p, const std::string& key, ManifestRecord&& r, ManifestSetReader& reader);
  void failure(size_t m, Pending& p, const std::string& key, ManifestFailure&& f, ManifestSetReader& reader);
  std::optional<size_t> slot_of(const std::string& key);
  void check_stop() const;

  std::filesystem::path dir_;
  ManifestSetOptions o_;
  std::vector<ManifestFileName> files_;
  std::optional<std::string> settings_;
  // One entry per key; the nodes of an unordered_map do not move, so keys_ points into it.
  std::unordered_map<std::string, uint32_t> slot_;
  std::vector<const std::string*> keys_;
  std::vector<int32_t> done_by_;  // per slot: the manifest that holds it done, -1: none
  std::vector<int32_t> failure_;  // per slot: its last failure record (failures_), -1: none
  std::vector<Failure> failures_;
};

}  // namespace depthmask
