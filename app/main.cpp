// depthmask: masked float depth maps from RGB-D frames. The CLI is thin: it parses arguments, maps
// exceptions to exit codes and leaves the work to depthmask_core.
#include <CLI/CLI.hpp>

#include <atomic>
#include <csignal>
#include <cstdio>
#include <string>

#include "commands.h"
#include "depthmask/errors.h"
#include "depthmask/logging.h"
#include "depthmask/version.h"

namespace {

std::atomic<bool> g_stop{false};
std::atomic<int> g_signal{0};  // the first signal that asked to stop

extern "C" void on_signal(int sig) {
  int none = 0;
  g_signal.compare_exchange_strong(none, sig);
  g_stop.store(true);
}

// An interrupted command exits 128 + the signal, as a shell reports a process killed by it: 130 for
// SIGINT, 143 for SIGTERM (Slurm's KillWait, a pod's termination), which a scheduler can tell from a
// failure and requeue.
int interrupted_code(int rc) {
  const int sig = g_signal.load();
  return rc == depthmask::exit_codes::kInterrupted && sig > 0 ? depthmask::exit_codes::of_signal(sig) : rc;
}

// One function per subcommand: its options, bound to the struct its command takes (commands.h).
using namespace depthmask::app;

// `depthmask run`: mask every frame of a dataset folder.
CLI::App* add_run(CLI::App& cli, RunOptions& run) {
  auto* run_cmd = cli.add_subcommand("run", "Mask every frame of a dataset folder and write float depth maps");
  run_cmd->add_option("-c,--config", run.config, "YAML configuration file")->check(CLI::ExistingFile);
  run_cmd->add_option("-i,--input", run.input, "Input folder (sets input.root)");
  run_cmd->add_option("-o,--output", run.output, "Output folder (sets output.dir)");
  run_cmd->add_option("-b,--backend", run.backend, "auto | copy | zero_copy | managed | cpu (sets backend.kind)");
  run_cmd
      ->add_option("--set", run.sets,
                   "Override a key: key.path=value (e.g. mask.labels=[48,114], input.depth={id}-depth.png: a string "
                   "key takes the text as written)")
      ->take_all();
  run_cmd->add_option("--on-error", run.on_error, "skip | stop (sets run.on_error)");
  run_cmd->add_flag("--force", run.force, "Redo frames the resume manifest records as finished (sets run.force)");
  run_cmd->add_flag("--print-config", run.print_config, "Print the effective configuration as YAML and exit");
  run_cmd->add_flag("--report", run.report,
                    "Write the QA report (depthmask-report.html) beside the outputs at the end");
  run_cmd->add_option("--shard", run.shard,
                      "K/N: process shard K of N (0-based) of the frames; auto: from SLURM_ARRAY_TASK_ID or "
                      "JOB_COMPLETION_INDEX (sets run.shard)");
  run_cmd->add_option("--shard-count", run.shard_count,
                      "N for --shard auto under a Kubernetes Indexed Job (sets run.shard_count; default "
                      "DEPTHMASK_SHARD_COUNT)");
  return run_cmd;
}

// `depthmask live`: mask frames from a live source.
CLI::App* add_live(CLI::App& cli, LiveOptions& live) {
  auto* live_cmd =
      cli.add_subcommand("live", "Mask frames from a live source (camera, replay, synthetic) with bounded latency");
  live_cmd->add_option("-c,--config", live.config, "YAML configuration file")->check(CLI::ExistingFile);
  live_cmd->add_option("--source", live.source,
                       "Source URI: synthetic://?size=WxH&fps=N, replay://FOLDER, gst://PIPELINE, v4l2:///dev/videoN, "
                       "openni2://[DEVICE|FILE.oni] (sets live.source)");
  live_cmd->add_option("-b,--backend", live.backend, "auto | copy | zero_copy | managed | cpu (sets backend.kind)");
  live_cmd->add_option("--frames", live.frames, "Stop after this many captured frames");
  live_cmd->add_option("--duration", live.duration, "Stop after this many seconds")->check(CLI::PositiveNumber);
  live_cmd->add_option("--publish", live.publish,
                       "where to publish frames: ZeroMQ endpoints (tcp://127.0.0.1:5555) and ROS 2 namespaces "
                       "(ros2://depthmask), comma separated (sets live.publish)");
  live_cmd->add_option("--serve", live.serve,
                       "[ADDR:]PORT: serve a page and the Foxglove WebSocket protocol (default address 127.0.0.1; "
                       "sets live.serve)");
  live_cmd->add_option("-o,--output", live.output,
                       "Output folder (sets output.dir; writes every frame unless live.output_every is set)");
  live_cmd->add_option("--set", live.sets, "Override a key: key.path=value (YAML value, e.g. live.buffers=8)")
      ->take_all();
  live_cmd->add_flag("--preview", live.preview,
                     "Show the masked depth in a window (sets live.preview; off without a display)");
  live_cmd->add_flag("--print-config", live.print_config, "Print the effective configuration as YAML and exit");
  return live_cmd;
}

// `depthmask info`: probe the platform.
CLI::App* add_info(CLI::App& cli, InfoOptions& info) {
  auto* info_cmd =
      cli.add_subcommand("info", "Probe the platform: CUDA versions, devices, which backend auto picks and why");
  info_cmd->add_option("-c,--config", info.config, "YAML configuration file (its backend settings)")
      ->check(CLI::ExistingFile);
  info_cmd->add_option("--set", info.sets, "Override a key: key.path=value")->take_all();
  return info_cmd;
}

// `depthmask doctor`: check a dataset before a long run.
CLI::App* add_doctor(CLI::App& cli, DoctorCliOptions& doctor) {
  auto* doctor_cmd = cli.add_subcommand(
      "doctor", "Check a dataset before a long run: layout, pairing, sizes, units, intrinsics, the mask rule");
  doctor_cmd->add_option("-c,--config", doctor.config, "YAML configuration file")->check(CLI::ExistingFile);
  doctor_cmd->add_option("-i,--input", doctor.input, "Input folder (sets input.root)");
  doctor_cmd->add_option("--set", doctor.sets, "Override a key: key.path=value")->take_all();
  doctor_cmd->add_option("--sample", doctor.sample, "Frames to decode, evenly spaced")
      ->capture_default_str()
      ->check(CLI::Range(0, 100000));
  doctor_cmd->add_flag("--strict", doctor.strict, "Exit 1 on warnings too");
  doctor_cmd->add_flag("--json", doctor.json, "Print the report as JSON (schema: docs/DOCTOR.md)");
  doctor_cmd->add_option("--write-config", doctor.write_config, "Save the suggested keys as a YAML configuration");
  return doctor_cmd;
}

// `depthmask synth`: write a synthetic dataset.
CLI::App* add_synth(CLI::App& cli, SynthOptions& synth) {
  auto* synth_cmd = cli.add_subcommand("synth", "Write a deterministic synthetic RGB-D dataset");
  synth_cmd->add_option("-o,--output", synth.output, "Output folder")->required();
  synth_cmd->add_option("-n,--frames", synth.frames, "Number of frames")->capture_default_str();
  synth_cmd->add_option("-s,--size", synth.size, "Frame size WIDTHxHEIGHT")->capture_default_str();
  synth_cmd->add_option("--format", synth.format, "png: a dataset folder of PNGs; mcap: a ROS 2 bag (MCAP)")
      ->check(CLI::IsMember({"png", "mcap"}))
      ->capture_default_str();
  synth_cmd->add_flag("--no-color", synth.no_color, "Write depth and masks only (no colour images or topic)");
  synth_cmd->add_option("--compression", synth.compression, "A bag's chunks (--format mcap): zstd, lz4 or none")
      ->check(CLI::IsMember({"zstd", "lz4", "none"}))
      ->capture_default_str();
  return synth_cmd;
}

// `depthmask report`: the HTML page of a run's outputs.
CLI::App* add_report(CLI::App& cli, ReportCliOptions& report) {
  auto* report_cmd = cli.add_subcommand(
      "report", "Write a self-contained HTML page to look at a run's outputs: summary, thumbnails, plots, failures");
  report_cmd->add_option("OUTPUT_DIR", report.output_dir, "The run's output folder")->required();
  report_cmd->add_option("--out", report.out, "The page to write (default OUTPUT_DIR/depthmask-report.html)");
  report_cmd->add_option("--thumbnails", report.thumbnails, "At most this many frames on the contact sheet")
      ->check(CLI::PositiveNumber)
      ->capture_default_str();
  report_cmd->add_option("-b,--backend", report.backend,
                         "Accepted as run takes it, and unused (outputs do not depend on it)");
  return report_cmd;
}

// `depthmask status`: how far a run is.
CLI::App* add_status(CLI::App& cli, StatusCliOptions& status) {
  auto* status_cmd = cli.add_subcommand(
      "status",
      "How far a run is: frames done, failed and missing over every manifest (shards too) in OUTPUT_DIR; "
      "exit 0 when complete, 1 when not");
  status_cmd->add_option("OUTPUT_DIR", status.output_dir,
                         "The run's output folder (default: output.dir of --config); alone, it is checked against the "
                         "input and settings its run records name");
  status_cmd
      ->add_option("-c,--config", status.config,
                   "The run's YAML configuration: count only its settings' records "
                   "and list its input's frames")
      ->check(CLI::ExistingFile);
  status_cmd->add_option("-i,--input", status.input,
                         "The run's input folder (sets input.root; over the run record's: a moved dataset)");
  status_cmd->add_option("-b,--backend", status.backend,
                         "Accepted as run takes it, and unused (outputs do not depend on it)");
  status_cmd->add_option("--set", status.sets, "Override a key as the run did: key.path=value")->take_all();
  status_cmd->add_flag("--verify", status.verify,
                       "Also check the outputs' CRC-32s (reads every output; default: sizes)");
  status_cmd->add_flag("--all", status.all, "List every failed and missing frame (default: the first 20 of each)");
  status_cmd->add_flag("--missing", status.missing,
                       "Print only the manifest keys of the frames to rerun (missing and failed), one per line");
  status_cmd->add_flag("--json", status.json, "Print one JSON document (fields: docs/STATUS.md)");
  status_cmd->add_flag("--finalize", status.finalize,
                       "When complete, merge the parts of an output.format mcap bag into depthmask.mcap and "
                       "metadata.yaml (docs/ROSBAG.md)");
  return status_cmd;
}

// `depthmask bench`: measure the backends (bench.command_line is set by the caller).
CLI::App* add_bench(CLI::App& cli, BenchCliOptions& bench) {
  auto* bench_cmd =
      cli.add_subcommand("bench",
                         "Measure bandwidth ceilings, the kernel, one-frame latency per backend and `run` end to end; "
                         "writes bench.md, bench.json and bench.png");
  bench_cmd->add_option("-o,--out", bench.out, "Output folder")->capture_default_str();
  bench_cmd->add_option("--sizes", bench.sizes, "Frame sizes, e.g. 640x480,1280x720,1920x1080,3840x2160 (the default)");
  bench_cmd->add_option("--frames", bench.frames,
                        "End-to-end dataset frames per size (default: 256 at 640x480 down to 49 at 4K, at least 64 per "
                        "thread within 8 GiB of output)");
  bench_cmd->add_option("--iterations", bench.iterations, "Timed one-frame repetitions per row (default 200)");
  bench_cmd->add_option("--backends", bench.backends,
                        "Backends to measure, e.g. cpu,copy,zero_copy,managed (the default)");
  bench_cmd->add_flag("--quick", bench.quick, "Tiny sizes, counts and timing windows (for tests; numbers mean little)");
  bench_cmd->add_flag("--skip-end-to-end", bench.skip_end_to_end, "Leave out the end-to-end `run` comparison");
  bench_cmd->add_option("--live-seconds", bench.live_seconds,
                        "Seconds of live mode per backend (default 5; --quick: 1)");
  bench_cmd->add_option("--live-fps", bench.live_fps,
                        "The live replay's frame rate (default 90 with a CUDA device, 30 without)");
  bench_cmd->add_flag("--skip-live", bench.skip_live, "Leave out the live-mode section (run_live on replay://)");
  bench_cmd->add_option("--real-frame", bench.real_frame,
                        "DEPTH,MASK: also time host to host on this recorded frame (16-bit depth PNG, 8-bit mask PNG)");
  return bench_cmd;
}

// Parses the command line and runs one subcommand; an exception that escapes a command is classified
// (depthmask/errors.h) and gives the exit code.
int cli_main(int argc, char** argv) {
  using namespace depthmask;

  CLI::App cli{
      "depthmask: turns RGB-D frames (depth, mask, color, intrinsics) into masked float depth maps, on GPU or CPU"};
  cli.require_subcommand(1);
  cli.set_version_flag("--version", DEPTHMASK_VERSION);

  RunOptions run;
  LiveOptions live;
  InfoOptions info;
  DoctorCliOptions doctor;
  SynthOptions synth;
  ReportCliOptions report;
  StatusCliOptions status;
  BenchCliOptions bench;
  // In --help's order.
  CLI::App* run_cmd = add_run(cli, run);
  CLI::App* live_cmd = add_live(cli, live);
  CLI::App* info_cmd = add_info(cli, info);
  CLI::App* doctor_cmd = add_doctor(cli, doctor);
  CLI::App* synth_cmd = add_synth(cli, synth);
  CLI::App* report_cmd = add_report(cli, report);
  CLI::App* status_cmd = add_status(cli, status);
  CLI::App* bench_cmd = add_bench(cli, bench);
  for (int i = 0; i < argc; ++i) bench.command_line += (i ? " " : "") + std::string(argv[i]);

  try {
    cli.parse(argc, argv);
  } catch (const CLI::ParseError& e) {
    const int rc = cli.exit(e);
    return rc == 0 ? exit_codes::kOk : exit_codes::kConfig;
  }

  std::signal(SIGINT, on_signal);
  std::signal(SIGTERM, on_signal);
  try {
    setup_logging("info");
    if (*run_cmd) return interrupted_code(cmd_run(run, g_stop));
    if (*live_cmd) return cmd_live(live, g_stop);
    if (*info_cmd) return cmd_info(info);
    if (*doctor_cmd) return cmd_doctor(doctor);
    if (*synth_cmd) return cmd_synth(synth);
    if (*bench_cmd) return interrupted_code(cmd_bench(bench, g_stop));
    if (*report_cmd) return cmd_report(report);
    if (*status_cmd) return cmd_status(status, g_stop);
  } catch (const std::exception& e) {
    // One taxonomy (depthmask/errors.h): the class names the message and gives the exit code.
    const Failure f = failure_of(e);
    std::fprintf(stderr, "depthmask: %s: %s\n",
                 f == Failure::Config ? "configuration error"
                 : f == Failure::Busy ? "shard busy"
                                      : (std::string(to_string(f)) + " error").c_str(),
                 e.what());
    return f == Failure::Interrupted ? interrupted_code(exit_code(f)) : exit_code(f);
  } catch (...) {
    std::fprintf(stderr, "depthmask: internal error: an exception that is not a std::exception\n");
    return exit_code(Failure::Internal);
  }
  return exit_codes::kConfig;
}

}  // namespace

int main(int argc, char** argv) {
  try {
    return cli_main(argc, argv);
  } catch (...) {  // only the argument parser's own setup can get here
    std::fprintf(stderr, "depthmask: internal error while parsing the command line\n");
    return depthmask::exit_code(depthmask::Failure::Internal);
  }
}
