// The status of an output folder (status.h): every manifest read once, record by record, through
// ManifestSet (its rule for settings, duplicates, done and failures); status's own step is to check
// each record against the input's listing and the outputs on disk, and to count what it found per
// manifest and per frame.

#include "depthmask/status.h"

#include <nlohmann/json.hpp>

#include <algorithm>
#include <cstdlib>
#include <map>
#include <set>
#include <sstream>
#include <system_error>
#include <unordered_map>
#include <utility>

#include "depthmask/errors.h"
#include "depthmask/manifest_set.h"

namespace fs = std::filesystem;

namespace depthmask {

namespace {

// What status knows of one frame key (ManifestSet's slot) beyond done and failed.
struct FrameState {
  uint64_t fingerprint = 0;
  bool fingerprint_known = false;
  bool recorded = false;        // a frame record of it counts (settings and listing aside)
  bool other_settings = false;  // recorded by a manifest of other settings
  int32_t problem = -1;         // index in problems: the first reason a record of it does not hold
};

// A fingerprint's 16 hex digits as a number; none for anything else (it then matches nothing).
std::optional<uint64_t> fingerprint_value(const std::string& hex) {
  if (hex.size() != 16) return std::nullopt;
  uint64_t v = 0;
  for (const char ch : hex) {
    int d;
    if (ch >= '0' && ch <= '9')
      d = ch - '0';
    else if (ch >= 'a' && ch <= 'f')
      d = ch - 'a' + 10;
    else
      return std::nullopt;
    v = (v << 4) | static_cast<uint64_t>(d);
  }
  return v;
}

// Status's step of the read: each record checked against the listing (inputs fingerprint) and the
// outputs on disk, counted in its manifest's ManifestStatus. What a manifest changed is undone when it
// turns out corrupt (on_error), so it counts for nothing.
class StatusReader : public ManifestSetReader {
 public:
  // After the listing's keys were added (slot i: listed frame i).
  StatusReader(ManifestSet& set, DatasetStatus& s, const StatusOptions& o) : set_(set), s_(s), o_(o) {
    listed_ = o.frames ? set.slots() : 0;
  }

  bool listed(size_t slot) const { return slot < listed_; }
  FrameState& state(size_t slot) {
    if (slot >= states_.size()) states_.resize(slot + 1);
    return states_[slot];
  }
  const std::vector<FrameState>& states() const { return states_; }
  std::string reason(size_t slot) const {
    const FrameState st = slot < states_.size() ? states_[slot] : FrameState{};
    if (st.problem >= 0) return problems_[static_cast<size_t>(st.problem)];
    return st.other_settings ? "recorded only by manifests of other settings" : "not recorded";
  }

  bool on_record(size_t m, size_t slot, ManifestRecord&& rec) override {
    ManifestStatus& ms = manifest(m);
    ++ms.records;
    FrameState& st = touch(slot);
    st.recorded = true;
    if (o_.frames && !listed(slot)) {
      ++ms.not_listed;
      return false;
    }
    if (o_.frames) {
      if (!st.fingerprint_known) {
        const FrameEntry& f = (*o_.frames)[slot];
        st.fingerprint = fingerprint_value(inputs_fingerprint(f, o_.moved_to, o_.moved_from)).value_or(0);
        st.fingerprint_known = true;
      }
      if (fingerprint_value(rec.inputs) != st.fingerprint) {
        ++ms.stale;
        note(st, "its inputs changed since " + ms.file + " recorded it");
        return false;
      }
    }
    for (const OutputFile& file : rec.files) {
      const OutputCheck c = check_output(set_.dir(), file, o_.verify, buf_);
      if (!c.ok()) {
        ++ms.invalid;
        note(st, describe(c, file) + " (recorded in " + ms.file + ")");
        return false;
      }
    }
    ++ms.done;
    return true;
  }
  void on_duplicate(size_t m, size_t slot) override {
    ++manifest(m).records;
    touch(slot).recorded = true;
    ++manifest(m).duplicates;
  }
  void on_other_settings(size_t m, const std::string& key) override {
    ++manifest(m).records;
    if (const auto slot = set_.find(key)) touch(*slot).other_settings = true;
  }
  void on_failure_record(size_t m, bool) override { ++manifest(m).failure_records; }
  void on_manifest(size_t m, const ManifestHead& head, bool counted) override {
    ManifestStatus& ms = manifest(m);
    ms.version = head.version;
    ms.settings = head.settings;
    ms.other_settings = !counted;
    settings_seen.insert(head.settings);
    undo_.clear();
  }
  void on_error(size_t m, const std::string& message) override {
    ManifestStatus& ms = manifest(m);
    ManifestStatus fresh;
    fresh.file = ms.file;
    fresh.shard = ms.shard;
    fresh.recognised = ms.recognised;
    fresh.error = message;
    ms = std::move(fresh);
    for (auto it = undo_.rbegin(); it != undo_.rend(); ++it) states_[it->first] = it->second;
    undo_.clear();
  }

