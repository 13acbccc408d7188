// The subcommands of the depthmask CLI. Each returns the process exit code: exit_codes::kOk, else
// the failure class's code (exit_codes and exit_code() of depthmask/errors.h, docs/RELIABILITY.md's
// table); main() gives 128 + the signal for an interrupted run (143 for SIGTERM). A batch with failed
// frames exits with the most severe class among them (exit_code(const RunSummary&), run_summary.h).
#pragma once

#include <atomic>
#include <cstddef>
#include <cstdint>
#include <optional>
#include <string>
#include <vector>

namespace depthmask::app {

struct RunOptions {
  std::optional<std::string> config;
  std::optional<std::string> input, output, backend, on_error;
  std::optional<std::string> shard, shard_count;  // --shard K/N|auto, --shard-count N
  std::vector<std::string> sets;
  bool print_config = false;
  bool force = false;
  bool report = false;  // --report: write depthmask-report.html beside the outputs at the end
};
int cmd_run(const RunOptions& o, const std::atomic<bool>& stop);

struct LiveOptions {
  std::optional<std::string> config;
  std::optional<std::string> source, backend, publish, output, serve;
  std::optional<uint64_t> frames;
  std::optional<double> duration;
  std::vector<std::string> sets;
  bool print_config = false;
  bool preview = false;
};
// SIGINT/SIGTERM (`stop`) end the run: frames in flight finish, the summary prints, exit 0.
int cmd_live(const LiveOptions& o, const std::atomic<bool>& stop);

struct InfoOptions {
  std::optional<std::string> config;
  std::vector<std::string> sets;
};
int cmd_info(const InfoOptions& o);

struct DoctorCliOptions {
  std::optional<std::string> config, input, write_config;
  std::vector<std::string> sets;
  size_t sample = 64;
  bool strict = false;
  bool json = false;
};
// Checks a dataset (depthmask/doctor.h) and prints the report (text, or JSON with --json). Exit 0
// when no check is an error (with --strict: and none a warning), 1 otherwise, 2 for configuration
// errors.
int cmd_doctor(const DoctorCliOptions& o);

struct SynthOptions {
  std::string output;
  int frames = 8;
  std::string size = "640x480";
  std::string format = "png";        // png: a dataset folder; mcap: a ROS 2 bag
  bool no_color = false;             // depth and masks only
  std::string compression = "zstd";  // a bag's chunks (--format mcap): zstd, lz4 or none
};
int cmd_synth(const SynthOptions& o);

struct BenchCliOptions {
  std::string out = "bench-results";
  std::optional<std::string> sizes, backends, real_frame;
  std::optional<int> frames, iterations;
  std::optional<double> live_seconds, live_fps;
  bool quick = false;
  bool skip_end_to_end = false;
  bool skip_live = false;
  std::string command_line;  // recorded in the report
};
int cmd_bench(const BenchCliOptions& o, const std::atomic<bool>& stop);

struct ReportCliOptions {
  std::string output_dir;
  std::optional<std::string> out;
  size_t thumbnails = 48;
  std::optional<std::string> backend;  // accepted as `run` takes it; outputs do not depend on it
};
// Writes the QA report of an output folder (report.h's write_report) and prints its path.
int cmd_report(const ReportCliOptions& o);

struct StatusCliOptions {
  std::optional<std::string> output_dir, config, input;
  std::optional<std::string> backend;  // accepted as `run` takes it; outputs do not depend on it
  std::vector<std::string> sets;
  bool verify = false;    // --verify: CRC-32s too, not only sizes
  bool all = false;       // --all: every failed and missing frame, not the first 20
  bool missing = false;   // --missing: only the keys of the frames to rerun, one per line
  bool json = false;      // --json: one JSON document (docs/STATUS.md)
  bool finalize = false;  // --finalize: merge the bag's parts when the folder is complete (bag_output.h)
};
// Prints the status of an output folder's manifests (status.h). Exit 0 when complete, 1 when not (or
// when the input cannot be listed), 2 for usage and configuration errors.
// SIGINT/SIGTERM (`stop`) end it with exit 130.
int cmd_status(const StatusCliOptions& o, const std::atomic<bool>& stop);

}  // namespace depthmask::app
