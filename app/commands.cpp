#include "commands.h"

#include <cstdio>
#include <filesystem>
#include <iostream>

#include "depthmask/backend.h"
#include "depthmask/bag_output.h"
#include "depthmask/bench/bench.h"
#include "depthmask/config.h"
#include "depthmask/doctor.h"
#include "depthmask/encoders.h"
#include "depthmask/errors.h"
#include "depthmask/layouts.h"
#include "depthmask/live.h"
#include "depthmask/live_runner.h"
#include "depthmask/live_server.h"
#include "depthmask/logging.h"
#include "depthmask/open_backend.h"
#include "depthmask/pipeline.h"
#include "depthmask/platform.h"
#include "depthmask/report.h"
#include "depthmask/status.h"
#include "depthmask/synth.h"
#include "depthmask/version.h"
#include "progress.h"

namespace fs = std::filesystem;

namespace depthmask::app {

namespace {

Config effective_config(const std::optional<std::string>& file, const std::vector<std::string>& sets,
                        std::vector<Override> flags) {
  std::vector<Override> ov;
  ov.reserve(sets.size() + flags.size());
  for (const auto& s : sets) ov.push_back(parse_override(s));
  for (auto& f : flags) ov.push_back(std::move(f));
  std::optional<fs::path> path;
  if (file) path = fs::path(*file);
  return load_config(path, ov);
}

std::string yes_no(bool b) { return b ? "yes" : "no"; }

// The summary's backend line. A fallback's reason was already a warning (open_backend): the line
// points at it rather than print the same sentence again, unless logging.level hides warnings.
void print_backend(BackendKind kind, const std::string& reason, bool degraded, const std::string& level) {
  const bool warned = level != "error" && level != "off";
  if (degraded && warned)
    std::printf("  backend: %s (auto fell back to the CPU: the warning above says why)\n",
                std::string(to_string(kind)).c_str());
  else
    std::printf("  backend: %s (%s)\n", std::string(to_string(kind)).c_str(), reason.c_str());
}

std::string gib(size_t bytes) {
  char buf[32];
  std::snprintf(buf, sizeof buf, "%.1f GiB", static_cast<double>(bytes) / (1024.0 * 1024.0 * 1024.0));
  return buf;
}

}  // namespace

int cmd_run(const RunOptions& o, const std::atomic<bool>& stop) {
  std::vector<Override> flags;
  if (o.input) flags.push_back({"input.root", *o.input, "--input", true});
  if (o.output) flags.push_back({"output.dir", *o.output, "--output", true});
  if (o.backend) flags.push_back({"backend.kind", *o.backend, "--backend", true});
  if (o.on_error) flags.push_back({"run.on_error", *o.on_error, "--on-error", true});
  if (o.force) flags.push_back({"run.force", "true", "--force", true});
  if (o.shard) flags.push_back({"run.shard", *o.shard, "--shard", true});
  if (o.shard_count) flags.push_back({"run.shard_count", *o.shard_count, "--shard-count", false});
  const Config c = effective_config(o.config, o.sets, flags);
  setup_logging(c.logging.level);
  if (o.print_config) {
    // What the run would use: with the detected layout's defaults filled in when the input folder can
    // be read; otherwise the configuration as given, and why.
    try {
      const ResolvedInput in = resolve_input(c);
      std::cout << "# input.layout " << to_string(in.layout) << ": " << in.reason << "\n" << to_yaml(in.config);
    } catch (const Error& e) {
      std::cout << "# input not resolved (" << e.what() << "): layout defaults not applied\n" << to_yaml(c);
    }
    return exit_codes::kOk;
  }

  // CUDA's start-up (none for backend.kind: cpu) runs while the run lists the input and reads the
  // resume manifest; the run opens the backend when its frames need it.
  BackendOpener opener(c);
  RunSummary s;
  {
    Progress progress(stderr);
    s = run_batch(c, opener, &progress, &stop);
  }
  const std::string done_before = s.skipped_done ? ", " + std::to_string(s.skipped_done) + " skipped (done)" : "";
  std::printf("depthmask: %zu frame(s): %zu ok, %zu failed, %zu skipped%s in %.2f s (%.1f frames/s)\n", s.total, s.ok,
              s.failed, s.skipped, done_before.c_str(), s.seconds, s.fps());
  if (!s.shard.empty()) std::printf("  shard:   %s (manifest %s)\n", s.shard.c_str(), s.manifest.c_str());
  if (s.skipped_done)
    std::printf(
        "  resumed: %zu frame(s) already done by an earlier run (the depthmask-manifest*.json files); --force redoes "
        "them\n",
        s.skipped_done);
  if (s.unmatched_files)
    std::printf("  ignored %zu %s that belong to no depth frame\n", s.unmatched_files, s.unmatched_what.c_str());
  print_backend(s.backend, s.backend_reason, s.backend_degraded, c.logging.level);
  std::printf("  output:  %s\n", c.output.dir.string().c_str());
  const StartupTimes& t = s.startup;
  std::printf(
      "  start-up: first frame at %.0f ms (CUDA initialisation %.0f ms%s, listing %.1f ms, backend open %.1f ms)\n",
      t.first_frame_ms, t.cuda_init_ms, t.cuda_init_ms > 0 ? "" : ": not initialised", t.listing_ms, t.backend_open_ms);
  for (const auto& f : s.failures) std::printf("  failed:  %s\n", f.message.c_str());
  if (!s.manifest_error.empty()) std::printf("  manifest not saved: %s\n", s.manifest_error.c_str());
  if (o.report) {
    // The run's own outcome decides the exit code; a report that cannot be written says why, and
    // fails a run that did not fail otherwise.
    try {
      std::printf("  report:  %s\n", write_report(c.output.dir).string().c_str());
    } catch (const Error& e) {
      std::fprintf(stderr, "depthmask: the report could not be written: %s\n", e.what());
      if (exit_code(s) == 0 && !s.interrupted) return exit_code(e.failure());
    }
  }
  if (s.interrupted) {
    std::printf("  interrupted: %zu frame(s) not processed\n", s.skipped);
    return exit_codes::kInterrupted;
  }
  // The most severe class among the frames' failures and the manifest's (pipeline.h's exit_code).
  return exit_code(s);
}

int cmd_live(const LiveOptions& o, const std::atomic<bool>& stop) {
  std::vector<Override> flags;
  if (o.source) flags.push_back({"live.source", *o.source, "--source", true});
  if (o.backend) flags.push_back({"backend.kind", *o.backend, "--backend", true});
  if (o.publish) flags.push_back({"live.publish", *o.publish, "--publish", true});
  if (o.output) flags.push_back({"output.dir", *o.output, "--output", true});
  if (o.serve) flags.push_back({"live.serve", *o.serve, "--serve", true});
  if (o.preview) flags.push_back({"live.preview", "true", "--preview", false});
  Config c = effective_config(o.config, o.sets, flags);
  // --output asks for files: every frame, unless the configuration says how often (live.output_every
  // >= 1); a file's live.output_every: 0 (no files) does not silence the command line's --output.
  if (o.output && c.live.output_every == 0) c.live.output_every = 1;
  setup_logging(c.logging.level);
  if (o.print_config) {
    std::cout << to_yaml(c);
    return exit_codes::kOk;
  }
  LiveLimits limits;
  if (o.frames) limits.max_frames = *o.frames;
  if (o.duration) limits.duration = *o.duration;
  const SourceUri uri = parse_source_uri(c.live.source);
  BackendOpener opener(c);  // CUDA starts while the source opens
  const std::unique_ptr<LiveSource> source = make_live_source(uri, c);
  const OpenedBackend opened = opener.open();

  const LiveSummary s = run_live(c, *opened.backend, *source, limits, &stop);
  const char* why = s.interrupted ? "interrupted" : s.source_ended ? "source ended" : "limit reached";
  std::printf(
      "depthmask live: %llu frame(s) captured, %llu processed, %llu dropped (overflow), %llu failed in %.2f s "
      "(%.1f frames/s; %s)\n",
      static_cast<unsigned long long>(s.captured), static_cast<unsigned long long>(s.processed),
      static_cast<unsigned long long>(s.drops_overflow), static_cast<unsigned long long>(s.failed), s.seconds, s.fps(),
      why);
  if (s.drops_unpaired)
    std::printf("  unpaired: %llu frame(s) dropped by the source: no partner within live.sync.tolerance_ms (%g ms)\n",
                static_cast<unsigned long long>(s.drops_unpaired), c.live.sync.tolerance_ms);
  std::printf("  latency (capture to masked): p50 %llu us, p99 %llu us, max %llu us\n",
              static_cast<unsigned long long>(s.latency.p50_us), static_cast<unsigned long long>(s.latency.p99_us),
              static_cast<unsigned long long>(s.latency.max_us));
  std::printf("  source:  %s (%llu error(s), %llu reconnect(s))\n", s.source.c_str(),
              static_cast<unsigned long long>(s.source_errors), static_cast<unsigned long long>(s.reconnects));
  std::printf("  overflow: %s\n", s.overflow.reason.c_str());
  print_backend(s.backend, opened.choice.reason, opened.choice.degraded, c.logging.level);
  if (c.live.output_every > 0)
    std::printf("  written: %llu frame(s) to %s\n", static_cast<unsigned long long>(s.written),
                c.output.dir.string().c_str());
  if (!c.live.publish.empty())
    std::printf("  published: %llu frame(s) on %s\n", static_cast<unsigned long long>(s.published),
                c.live.publish.c_str());
  if (c.live.preview) std::printf("  preview: %llu frame(s) shown\n", static_cast<unsigned long long>(s.previewed));
  if (!c.live.serve.empty())
    std::printf(
        "  served:  %llu client(s), %llu message(s) sent, %llu dropped for slow clients, %llu client(s) "
        "closed\n",
        static_cast<unsigned long long>(s.served.clients), static_cast<unsigned long long>(s.served.messages_sent),
        static_cast<unsigned long long>(s.served.client_dropped),
        static_cast<unsigned long long>(s.served.clients_closed));
  return exit_codes::kOk;
}

int cmd_info(const InfoOptions& o) {
  const Config c = effective_config(o.config, o.sets, {});
  setup_logging(c.logging.level);
  const PlatformInfo p = probe_platform();
  std::printf("depthmask %s\n", DEPTHMASK_VERSION);
  std::printf("CUDA in this build: %s\n", p.cuda_built ? "yes" : "no");
  if (p.cuda_built) {
    std::printf("CUDA runtime: %s   driver: %s%s\n", cuda_version_string(p.runtime_version).c_str(),
                cuda_version_string(p.driver_version).c_str(),
                p.driver_release.empty() ? "" : (" (" + p.driver_release + ")").c_str());
    std::printf("kernels built for: %s (CUDA %s)%s\n", p.build.list.c_str(),
                cuda_version_string(p.build.toolkit_version).c_str(),
                p.build.image.empty() ? "" : ("; image " + p.build.image).c_str());
  }
  if (p.devices.empty()) std::printf("devices: none (%s)\n", p.problem.c_str());
  for (const DeviceInfo& d : p.devices) {
    std::printf("device %d: %s\n", d.index, d.name.c_str());
    std::printf("  compute capability      %d.%d (sm_%d%d)\n", d.cc_major, d.cc_minor, d.cc_major, d.cc_minor);
    std::printf("  type                    %s\n", d.integrated ? "integrated (shares DRAM with the CPU)" : "discrete");
    std::printf("  canMapHostMemory        %s\n", yes_no(d.can_map_host_memory).c_str());
    std::printf("  hostRegisterSupported   %s\n", yes_no(d.host_register_supported).c_str());
    std::printf("  managedMemory           %s\n", yes_no(d.managed_memory).c_str());
    std::printf("  concurrentManagedAccess %s\n", yes_no(d.concurrent_managed_access).c_str());
    std::printf("  pageableMemoryAccess    %s\n", yes_no(d.pageable_memory_access).c_str());
    std::printf("  memory                  %s free of %s\n", gib(d.free_bytes).c_str(), gib(d.total_bytes).c_str());
    std::printf("  kernels                 %s%s%s\n", std::string(to_string(d.compat.level)).c_str(),
                d.compat.how.empty() ? "" : (": " + d.compat.how).c_str(),
                d.compat.message.empty() ? "" : ("\n    " + d.compat.message).c_str());
  }
  if (c.is_set_by_user("input.root")) {
    try {
      const ResolvedInput in = resolve_input(c);
      std::printf("input: %s, layout %s (%s), %zu frame(s)\n", c.input.root.string().c_str(),
                  std::string(to_string(in.layout)).c_str(), in.reason.c_str(), in.listing.frames.size());
    } catch (const Error& e) {
      std::printf("input: %s cannot be read: %s\n", c.input.root.string().c_str(), e.what());
    }
  }
  std::printf("live sources:");
  for (const SourceSupport& src : live_source_support())
    std::printf(" %s (%s%s)", src.scheme.c_str(), src.available ? "" : "unavailable: ", src.note.c_str());
  std::printf("\n");
  const ServeSupport serve = serve_support();
  std::printf("live --serve: %s%s\n", serve.available ? "" : "unavailable: ", serve.note.c_str());
  BackendConfig autoreq = c.backend;
  autoreq.kind = BackendKind::Auto;
  const BackendChoice a = choose_backend(autoreq, p);
  std::printf("auto picks: %s\n  why: %s\n", std::string(to_string(a.kind)).c_str(), a.reason.c_str());
  if (const std::string v = device_visibility(a, p); !v.empty()) std::printf("  devices: %s\n", v.c_str());
  if (c.backend.kind != BackendKind::Auto) {
    try {
      const BackendChoice r = choose_backend(c.backend, p);
      std::printf("configured: %s (usable)\n", std::string(to_string(r.kind)).c_str());
    } catch (const PlatformError& e) {
      std::printf("configured: %s (NOT usable: %s)\n", std::string(to_string(c.backend.kind)).c_str(), e.what());
      return exit_codes::kPlatform;
    }
  }
  return exit_codes::kOk;
}

int cmd_doctor(const DoctorCliOptions& o) {
  std::vector<Override> flags;
  if (o.input) flags.push_back({"input.root", *o.input, "--input", true});
  const Config c = effective_config(o.config, o.sets, flags);
  // The report is the output: the library's own lines (layout notes) only when they are warnings.
  setup_logging(c.logging.level == "info" ? "warn" : c.logging.level);
  DoctorOptions d;
  d.sample = o.sample;
  const DoctorReport r = diagnose(c, d);
  std::cout << (o.json ? r.to_json() : r.to_text()) << std::flush;
  if (o.write_config) {
    const std::string yaml = r.suggested_yaml();
    write_file_atomic(fs::path(*o.write_config), yaml.data(), yaml.size(), false);
    if (!o.json) std::printf("depthmask: wrote the suggested keys to %s\n", o.write_config->c_str());
  }
  return r.exit_code(o.strict);
}

int cmd_synth(const SynthOptions& o) {
  setup_logging("info");
  int w = 0, h = 0;
  char x = 0;
  if (std::sscanf(o.size.c_str(), "%d%c%d", &w, &x, &h) != 3 || (x != 'x' && x != 'X') || w <= 0 || h <= 0 ||
      w > 16384 || h > 16384)
    throw ConfigError("--size '" + o.size + "': expected WIDTHxHEIGHT such as 640x480 (1..16384 each)");
  if (o.frames <= 0 || o.frames > 1000000)
    throw ConfigError("--frames " + std::to_string(o.frames) + ": expected 1..1000000");
  if (o.format == "mcap") {
    write_synthetic_bag(fs::path(o.output), o.frames, w, h, !o.no_color, o.compression);
    std::printf(
        "depthmask: wrote %d synthetic frame(s) of %dx%d as a ROS 2 bag to %s\n  run it: depthmask run --input %s\n",
        o.frames, w, h, o.output.c_str(), o.output.c_str());
    return exit_codes::kOk;
  }
  write_synthetic_dataset(fs::path(o.output), o.frames, w, h, !o.no_color);
  std::printf("depthmask: wrote %d synthetic frame(s) of %dx%d to %s\n  run it: depthmask run --config %s\n", o.frames,
              w, h, o.output.c_str(), (fs::path(o.output) / "depthmask.yaml").string().c_str());
  return exit_codes::kOk;
}

int cmd_bench(const BenchCliOptions& o, const std::atomic<bool>& stop) {
  // The measured runs' own log lines (backend choices, layout notes on the generated datasets) would
  // drown the progress lines and the table; errors still show.
  setup_logging("error");
  bench::BenchOptions b = o.quick ? bench::quick_options() : bench::BenchOptions{};
  if (o.sizes) b.sizes = bench::parse_sizes(*o.sizes);
  if (o.backends) b.backends = bench::parse_backends(*o.backends);
  if (o.frames) {
    if (*o.frames <= 0) throw ConfigError("--frames " + std::to_string(*o.frames) + ": expected 1..100000");
    b.frames = *o.frames;
  }
  if (o.iterations) b.iterations = *o.iterations;
  if (o.real_frame) {
    const size_t comma = o.real_frame->find(',');
    if (comma == std::string::npos || comma == 0 || comma + 1 == o.real_frame->size())
      throw ConfigError("--real-frame '" + *o.real_frame +
                        "': expected DEPTH,MASK (a 16-bit depth PNG and an 8-bit mask PNG)");
    b.real_depth = o.real_frame->substr(0, comma);
    b.real_mask = o.real_frame->substr(comma + 1);
  }
  b.end_to_end = !o.skip_end_to_end;
  if (o.live_seconds) {
    if (!(*o.live_seconds > 0) || *o.live_seconds > 3600)
      throw ConfigError("--live-seconds " + std::to_string(*o.live_seconds) + ": expected more than 0, at most 3600");
    b.live_seconds = *o.live_seconds;
  }
  if (o.live_fps) {
    if (!(*o.live_fps > 0) || *o.live_fps > 10000)
      throw ConfigError("--live-fps " + std::to_string(*o.live_fps) + ": expected more than 0, at most 10000");
    b.live_fps = *o.live_fps;
  }
  b.live = !o.skip_live;
  b.command_line = o.command_line;
  const fs::path out(o.out);
  ensure_output_dir(out);  // fail before minutes of measuring, not after
  // SIGINT/SIGTERM: the progress callback (called between measurements) unwinds the bench, whose
  // scratch datasets and buffers are then released on the way out.
  struct Interrupted {};
  bench::BenchReport r;
  try {
    r = bench::run_bench(
        b,
        [&stop](const std::string& s) {
          if (stop.load()) throw Interrupted{};
          std::fprintf(stderr, "bench: %s\n", s.c_str());
        },
        [&out](const bench::BenchReport& partial) { bench::write_report(partial, out); });
  } catch (const Interrupted&) {
    std::fprintf(stderr, "depthmask: bench interrupted; %s holds the sections finished before\n", out.string().c_str());
    return exit_codes::kInterrupted;
  }
  bench::write_report(r, out);
  std::cout << bench::to_markdown(r) << "\ndepthmask: wrote " << (out / "bench.md").string() << ", "
            << (out / "bench.json").string() << " and " << (out / "bench.png").string() << "\n";
  return exit_codes::kOk;
}

int cmd_report(const ReportCliOptions& o) {
  ReportOptions r;
  if (o.out) r.out = *o.out;
  r.thumbnails = o.thumbnails;
  std::printf("depthmask: report written to %s\n", write_report(o.output_dir, r).string().c_str());
  return exit_codes::kOk;
}

int cmd_status(const StatusCliOptions& o, const std::atomic<bool>& stop) {
  // The output is the report: the library's own lines (layout notes) only when they are warnings.
  setup_logging("warn");
  StatusOptions so;
  so.verify = o.verify;
  so.stop = &stop;
  std::optional<ResolvedInput> in;
  std::optional<RecordedInput> recorded;
  std::optional<fs::path> dir;
  if (o.output_dir) dir = fs::path(*o.output_dir);
  // Alone (no --config, no --set), the folder's run records say what to check it against; --input
  // then moves the recorded input.
  if (dir && !o.config && o.sets.empty()) {
    std::optional<fs::path> root;
    if (o.input) root = fs::path(*o.input);
    recorded = recorded_input(*dir, root);
  }
  if (recorded) {
    so.settings = recorded->settings;
    so.frames = &recorded->input.listing.frames;
    so.input = recorded->input.config.input.root.string();
    so.records = recorded->records;
    if (o.input) {
      so.moved_from = recorded->recorded_root;
      so.moved_to = recorded->input.config.input.root;
    }
  } else if (o.config || o.input || !o.sets.empty()) {
    // The run's settings and its frame list, as `run` resolves them (the layout's defaults included).
    std::vector<Override> flags;
    if (o.input) flags.push_back({"input.root", *o.input, "--input", true});
    const Config c = effective_config(o.config, o.sets, flags);
    if (c.logging.level != "info") setup_logging(c.logging.level);
    if (!dir && c.is_set_by_user("output.dir")) dir = c.output.dir;
    in = resolve_input(c);
    so.settings = settings_hash(in->config);
    so.frames = &in->listing.frames;
    so.input = in->config.input.root.string();
  }
  if (!dir) throw ConfigError("status: OUTPUT_DIR is required (or a --config or --set that sets output.dir)");
  const DatasetStatus s = compute_status(*dir, so);
  if (o.json) {
    std::cout << s.to_json(o.missing);
  } else if (o.missing) {
    for (const std::string& key : s.rerun_keys()) std::cout << key << "\n";
  } else {
    std::cout << s.to_text(o.all ? 0 : 20);
  }
  std::cout << std::flush;
  if (o.finalize) {
    // On stderr: stdout stays the status (--json, --missing).
    if (!s.complete()) {
      std::fprintf(stderr, "depthmask: --finalize: the folder is not complete; the bag's parts stay\n");
    } else if (const BagMerge m = finalize_bag(*dir); m.merged) {
      std::fprintf(stderr, "depthmask: bag written: %s (%llu message(s), %llu frame(s), from %zu file(s))\n",
                   (*dir / kBagName).string().c_str(), static_cast<unsigned long long>(m.messages),
                   static_cast<unsigned long long>(m.depth_messages), m.parts);
    } else {
      std::fprintf(stderr, "depthmask: --finalize: %s\n", m.why_not.c_str());
    }
  }
  return s.exit_code();
}

}  // namespace depthmask::app