  std::set<std::string> settings_seen;

 private:
  ManifestStatus& manifest(size_t m) { return s_.manifests[m]; }
  // The slot's state, its value before this manifest changed it kept for on_error.
  FrameState& touch(size_t slot) {
    FrameState& st = state(slot);
    undo_.emplace_back(static_cast<uint32_t>(slot), st);
    return st;
  }
  void note(FrameState& st, std::string why) {
    if (st.problem >= 0) return;
    st.problem = static_cast<int32_t>(problems_.size());
    problems_.push_back(std::move(why));
  }

  ManifestSet& set_;
  DatasetStatus& s_;
  const StatusOptions& o_;
  size_t listed_ = 0;
  std::vector<FrameState> states_;
  std::vector<std::string> problems_;
  std::vector<std::pair<uint32_t, FrameState>> undo_;
  std::vector<uint8_t> buf_;
};

// Shards of N that have no manifest, where others of N have one.
void find_missing_shards(DatasetStatus& s) {
  std::map<size_t, std::set<size_t>> shards;
  for (const ManifestStatus& m : s.manifests)
    if (m.shard) shards[m.shard->count].insert(m.shard->index);
  for (const auto& [count, present] : shards) {
    s.missing_shard_count += count - present.size();
    for (size_t k = 0; k < count && s.missing_shards.size() < 100; ++k)
      if (!present.count(k)) s.missing_shards.push_back({k, count});
  }
}

// The failure records: each counts in its manifest (still failed, or done since); a frame's standing
// one is ManifestSet's. Returns the standing ones' indices in set.failures().
std::vector<size_t> count_failures(const ManifestSet& set, const StatusReader& reader, const StatusOptions& o,
                                   DatasetStatus& s) {
  std::vector<size_t> standing;
  for (size_t i = 0; i < set.failures().size(); ++i) {
    const ManifestSet::Failure& f = set.failures()[i];
    if (o.frames && !reader.listed(f.slot)) continue;  // not the input's frame
    ManifestStatus& ms = s.manifests[f.manifest];
    if (set.done(f.slot)) {
      ++ms.superseded;
      continue;
    }
    ++ms.failed;
    if (set.standing(i)) standing.push_back(i);
  }
  return standing;
}

StatusFailure status_failure(const ManifestSet& set, const DatasetStatus& s, size_t i, size_t order) {
  const ManifestSet::Failure& r = set.failures()[i];
  const ManifestFailure& f = r.failure;
  return {set.key(r.slot), f.id, f.failure, f.message, s.manifests[r.manifest].file, order};
}

// The totals in the listing's frame order.
void totals_listed(const ManifestSet& set, const StatusReader& reader, const std::vector<size_t>& standing,
                   const StatusOptions& o, DatasetStatus& s) {
  std::vector<bool> failed(o.frames->size(), false);
  for (const size_t i : standing) failed[set.failures()[i].slot] = true;
  for (size_t i = 0; i < o.frames->size(); ++i) {
    if (set.done(i))
      ++s.done;
    else if (!failed[i])
      s.missing.push_back({set.key(i), reader.reason(i), i});
  }
  for (size_t slot = o.frames->size(); slot < reader.states().size(); ++slot)
    s.not_listed += reader.states()[slot].recorded ? 1 : 0;
  for (const size_t i : standing) s.failures.push_back(status_failure(set, s, i, set.failures()[i].slot));
}

// The totals without a listing: the frames recorded, in their keys' byte order.
void totals_keyed(const ManifestSet& set, const StatusReader& reader, const std::vector<size_t>& standing,
                  DatasetStatus& s) {
  std::vector<bool> failed(set.slots(), false);
  for (const size_t i : standing) failed[set.failures()[i].slot] = true;
  std::vector<size_t> keyed;
  for (size_t slot = 0; slot < set.slots(); ++slot) {
    if (set.done(slot)) ++s.done;
    const bool problem = slot < reader.states().size() && reader.states()[slot].problem >= 0;
    if (!set.done(slot) && (failed[slot] || problem)) keyed.push_back(slot);
  }
  std::sort(keyed.begin(), keyed.end(), [&](size_t a, size_t b) { return set.key(a) < set.key(b); });
  std::unordered_map<size_t, size_t> rank;
  for (size_t i = 0; i < keyed.size(); ++i) {
    if (!failed[keyed[i]]) s.missing.push_back({set.key(keyed[i]), reader.reason(keyed[i]), i});
    rank[keyed[i]] = i;
  }
  for (const size_t i : standing) s.failures.push_back(status_failure(set, s, i, rank.at(set.failures()[i].slot)));
}

}  // namespace

DatasetStatus compute_status(const fs::path& dir, const StatusOptions& o) {
  DatasetStatus s;
  s.dir = dir;
  s.settings = o.settings;
  s.listed = o.frames != nullptr;
  s.input = o.input;
  s.records = o.records;
  std::error_code ec;
  s.dir_exists = fs::exists(dir, ec);

  ManifestSet set(dir, ManifestSetOptions{o.settings, {}, true, o.stop});
  for (const ManifestFileName& f : set.files()) {
    s.manifests.emplace_back();
    s.manifests.back().file = f.path.filename().string();
    s.manifests.back().shard = f.shard;
    s.manifests.back().recognised = f.recognised;
  }
  if (o.frames) {
    // Slot i is listed frame i.
    s.frames = o.frames->size();
    for (const FrameEntry& f : *o.frames) set.add_key(manifest_key(f));
  }
  StatusReader reader(set, s, o);
  try {
    set.read(reader);
  } catch (const InterruptedError&) {
    throw InterruptedError("status: interrupted");
  }
  s.settings_seen.assign(reader.settings_seen.begin(), reader.settings_seen.end());
  s.counted_settings = set.settings();
  find_missing_shards(s);
  const std::vector<size_t> standing = count_failures(set, reader, o, s);
  if (o.frames)
    totals_listed(set, reader, standing, o, s);
  else
    totals_keyed(set, reader, standing, s);
  std::sort(s.failures.begin(), s.failures.end(),
            [](const StatusFailure& a, const StatusFailure& b) { return a.order < b.order; });
  return s;
}

bool DatasetStatus::complete() const {
  for (const ManifestStatus& m : manifests)
    if (!m.error.empty()) return false;
  if (!failures.empty() || !missing.empty()) return false;
  if (listed) return frames > 0 && done == frames;
  return done > 0 && (settings || settings_seen.size() <= 1) && missing_shard_count == 0;
}

std::vector<std::string> DatasetStatus::rerun_keys() const {
  std::vector<std::string> keys;
  keys.reserve(missing.size() + failures.size());
  size_t a = 0, b = 0;
  while (a < missing.size() || b < failures.size()) {
    if (b == failures.size() || (a < missing.size() && missing[a].order < failures[b].order))
      keys.push_back(missing[a++].key);
    else
      keys.push_back(failures[b++].key);
  }
  return keys;
}

namespace {

std::string shard_text(const ManifestStatus& m) {
  if (m.shard) return "shard " + std::to_string(m.shard->index) + " of " + std::to_string(m.shard->count);
  return m.recognised ? "unsharded" : "not a shard's name: read as unsharded";
}

// "3 done, 1 failed": the parts whose count is not 0, joined; `none` when all are.
std::string counts(const std::vector<std::pair<size_t, std::string>>& parts, const std::string& none = "") {
  std::string out;
  for (const auto& [n, what] : parts)
    if (n > 0) out += (out.empty() ? "" : ", ") + std::to_string(n) + " " + what;
  return out.empty() ? none : out;
}

}  // namespace

std::string DatasetStatus::to_text(size_t limit) const {
  std::ostringstream t;
  t << "depthmask status: " << dir.string() << "\n";
  if (!dir_exists) t << "  the folder does not exist: nothing is done\n";
  if (listed)
    t << "  input: " << (input.empty() ? "" : input + ", ") << frames << " frame(s) listed";
  else
    t << "  input: not listed (completeness against the input cannot be judged without --config or --input)";
  if (settings) t << "; counting records of settings " << *settings << " only";
  t << "\n";
  if (!records.empty()) {
    t << "  from the run records:";
    for (const std::string& r : records) t << " " << r;
    t << "\n";
  }
  if (manifests.empty()) t << "  manifests: none (no depthmask-manifest*.json in the folder)\n";
  const bool mixed = settings_seen.size() > 1;
  for (const ManifestStatus& m : manifests) {
    t << "  " << m.file << " (" << shard_text(m) << "): ";
    if (!m.error.empty()) {
      t << "UNREADABLE, nothing of it counts: " << m.error << "\n";
      continue;
    }
    if (m.version != 2) t << "version " << m.version << ", ";
    if (m.other_settings) {
      t << "other settings (" << m.settings << "), not counted: " << m.records << " record(s), " << m.failure_records
        << " failure record(s)\n";
      continue;
    }
    if (mixed) t << "settings " << m.settings << ", ";
    t << m.records << " record(s)";
    const std::string parts = counts({{m.done, "done"},
                                      {m.duplicates, "done in an earlier manifest"},
                                      {m.invalid, "with outputs missing or damaged"},
                                      {m.stale, "with inputs changed since"},
                                      {m.not_listed, "not in the input"}});
    if (!parts.empty()) t << ": " << parts;
    if (m.failure_records > 0)
      t << "; " << m.failure_records << " failure record(s)"
        << (m.failed + m.superseded > 0 ? ": " + counts({{m.failed, "still failed"}, {m.superseded, "done since"}})
                                        : std::string(": of frames not in the input"));
    t << "\n";
  }
  if (missing_shard_count > 0) {
    t << "  no manifest for " << missing_shard_count << " shard(s):";
    for (const Shard& k : missing_shards) t << " " << k.index << "/" << k.count;
    if (missing_shard_count > missing_shards.size()) t << " …";
    t << "\n";
  }
  if (mixed && !settings)
    t << "  the folder holds manifests of " << settings_seen.size() << " different settings: only those of the first "
      << "readable manifest (" << counted_settings.value_or("") << ") are counted, which cannot tell which outputs "
      << "are current; give --config (or --input) to count only the run's\n";

  const size_t errors = static_cast<size_t>(
      std::count_if(manifests.begin(), manifests.end(), [](const ManifestStatus& m) { return !m.error.empty(); }));
  t << "total: ";
  if (listed)
    t << frames << " frame(s) listed: ";
  else
    t << done + failures.size() + missing.size() << " frame(s) recorded: ";
  t << done << " done, " << failures.size() << " failed, " << missing.size() << " missing";
  if (not_listed > 0) t << " (and " << not_listed << " recorded frame(s) the input does not list)";
  t << "\n";

  auto list = [&](const char* title, size_t n, auto&& line) {
    if (n == 0) return;
    t << title << " (" << n << "):\n";
    const size_t shown = limit == 0 ? n : std::min(n, limit);
    for (size_t i = 0; i < shown; ++i) t << "  " << line(i) << "\n";
    if (shown < n) t << "  … and " << n - shown << " more (--all lists every one)\n";
  };
  list("failed", failures.size(), [&](size_t i) {
    const StatusFailure& f = failures[i];
    return f.key + " [" + std::string(to_string(f.failure)) + "]: " + f.message + " (" + f.manifest + ")";
  });
  list("missing", missing.size(), [&](size_t i) { return missing[i].key + ": " + missing[i].reason; });

  if (complete()) {
    t << "status: complete";
    if (!listed) t << " as far as the manifests tell (give --config or --input to check against the input's frames)";
    t << "\n";
  } else {
    std::string why = counts({{failures.size(), "failed"},
                              {missing.size(), "missing"},
                              {errors, "unreadable manifest(s)"},
                              {missing_shard_count && !listed ? missing_shard_count : 0, "shard manifest(s) missing"}});
    if (why.empty() && !listed && mixed && !settings) why = "manifests of different settings";
    if (why.empty()) why = "nothing done";
    t << "status: incomplete (" << why << ")";
    if (failures.size() + missing.size() > 0) t << "; --missing lists the frames to rerun";
    t << "\n";
  }
  return t.str();
}

std::string DatasetStatus::to_json(bool with_lists) const {
  using Json = nlohmann::ordered_json;
  Json j;
  j["format"] = "depthmask-status";
  j["version"] = 1;
  j["dir"] = dir.string();
  j["dir_exists"] = dir_exists;
  j["complete"] = complete();
  j["exit_code"] = exit_code();
  j["judged_against_input"] = listed;
  j["input"] = listed ? Json(input) : Json(nullptr);
  j["settings"] = settings ? Json(*settings) : Json(nullptr);
  j["settings_seen"] = settings_seen;
  j["run_records"] = records;
  j["settings_counted"] = counted_settings ? Json(*counted_settings) : Json(nullptr);
  j["manifests"] = Json::array();
  for (const ManifestStatus& m : manifests) {
    Json e;
    e["file"] = m.file;
    e["shard"] = m.shard ? Json{{"index", m.shard->index}, {"count", m.shard->count}} : Json(nullptr);
    e["recognised"] = m.recognised;
    e["error"] = m.error.empty() ? Json(nullptr) : Json(m.error);
    e["version"] = m.error.empty() ? Json(m.version) : Json(nullptr);
    e["settings"] = m.error.empty() ? Json(m.settings) : Json(nullptr);
    e["counted"] = m.error.empty() && !m.other_settings;
    e["records"] = m.records;
    e["done"] = m.done;
    e["duplicates"] = m.duplicates;
    e["invalid"] = m.invalid;
    e["stale"] = m.stale;
    e["not_listed"] = m.not_listed;
    e["failure_records"] = m.failure_records;
    e["failed"] = m.failed;
    e["superseded"] = m.superseded;
    j["manifests"].push_back(std::move(e));
  }
  j["missing_shard_count"] = missing_shard_count;
  j["missing_shards"] = Json::array();
  for (const Shard& k : missing_shards) j["missing_shards"].push_back({{"index", k.index}, {"count", k.count}});
  j["totals"] = {{"frames", listed ? Json(frames) : Json(nullptr)},
                 {"done", done},
                 {"failed", failures.size()},
                 {"missing", missing.size()},
                 {"rerun", failures.size() + missing.size()},
                 {"not_listed", not_listed}};
  j["failures"] = Json::array();
  for (const StatusFailure& f : failures)
    j["failures"].push_back({{"key", f.key},
                             {"id", f.id},
                             {"class", std::string(to_string(f.failure))},
                             {"message", f.message},
                             {"manifest", f.manifest}});
  if (with_lists) {
    j["missing_frames"] = Json::array();
    for (const StatusMissing& m : missing) j["missing_frames"].push_back({{"key", m.key}, {"reason", m.reason}});
    j["rerun"] = rerun_keys();
  }
  // Keys and messages may hold any bytes: replace what is not UTF-8 rather than throw.
  return j.dump(2, ' ', false, Json::error_handler_t::replace) + "\n";
}

}  // namespace depthmask
