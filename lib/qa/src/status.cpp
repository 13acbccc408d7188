// The status of an output folder (status.h): every manifest read twice from one open file, record
// by record (read_manifest): the first pass validates it, so a corrupt one counts for nothing rather
// than for the records before its fault; the second counts its records into one small entry per frame.

#include "depthmask/status.h"

#include <nlohmann/json.hpp>

#include <algorithm>
#include <cstdlib>
#include <fstream>
#include <map>
#include <set>
#include <sstream>
#include <system_error>
#include <unordered_map>

#include "depthmask/errors.h"

namespace fs = std::filesystem;

namespace depthmask {

namespace {

// What is known of one frame key while the manifests are read.
struct FrameState {
  int64_t listed = -1;  // index in the listing; -1: not listed (or no listing)
  uint64_t fingerprint = 0;
  bool fingerprint_known = false;
  bool recorded = false;        // a frame record of it counts (settings and listing aside)
  bool done = false;            // a record of it holds
  bool other_settings = false;  // recorded by a manifest of other settings
  int32_t failure = -1;         // index in failure records: the last one read
  int32_t problem = -1;         // index in problems: the first reason a record of it does not hold
};

struct FailureRecord {
  const std::string* key;  // the map's
  FrameState* state;
  ManifestFailure failure;
  size_t manifest;
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

}  // namespace

DatasetStatus compute_status(const fs::path& dir, const StatusOptions& o) {
  DatasetStatus s;
  s.dir = dir;
  s.settings = o.settings;
  s.listed = o.frames != nullptr;
  s.input = o.input;
  std::error_code ec;
  s.dir_exists = fs::exists(dir, ec);
  const std::vector<ManifestFileName> files = list_manifests(dir);

  // One entry per key: unordered_map nodes do not move, so pointers to them stay valid.
  std::unordered_map<std::string, FrameState> frames;
  if (o.frames) {
    s.frames = o.frames->size();
    frames.reserve(o.frames->size());
    for (size_t i = 0; i < o.frames->size(); ++i) frames[manifest_key((*o.frames)[i])].listed = static_cast<int64_t>(i);
  }
  std::vector<std::string> problems;
  std::vector<FailureRecord> failure_records;
  std::set<std::string> settings_seen;
  std::vector<uint8_t> buf;
  auto note = [&](FrameState& st, std::string why) {
    if (st.problem < 0) {
      st.problem = static_cast<int32_t>(problems.size());
      problems.push_back(std::move(why));
    }
  };

  auto check_stop = [&] {
    if (o.stop && o.stop->load(std::memory_order_relaxed)) throw InterruptedError("status: interrupted");
  };
  const auto stop_frame = [&](const std::string&, ManifestRecord&&) { check_stop(); };
  const auto stop_failure = [&](const std::string&, ManifestFailure&&) { check_stop(); };

  for (size_t mi = 0; mi < files.size(); ++mi) {
    const ManifestFileName& f = files[mi];
    s.manifests.emplace_back();
    ManifestStatus& ms = s.manifests.back();
    ms.file = f.path.filename().string();
    ms.shard = f.shard;
    ms.recognised = f.recognised;
    std::ifstream in(f.path, std::ios::binary);
    if (!in) {
      ms.error = "'" + f.path.string() + "' cannot be opened for reading";
      continue;
    }
    ManifestHead head;
    try {
      head = read_manifest(in, f.path.string(), stop_frame, stop_failure);
    } catch (const InterruptedError&) {
      throw;
    } catch (const std::exception& e) {
      ms.error = e.what();
      continue;
    }
    ms.version = head.version;
    ms.settings = head.settings;
    settings_seen.insert(head.settings);
    ms.other_settings = o.settings && *o.settings != head.settings;
    in.clear();
    in.seekg(0);

    auto on_frame = [&](const std::string& key, ManifestRecord&& rec) {
      check_stop();
      ++ms.records;
      if (ms.other_settings) {
        const auto it = frames.find(key);
        if (it != frames.end()) it->second.other_settings = true;
        return;
      }
      const auto [it, inserted] = frames.try_emplace(key);
      FrameState& st = it->second;
      if (o.frames && st.listed < 0) {
        ++ms.not_listed;
        st.recorded = true;
        return;
      }
      st.recorded = true;
      if (st.done) {
        ++ms.duplicates;
        return;
      }
      if (o.frames) {
        if (!st.fingerprint_known) {
          st.fingerprint =
              fingerprint_value(inputs_fingerprint((*o.frames)[static_cast<size_t>(st.listed)])).value_or(0);
          st.fingerprint_known = true;
        }
        if (fingerprint_value(rec.inputs) != st.fingerprint) {
          ++ms.stale;
          note(st, "its inputs changed since " + ms.file + " recorded it");
          return;
        }
      }
      for (const OutputFile& file : rec.files) {
        const OutputCheck c = check_output(dir, file, o.verify, buf);
        if (!c.ok()) {
          ++ms.invalid;
          note(st, describe(c, file) + " (recorded in " + ms.file + ")");
          return;
        }
      }
      st.done = true;
      ++ms.done;
    };
    auto on_failure = [&](const std::string& key, ManifestFailure&& failure) {
      check_stop();
      ++ms.failure_records;
      if (ms.other_settings) return;
      const auto [it, inserted] = frames.try_emplace(key);
      if (o.frames && it->second.listed < 0) return;  // not the input's frame
      it->second.failure = static_cast<int32_t>(failure_records.size());
      failure_records.push_back({&it->first, &it->second, std::move(failure), mi});
    };
    try {
      read_manifest(in, f.path.string(), on_frame, on_failure);
    } catch (const InterruptedError&) {
      throw;
    } catch (const std::exception& e) {
      // The first pass read the same open file whole: only a rewrite in place (which depthmask
      // never does) gets here; what this pass counted stays counted.
      ms.error = e.what();
    }
  }
  s.settings_seen.assign(settings_seen.begin(), settings_seen.end());

  // Shards of N that have no manifest, where others of N have one.
  std::map<size_t, std::set<size_t>> shards;
  for (const ManifestStatus& m : s.manifests)
    if (m.shard) shards[m.shard->count].insert(m.shard->index);
  for (const auto& [count, present] : shards) {
    s.missing_shard_count += count - present.size();
    for (size_t k = 0; k < count && s.missing_shards.size() < 100; ++k)
      if (!present.count(k)) s.missing_shards.push_back({k, count});
  }

  // Failures: each record counts in its manifest; a frame's last one read is its failure.
  std::vector<const FailureRecord*> standing;
  for (size_t i = 0; i < failure_records.size(); ++i) {
    const FailureRecord& r = failure_records[i];
    ManifestStatus& ms = s.manifests[r.manifest];
    if (r.state->done) {
      ++ms.superseded;
      continue;
    }
    ++ms.failed;
    if (r.state->failure == static_cast<int32_t>(i)) standing.push_back(&r);
  }

  // Frame order: the listing's, else the keys' (byte order).
  auto reason_of = [&](const FrameState& st) -> std::string {
    if (st.problem >= 0) return problems[static_cast<size_t>(st.problem)];
    return st.other_settings ? "recorded only by manifests of other settings" : "not recorded";
  };
  if (o.frames) {
    for (size_t i = 0; i < o.frames->size(); ++i) {
      const std::string key = manifest_key((*o.frames)[i]);
      const FrameState& st = frames.at(key);
      if (st.done)
        ++s.done;
      else if (st.failure < 0)
        s.missing.push_back({key, reason_of(st), i});
    }
    for (const auto& [key, st] : frames) s.not_listed += st.listed < 0 && st.recorded ? 1 : 0;
    for (const FailureRecord* r : standing) {
      const ManifestFailure& f = r->failure;
      s.failures.push_back(
          {*r->key, f.id, f.failure, f.message, s.manifests[r->manifest].file, static_cast<size_t>(r->state->listed)});
    }
  } else {
    std::vector<const std::pair<const std::string, FrameState>*> keyed;
    keyed.reserve(frames.size());
    for (const auto& kv : frames) {
      if (kv.second.done) ++s.done;
      if (!kv.second.done && (kv.second.failure >= 0 || kv.second.problem >= 0)) keyed.push_back(&kv);
    }
    std::sort(keyed.begin(), keyed.end(), [](const auto* a, const auto* b) { return a->first < b->first; });
    std::unordered_map<const FrameState*, size_t> rank;
    for (size_t i = 0; i < keyed.size(); ++i) {
      const auto& [key, st] = *keyed[i];
      if (st.failure < 0) s.missing.push_back({key, reason_of(st), i});
      rank[&st] = i;
    }
    for (const FailureRecord* r : standing) {
      const ManifestFailure& f = r->failure;
      s.failures.push_back({*r->key, f.id, f.failure, f.message, s.manifests[r->manifest].file, rank.at(r->state)});
    }
  }
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
    t << "  the folder holds manifests of " << settings_seen.size()
      << " different settings: all are counted, which cannot tell which outputs are current; give --config "
         "(or --input) to count only the run's\n";

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
