#include <ctime>

#include "depthmask/run_record.h"

#include "depthmask/atomic_file.h"
#include "depthmask/detail/summary_json.h"
#include "depthmask/version.h"

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

std::string run_record_json(const Config& c, const RunSummary& s) {
  const std::time_t now = std::time(nullptr);
  std::tm utc{};
  gmtime_r(&now, &utc);
  char date[32];
  std::strftime(date, sizeof date, "%Y-%m-%dT%H:%M:%SZ", &utc);
  nlohmann::ordered_json j;
  j["format"] = "depthmask-run";
  j["version"] = 1;
  j["depthmask"] = DEPTHMASK_VERSION;
  j["date"] = date;
  j["summary"] = detail::summary_json(s);
  j["config"] = to_yaml(c);
  // Failure messages quote file names, which may be any bytes.
  return j.dump(2, ' ', false, nlohmann::json::error_handler_t::replace) + "\n";
}

std::string run_record_name(const std::optional<Shard>& shard) {
  if (!shard) return kRunRecordName;
  return "depthmask-run.shard-" + std::to_string(shard->index) + "-of-" + std::to_string(shard->count) + ".json";
}

void write_run_record(const Config& c, const RunSummary& s) {
  const std::string text = run_record_json(c, s);
  const std::optional<Shard> shard = parse_shard(c.run.shard);
  write_file_atomic(c.output.dir / run_record_name(shard), text.data(), text.size(), c.output.fsync, shard_tag(shard));
}

}  // namespace depthmask
