// ResumeLog (manifest.h): this run's manifest, planned from every manifest of the folder
// (ManifestSet) and rewritten as frames finish.

#include <algorithm>
#include <map>

#include "depthmask/atomic_file.h"
#include "depthmask/detail/log.h"
#include "depthmask/errors.h"
#include "depthmask/manifest.h"
#include "depthmask/manifest_set.h"
#include "manifest_text.h"

namespace fs = std::filesystem;

namespace depthmask {

ResumeLog::ResumeLog(const Config& c, const std::optional<Shard>& shard)
    : c_(&c), path_(c.output.dir / manifest_name(shard)) {
  head_info_.settings = settings_hash(c);
  head_info_.hist = HistogramSpec::of(c);
  head_info_.shard = shard;
  if (c.run.force) detail::log().info("run.force: every frame is redone (the resume manifests are ignored)");
}

namespace {

// Resume's check of a record (ManifestSet's rule, resume's step): this run's inputs fingerprint and
// every recorded output present with its recorded size and CRC-32. The lines of the records that hold
// wait for their manifest's end: a manifest found corrupt there vouches for nothing.
class PlanReader : public ManifestSetReader {
 public:
  PlanReader(const ManifestSet& set, const std::vector<FrameEntry>& frames,
             const std::vector<std::string>& fingerprints, const fs::path& dir)
      : set_(set), frames_(frames), fingerprints_(fingerprints), dir_(dir) {}

  bool on_record(size_t m, size_t slot, ManifestRecord&& r) override {
    if (r.inputs != fingerprints_[slot]) return false;
    for (const OutputFile& o : r.files)
      if (!check_output(dir_, o, true, buf_).ok()) {
        detail::log().debug("frame {}: its recorded outputs ({}) changed or are missing; redoing it", frames_[slot].id,
                            set_.files()[m].path.filename().string());
        return false;
      }
    // A version 1 record keeps its frame done, without stats (the report shows n/a for it). A record
    // found in another run's manifest is copied into this run's: each manifest vouches for its share.
    pending_.emplace(set_.key(slot), Manifest::line_text(set_.key(slot), r));
    return true;
  }
  void on_manifest(size_t m, const ManifestHead&, bool counted) override {
    const fs::path& file = set_.files()[m].path;
    if (!counted)
      detail::log().info("the resume manifest '{}' was written with other settings: its frames are redone",
                         file.string());
    if (!pending_.empty()) used.push_back(file.filename().string());
    if (file != own) from_others += pending_.size();
    lines.merge(pending_);
    pending_.clear();
  }
  void on_error(size_t, const std::string& message) override {
    detail::log().warn(
        "ignoring the resume manifest: {}; the frames it records are redone unless another manifest records them",
        message);
    pending_.clear();
  }

  fs::path own;
  std::map<std::string, std::string> lines;
  std::vector<std::string> used;  // the manifests that vouched for a frame
  size_t from_others = 0;

