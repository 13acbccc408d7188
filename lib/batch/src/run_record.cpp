#include "depthmask/run_record.h"
#include "depthmask/detail/read_file.h"

#include <algorithm>
#include <cstdio>
#include <ctime>
#include <fstream>
#include <iterator>
#include <system_error>

#include "depthmask/atomic_file.h"
#include "depthmask/detail/run_record_file.h"
#include "depthmask/detail/summary_json.h"
#include "depthmask/errors.h"
#include "depthmask/manifest.h"
#include "depthmask/version.h"

namespace fs = std::filesystem;

namespace depthmask {

namespace detail {

nlohmann::json summary_json(const RunSummary& s) {
  nlohmann::json failures = nlohmann::json::array();
  for (const FrameFailure& f : s.failures)
    failures.push_back({{"id", f.id}, {"message", f.message}, {"failure", std::string(to_string(f.failure))}});
  const std::optional<Failure> failure = s.failure();
  return {{"total", s.total},
          {"ok", s.ok},
          {"failed", s.failed},
          {"skipped", s.skipped},
          {"skipped_done", s.skipped_done},
          {"unmatched_files", s.unmatched_files},
          {"seconds", s.seconds},
          {"fps", s.fps()},
          {"interrupted", s.interrupted},
          {"backend", std::string(to_string(s.backend))},
          {"backend_reason", s.backend_reason},
          {"failures", failures},
          {"manifest_error", s.manifest_error},
          {"shard", s.shard.empty() ? nlohmann::json() : nlohmann::json(s.shard)},
          {"manifest", s.manifest},
          {"failure", failure ? nlohmann::json(std::string(to_string(*failure))) : nlohmann::json()},
          {"exit_code", exit_code(s)},
          {"startup",
           {{"first_frame_ms", s.startup.first_frame_ms},
            {"run_first_frame_ms", s.startup.run_first_frame_ms},
            {"listing_ms", s.startup.listing_ms},
            {"cuda_init_ms", s.startup.cuda_init_ms},
            {"backend_open_ms", s.startup.backend_open_ms}}}};
}

}  // namespace detail

namespace {

std::string record_json(const Config& c, const RunSummary* s) {
  const std::time_t now = std::time(nullptr);
  std::tm utc{};
  gmtime_r(&now, &utc);
  char date[32];
  std::strftime(date, sizeof date, "%Y-%m-%dT%H:%M:%SZ", &utc);
  nlohmann::ordered_json j;
  j["format"] = "depthmask-run";
  j["version"] = 2;
  j["state"] = s ? "finished" : "running";
  j["depthmask"] = DEPTHMASK_VERSION;
  j["date"] = date;
  j["settings"] = settings_hash(c);
  j["input"] = c.input.root.string();
  j["summary"] = s ? nlohmann::json(detail::summary_json(*s)) : nlohmann::json();
  j["config"] = to_yaml(c);
  // Failure messages quote file names, which may be any bytes.
  return j.dump(2, ' ', false, nlohmann::json::error_handler_t::replace) + "\n";
}

void write_record(const Config& c, const RunSummary* s) {
  const std::string text = record_json(c, s);
  const std::optional<Shard> shard = parse_shard(c.run.shard);
  write_file_atomic(c.output.dir / run_record_name(shard), text.data(), text.size(), c.output.fsync, shard_tag(shard));
}

}  // namespace

std::string run_record_json(const Config& c, const RunSummary& s) { return record_json(c, &s); }
std::string run_record_started_json(const Config& c) { return record_json(c, nullptr); }

std::string run_record_name(const std::optional<Shard>& shard) {
  if (!shard) return kRunRecordName;
  return "depthmask-run.shard-" + std::to_string(shard->index) + "-of-" + std::to_string(shard->count) + ".json";
}

void write_run_record(const Config& c, const RunSummary& s) { write_record(c, &s); }
void write_run_record_started(const Config& c) { write_record(c, nullptr); }

namespace detail {

RunRecord read_run_record(const fs::path& path) {
  const auto bad = [&](const std::string& what) { throw InputError("'" + path.string() + "': " + what); };
  const std::string text = detail::read_file_bounded(path, size_t{16} << 20, "run record");
  nlohmann::json j;
  try {
    j = nlohmann::json::parse(text);
  } catch (const std::exception& e) {
    bad(e.what());
  }
  if (!j.is_object()) bad("not a JSON object");
  if (j.contains("format") && j["format"] != "depthmask-run") bad("not a depthmask run record");
  RunRecord r;
  r.path = path;
  r.version = j.contains("version") && j["version"].is_number_integer() ? j["version"].get<int>() : 1;
  if (r.version != 1 && r.version != 2) bad("unsupported run record version (expected 1 or 2)");
  const auto text_of = [&](const char* key) -> std::optional<std::string> {
    if (j.contains(key) && j[key].is_string()) return j[key].get<std::string>();
    return std::nullopt;
  };
  r.finished = text_of("state").value_or("finished") != "running";
  r.depthmask = text_of("depthmask").value_or("?");
  r.date = text_of("date").value_or("?");
  r.settings = text_of("settings");
  r.input = text_of("input");
  r.config = text_of("config");
  if (j.contains("summary") && j["summary"].is_object())
    r.summary = std::make_shared<const nlohmann::json>(j["summary"]);
  return r;
}

std::vector<fs::path> list_run_records(const fs::path& dir) {
  std::vector<std::pair<std::pair<size_t, size_t>, fs::path>> found;
  std::error_code ec;
  for (auto it = fs::directory_iterator(dir, ec); !ec && it != fs::directory_iterator(); it.increment(ec)) {
    const std::string name = it->path().filename().string();
    if (name == kRunRecordName) {
      found.push_back({{0, 0}, it->path()});
      continue;
    }
    size_t k = 0, n = 0;
    char tail = 0;
    if (std::sscanf(name.c_str(), "depthmask-run.shard-%zu-of-%zu.jso%c", &k, &n, &tail) == 3 && tail == 'n' && k < n &&
        run_record_name(Shard{k, n}) == name)
      found.push_back({{n, k + 1}, it->path()});
  }
  std::sort(found.begin(), found.end());
  std::vector<fs::path> paths;
  paths.reserve(found.size());
  for (auto& [order, p] : found) paths.push_back(std::move(p));
  return paths;
}

RunRecords read_run_records(const fs::path& dir) {
  RunRecords r;
  for (const fs::path& p : list_run_records(dir)) {
    try {
      r.records.push_back(read_run_record(p));
    } catch (const InputError& e) {
      r.unreadable.emplace_back(e.what());
    }
  }
  const RunRecord* first = nullptr;
  std::string differ;
  for (const RunRecord& rec : r.records) {
    if (!rec.settings) continue;
    if (!first) first = &rec;
    if (*rec.settings != *first->settings)
      differ += (differ.empty() ? "" : ", ") + rec.path.filename().string() + " (" + *rec.settings + ")";
  }
  DM_EXPECT(differ.empty(), ConfigError,
            "the run records of '" << dir.string() << "' name different settings: " << first->path.filename().string()
                                   << " (" << *first->settings << ") but " << differ
                                   << "; runs of other settings wrote into one folder (give --config or --set to "
                                      "say which settings count)");
  if (first) r.settings = first->settings;
  return r;
}

}  // namespace detail

}  // namespace depthmask
