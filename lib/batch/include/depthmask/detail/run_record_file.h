// The run record read back (run_record.h writes it): for the report and `depthmask status`.
#pragma once

#include <nlohmann/json.hpp>

#include <filesystem>
#include <memory>
#include <optional>
#include <string>
#include <vector>

namespace depthmask::detail {

struct RunRecord {
  std::filesystem::path path;
  int version = 1;
  // Version 2: "state" "running" (written when the run started: it still runs, or was killed) or
  // "finished"; a version 1 record was written at the end only.
  bool finished = true;
  std::string depthmask, date;
  std::optional<std::string> settings;  // version 2: settings_hash of the run's effective configuration
  std::optional<std::string> input;     // version 2: its input.root
  std::optional<std::string> config;    // the effective configuration (YAML)
  // The run summary object; null in a record written at the start. Held by pointer: nlohmann::json's
  // noexcept move reads to clang-tidy as throwing (bugprone-exception-escape) in a struct's own.
  std::shared_ptr<const nlohmann::json> summary;
};

// Reads the run record at `path`. Throws InputError naming the file when it cannot be read, is larger
// than 16 MiB, is not JSON, not an object, or names another format or a version other than 1 or 2.
RunRecord read_run_record(const std::filesystem::path& path);

// Every run record of `dir`: depthmask-run.json first, then the shards' (depthmask-run.shard-K-of-N.json)
// by count and index. Empty when `dir` is missing or cannot be listed.
std::vector<std::filesystem::path> list_run_records(const std::filesystem::path& dir);

// The run records of a folder, read together: every readable one (list_run_records' order), why the
// others are not, and the settings hash they agree on (version 1 records name none and agree with
// any).
struct RunRecords {
  std::vector<RunRecord> records;
  std::vector<std::string> unreadable;  // one message per record that cannot be read
  std::optional<std::string> settings;
};
// Throws ConfigError naming the files and their hashes when two records name different settings.
RunRecords read_run_records(const std::filesystem::path& dir);

}  // namespace depthmask::detail