 private:
  const ManifestSet& set_;
  const std::vector<FrameEntry>& frames_;
  const std::vector<std::string>& fingerprints_;
  fs::path dir_;
  std::vector<uint8_t> buf_;
  std::map<std::string, std::string> pending_;
};

}  // namespace

std::vector<bool> ResumeLog::plan(const std::vector<FrameEntry>& frames) {
  std::vector<bool> done(frames.size(), false);
  lines_.clear();
  failure_lines_.clear();
  std::vector<std::string> fingerprints(frames.size());
  for (size_t i = 0; i < frames.size(); ++i) {
    fingerprints[i] = inputs_fingerprint(frames[i]);
    fingerprints_[manifest_key(frames[i])] = fingerprints[i];
  }
  std::optional<ManifestSet> set;
  if (!c_->run.force) {
    try {
      set.emplace(c_->output.dir, ManifestSetOptions{head_info_.settings, path_, false, nullptr});
    } catch (const InputError& e) {
      detail::log().warn("cannot read the resume manifests: {}; every frame is redone", e.what());
    }
  }
  if (set) {
    // Slot i is frame i; a key listed twice (never, keys are unique per listing) keeps its first.
    for (const FrameEntry& f : frames) set->add_key(manifest_key(f));
    PlanReader reader(*set, frames, fingerprints, c_->output.dir);
    reader.own = path_;
    set->read(reader);
    lines_ = std::move(reader.lines);
    for (size_t i = 0; i < frames.size(); ++i) done[i] = set->done(set->add_key(manifest_key(frames[i])));
    // Not done: a failure this run's manifest recorded stays until this run redoes the frame.
    const bool own_read = !set->files().empty() && set->files().front().path == path_;
    for (const ManifestSet::Failure& f : set->failures())
      if (own_read && f.manifest == 0 && !set->done(f.slot))
        failure_lines_[set->key(f.slot)] = Manifest::failure_line_text(set->key(f.slot), f.failure);
    if (!lines_.empty()) {
      std::string names;
      for (const std::string& n : reader.used) names += (names.empty() ? "" : ", ") + n;
      const size_t others = reader.from_others;
      detail::log().info("resume: {} of {} frame(s) already done by an earlier run ({} in {}{}); --force redoes them",
                         lines_.size(), frames.size(), names, c_->output.dir.string(),
                         others ? ", " + std::to_string(others) + " recorded by another run's manifest" : "");
    }
  }
  head_ = Manifest::head_text(head_info_.settings, head_info_.hist, head_info_.shard);
  save();  // before any output is touched: this run's manifest on disk names only frames it skips
  return done;
}

void ResumeLog::finished(const FrameEntry& f, std::vector<OutputFile> files, const std::optional<FrameStats>& stats) {
  const std::string key = manifest_key(f);
  const auto fp = fingerprints_.find(key);
  lines_[key] = Manifest::line_text(
      key,
      ManifestRecord{f.id, fp != fingerprints_.end() ? fp->second : inputs_fingerprint(f), std::move(files), stats});
  failure_lines_.erase(key);
  dirty_ = true;
  maybe_save();
}

void ResumeLog::failed(const FrameEntry& f, Failure failure, const std::string& message) {
  const std::string key = manifest_key(f);
  failure_lines_[key] = Manifest::failure_line_text(key, ManifestFailure{f.id, failure, message});
  // A frame redone and failed has no outputs this run vouches for.
  lines_.erase(key);
  dirty_ = true;
  maybe_save();
}

void ResumeLog::maybe_save() {
  // At most about once a second: a frame finished but not yet recorded is only redone, identically.
  if (std::chrono::steady_clock::now() - last_save_ >= save_interval_) {
    try {
      save();
    } catch (const OutputError& e) {
      // Disk full, folder gone or read-only: the frames' own outputs already failed or will fail and
      // say so; the manifest on disk stays the last complete one (it is replaced atomically), and
      // saving is tried again a second later and at the end, where a failure is the run's error.
      if (!save_failing_)
        detail::log().warn("the resume manifest could not be updated (tried again later): {}", e.what());
      save_failing_ = true;
      last_save_ = std::chrono::steady_clock::now();
    }
  }
}

void ResumeLog::flush() {
  if (dirty_) save();
}

std::chrono::steady_clock::duration manifest_save_interval(std::chrono::steady_clock::duration last_save_took) {
  return std::max<std::chrono::steady_clock::duration>(std::chrono::seconds(1), 10 * last_save_took);
}

void ResumeLog::save() {
  const auto t0 = std::chrono::steady_clock::now();
  if (head_.empty()) head_ = Manifest::head_text(head_info_.settings, head_info_.hist, head_info_.shard);  // no plan()
  detail::join_manifest(text_, head_, lines_, failure_lines_);
  write_file_atomic(path_, text_.data(), text_.size(), c_->output.fsync, shard_tag(head_info_.shard));
  last_save_ = std::chrono::steady_clock::now();
  save_interval_ = manifest_save_interval(last_save_ - t0);
  dirty_ = false;
  save_failing_ = false;
}

}  // namespace depthmask
