// The bench report: the targets checked, Markdown, JSON, a bar chart, and writing them.
#include <nlohmann/json.hpp>

#include <opencv2/imgcodecs.hpp>
#include <opencv2/imgproc.hpp>

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <map>
#include <sstream>

#include "depthmask/bench/bench.h"
#include "depthmask/encoders.h"
#include "depthmask/errors.h"
#include "depthmask/kernels/mask_variants.h"

namespace depthmask::bench {

namespace {

std::string fmt(const char* f, double v) {
  char b[64];
  std::snprintf(b, sizeof b, f, v);
  return b;
}
std::string num(double v, int prec = 1) {
  if (!std::isfinite(v)) return "-";
  char f[8];
  std::snprintf(f, sizeof f, "%%.%df", prec);
  return fmt(f, v);
}
std::string mib(size_t bytes) { return num(static_cast<double>(bytes) / (1024.0 * 1024.0), 0) + " MiB"; }

// The best host-to-host p50 for one frame (the synthetic one when `frame` is empty), size and depth
// type, and which backend gave it. `as_configured`: only the backends as run uses them, not the rows
// with the bench's own settings ("copy (4 bands)", "cpu (8 tasks)", "zero_copy (mask keeps every
// pixel)": their labels carry a parenthesis).
const LatencyRow* best_latency(const BenchReport& r, const FrameSize& s, const std::string& depth, bool as_configured,
                               const std::string& frame = {}) {
  const LatencyRow* best = nullptr;
  for (const LatencyRow& l : r.host_to_host)
    if (l.size.width == s.width && l.size.height == s.height && l.depth == depth && l.frame == frame && l.us.n > 0 &&
        (!as_configured || l.backend.find(" (") == std::string::npos) && (!best || l.us.p50 < best->us.p50))
      best = &l;
  return best;
}

bool same(const FrameSize& a, const FrameSize& b) { return a.width == b.width && a.height == b.height; }

std::string frames_per_launch(const KernelRow& k) {
  return k.batch == 1 ? std::string("1 frame per launch") : std::to_string(k.batch) + " frames per launch";
}

// A live row meets the bar: it ran, nothing was dropped or failed, and the source kept its
// pace (captured at least 95 % of fps x seconds: a replay that cannot decode fast enough captures
// fewer frames, drops none, and must not pass for it).
bool live_kept_pace(const LiveSection& l, const LiveRow& row) {
  return row.captured > 0 && static_cast<double>(row.captured) >= 0.95 * l.fps * l.seconds;
}
bool live_clean(const LiveSection& l, const LiveRow& row) {
  return row.error.empty() && row.dropped == 0 && row.failed == 0 && live_kept_pace(l, row);
}
std::string live_measured(const LiveSection& l, const LiveRow& row) {
  if (!row.error.empty()) return row.backend + ": failed: " + row.error;
  return row.backend + ": " + std::to_string(row.dropped) + " dropped, " + std::to_string(row.failed) + " failed, " +
         std::to_string(row.captured) + " of " + num(l.fps * l.seconds, 0) + " frames captured, p99 " +
         std::to_string(row.p99_us) + " us";
}

}  // namespace

std::vector<TargetCheck> check_targets(const BenchReport& r) {
  std::vector<TargetCheck> t;
  // Kernel: the best copy-backend row per size (>= 1080p) and depth type, >= 95 % of D2D.
  {
    TargetCheck c{"kernel >= 95% of D2D bandwidth at >= 1920x1080 (copy backend, best variant, batched or not)", "",
                  std::nullopt};
    std::map<std::string, const KernelRow*> best;
    for (const KernelRow& k : r.kernel) {
      if (k.backend != "copy" || k.bus_bound || k.size.pixels() < size_t{1920} * 1080 || k.pct_of_d2d <= 0) continue;
      const std::string key = k.size.label() + " " + k.depth;
      if (!best[key] || k.pct_of_d2d > best[key]->pct_of_d2d) best[key] = &k;
    }
    bool all = true;
    for (const auto& [key, k] : best) {
      c.measured += (c.measured.empty() ? "" : "; ") + key + " " + num(k->pct_of_d2d) + "% (" + k->variant + ", " +
                    frames_per_launch(*k) + ")";
      all = all && k->pct_of_d2d >= 95.0;
    }
    if (!best.empty()) c.met = all;
    t.push_back(c);
  }
  // Host to host, best backend, one frame.
  struct Lat {
    FrameSize s;
    const char* depth;
    double limit_us;
  };
  for (const Lat& l : {Lat{{640, 480}, "f32", 55}, Lat{{3840, 2160}, "f32", 850}, Lat{{640, 480}, "u16", 45},
                       Lat{{3840, 2160}, "u16", 720}}) {
    TargetCheck c{
        "host to host " + l.s.label() + " " + l.depth + " p50 <= " + num(l.limit_us, 0) + " us (best backend)", "",
        std::nullopt};
    // On the recorded frame (--real-frame) where there is one of this size: the issue asks for real
    // data; otherwise on the synthetic frame.
    std::string real;
    for (const LatencyRow& x : r.host_to_host)
      if (!x.frame.empty() && same(x.size, l.s)) real = x.frame;
    if (const LatencyRow* b = best_latency(r, l.s, l.depth, true, real)) {
      c.measured = num(b->us.p50) + " us (" + b->backend + (real.empty() ? "" : ", " + real) + ")";
      c.met = b->us.p50 <= l.limit_us;
    }
    t.push_back(c);
  }
  // End to end.
  {
    // The warm run (second run_batch) is the steady state the targets speak of; the first run's ratio
    // (start-up included) is shown beside it.
    TargetCheck cb{"run (warm) >= 0.8x codec bound", "", std::nullopt};
    const unsigned threads = r.machine.hardware_threads;
    const double naive_need = threads >= 16 ? 10.0 : (threads == 2 ? 1.7 : 0.0);
    TargetCheck nv{"run (warm) >= " + (naive_need > 0 ? num(naive_need) : std::string("?")) +
                       "x naive loop (10x on 16 cores, 1.7x on 2)",
                   "", std::nullopt};
    bool cb_all = true, nv_all = true, any = false;
    for (const EndToEndRow& e : r.end_to_end) {
      if (!e.error.empty() || e.codec_bound_fps <= 0 || e.naive_fps <= 0) continue;
      any = true;
      const double a = e.warm_run_fps / e.codec_bound_fps, b = e.warm_run_fps / e.naive_fps;
      cb.measured += (cb.measured.empty() ? "" : "; ") + e.size.label() + " " + num(a, 2) + "x (first run " +
                     num(e.run_fps / e.codec_bound_fps, 2) + "x)";
      nv.measured += (nv.measured.empty() ? "" : "; ") + e.size.label() + " " + num(b, 2) + "x (first run " +
                     num(e.run_fps / e.naive_fps, 2) + "x)";
      cb_all = cb_all && a >= 0.8;
      nv_all = nv_all && b >= naive_need;
    }
    if (any) cb.met = cb_all;
    if (any && naive_need > 0) nv.met = nv_all;
    if (any && naive_need <= 0) nv.measured += " (no target for " + std::to_string(threads) + " threads)";
    t.push_back(cb);
    t.push_back(nv);
  }
  // CPU loop on one thread no slower than copyTo.
  {
    TargetCheck c{"CPU masking on one thread no slower than cv::Mat::copyTo with mask (p50)", "", std::nullopt};
    bool all = true;
    for (const CpuRow& k : r.cpu_single_thread) {
      c.measured += (c.measured.empty() ? "" : "; ") + k.size.label() + " " + num(k.mask_cpu_us.p50) + " vs " +
                    num(k.copyto_us.p50) + " us";
      all = all && k.mask_cpu_us.p50 <= k.copyto_us.p50;
    }
    if (!r.cpu_single_thread.empty()) c.met = all;
    t.push_back(c);
  }
  // Live (issue #5): one target on a machine with a CUDA device, the other without; each only when the
  // section ran at the target's size and rate.
  {
    const LiveSection& l = r.live;
    const bool at_640 = same(l.size, {640, 480});
    TargetCheck gpu{"live 640x480 at 90 fps: zero drops and p99 <= 1 ms (H200, best backend)", "", std::nullopt};
    TargetCheck cpu{"live CPU backend at 30 fps: zero drops (2-core)", "", std::nullopt};
    const std::string ran =
        l.rows.empty() ? std::string() : " (live ran at " + l.size.label() + ", " + num(l.fps, 0) + " fps)";
    if (l.cuda_device) {
      cpu.measured = "not measured: a CUDA device is present";
      // Best: clean rows first, then the lowest p99.
      const LiveRow* best = nullptr;
      for (const LiveRow& row : l.rows) {
        if (!row.error.empty()) continue;
        if (!best || (live_clean(l, row) && !live_clean(l, *best)) ||
            (live_clean(l, row) == live_clean(l, *best) && row.p99_us < best->p99_us))
          best = &row;
      }
      if (!at_640 || l.fps != 90.0) {
        gpu.measured = "not measured" + ran;
      } else if (best) {
        gpu.measured = live_measured(l, *best);
        gpu.met = live_clean(l, *best) && best->p99_us <= 1000;
      }
    } else {
      gpu.measured = "not measured: no CUDA device";
      const LiveRow* row = nullptr;
      for (const LiveRow& x : l.rows)
        if (x.backend == "cpu") row = &x;
      if (!at_640 || l.fps != 30.0) {
        cpu.measured = "not measured" + ran;
      } else if (row) {
        cpu.measured = live_measured(l, *row);
        cpu.met = live_clean(l, *row);
      }
    }
    t.push_back(gpu);
    t.push_back(cpu);
  }
  return t;
}

std::string to_markdown(const BenchReport& r) {
  std::ostringstream md;
  const MachineInfo& m = r.machine;
  md << "# depthmask bench\n\n";
  md << "- date (UTC): " << m.date_utc << ", depthmask " << m.version << " (" << m.build_type << " build)\n";
  md << "- command: `" << r.options.command_line << "`\n";
  md << "- CPU: " << m.cpu_model << ", " << m.hardware_threads << " hardware threads\n";
  md << "- GPU: " << (m.gpu_name.empty() ? "none" : m.gpu_name)
     << (m.cuda_built ? ", CUDA runtime " + (m.cuda_runtime.empty() ? "?" : m.cuda_runtime) + ", driver " +
                            (m.cuda_driver.empty() ? "none" : m.cuda_driver)
                      : ", built without CUDA")
     << (r.l2_bytes ? ", L2 " + mib(r.l2_bytes) : "") << "\n";
  if (r.options.quick) md << "- **--quick**: tiny sizes and timing windows, for tests; the numbers mean little\n";
  md << "\n";

  md << "## Ceilings\n\n";
  if (!r.gpu_skipped.empty()) {
    md << "skipped: " << r.gpu_skipped << "\n\n";
  } else {
    md << "| transfer | GB/s | how |\n|---|---:|---|\n";
    for (const Ceiling& c : r.ceilings) md << "| " << c.name << " | " << num(c.gb_per_s) << " | " << c.note << " |\n";
    md << "\n";
  }

  md << "## Kernel only (device-resident data, many launches between two CUDA events)\n\n";
  const bool any_mapped = std::any_of(r.kernel.begin(), r.kernel.end(), [](const KernelRow& k) { return k.bus_bound; });
  if (!r.gpu_skipped.empty()) {
    md << "skipped: " << r.gpu_skipped << "\n\n";
  } else if (r.kernel.empty()) {
    md << "no rows (see the problems below)\n\n";
  } else {
    md << "Bytes per frame = depth read + mask read (u8) + output write (f32). Frames rotate so the working set is "
          ">= 4x L2; % is of the D2D ceiling above. Each variant runs one frame per launch (launch_mask_variant) "
          "and batched (launch_mask_batch of min("
       << kMaxBatchedJobs << ", frames rotated) frames per launch).\n\n";
    md << "| size | depth | backend | variant | frames per launch | us/frame | GB/s | % of D2D | frames rotated | "
          "equals CPU | memory |\n";
    md << "|---|---|---|---|---:|---:|---:|---:|---:|---|---|\n";
    for (const KernelRow& k : r.kernel) {
      if (k.bus_bound) continue;
      md << "| " << k.size.label() << " | " << k.depth << " | " << k.backend << " | " << k.variant << " | " << k.batch
         << " | " << num(k.us_per_frame, 2) << " | " << num(k.gb_per_s) << " | " << num(k.pct_of_d2d) << " | "
         << k.frames_rotated << " (" << mib(k.working_set_bytes) << ") | " << (k.matches_cpu ? "yes" : "**NO**")
         << " | " << k.note << " |\n";
    }
    md << "\n";
  }
  if (r.gpu_skipped.empty() && any_mapped) {
    const Ceiling* bidir = r.ceiling("bidir_pinned");
    const Ceiling* h2d = r.ceiling("h2d_pinned");
    const Ceiling* d2h = r.ceiling("d2h_pinned");
    md << "## Kernel only on mapped host memory (zero_copy: bus-bound)\n\n";
    md << "The kernel reads depth + mask and writes its output over the bus, so the pinned transfer ceilings bound "
          "it, not D2D: bidir pinned "
       << (bidir ? num(bidir->gb_per_s) : std::string("-")) << " GB/s, h2d + d2h pinned "
       << (h2d && d2h ? num(h2d->gb_per_s + d2h->gb_per_s) : std::string("-")) << " GB/s.\n\n";
    md << "| size | depth | variant | frames per launch | us/frame | GB/s | % of bidir pinned | % of h2d + d2h pinned "
          "| "
          "frames rotated | equals CPU |\n";
    md << "|---|---|---|---:|---:|---:|---:|---:|---:|---|\n";
    for (const KernelRow& k : r.kernel) {
      if (!k.bus_bound) continue;
      md << "| " << k.size.label() << " | " << k.depth << " | " << k.variant << " | " << k.batch << " | "
         << num(k.us_per_frame, 2) << " | " << num(k.gb_per_s) << " | "
         << (k.pct_of_bidir_pinned > 0 ? num(k.pct_of_bidir_pinned) : std::string("-")) << " | "
         << (k.pct_of_h2d_plus_d2h_pinned > 0 ? num(k.pct_of_h2d_plus_d2h_pinned) : std::string("-")) << " | "
         << k.frames_rotated << " (" << mib(k.working_set_bytes) << ") | " << (k.matches_cpu ? "yes" : "**NO**")
         << " |\n";
    }
    md << "\n";
  }

  md << "## Host to host, one frame (FrameSlot::run_mask after set(): u8 mask, f32 out)\n\n";
  md << "copy: row bands chosen by size; copy (N bands): FrameSlot::set_copy_bands(N), 1 = one upload, kernel, "
        "download. cpu: oneTBB's split of the rows; cpu (N tasks): FrameSlot::set_cpu_tasks(N), exactly N bands. "
        "zero_copy reads the depth only where the mask keeps a pixel, so its time depends on the mask: "
        "zero_copy (mask keeps every pixel) is its worst case. Mask keeps: the share of the frame's pixels "
        "that pass the mask test. Bold: the fastest row; the targets take the backends as configured (no "
        "parenthesis).\n\n";
  md << "| size | depth | backend | p50 us | p99 us | mean us | frames/s | n | mask keeps % | frame "
        "|\n|---|---|---|---:|---:|---:|---:|---:|---:|---|\n";
  for (const LatencyRow& l : r.host_to_host) {
    const LatencyRow* best = best_latency(r, l.size, l.depth, false, l.frame);
    const std::string b = best == &l ? "**" : "";
    md << "| " << l.size.label() << " | " << l.depth << " | " << b << l.backend << b << " | " << b << num(l.us.p50) << b
       << " | " << num(l.us.p99) << " | " << num(l.us.mean) << " | " << num(l.fps, 0) << " | " << l.us.n << " | "
       << num(100.0 * l.mask_kept) << " | " << (l.frame.empty() ? std::string("synthetic") : l.frame) << " |\n";
  }
  for (const auto& [what, why] : r.backends_skipped) md << "\n" << what << " skipped: " << why << "\n";
  md << "\n";

  md << "## CPU loop on one thread vs cv::Mat::copyTo with mask (f32 depth, u8 mask)\n\n";
  md << "| size | mask_cpu 1 thread p50 us | copyTo p50 us | mask_cpu / copyTo |\n|---|---:|---:|---:|\n";
  for (const CpuRow& c : r.cpu_single_thread)
    md << "| " << c.size.label() << " | " << num(c.mask_cpu_us.p50) << " | " << num(c.copyto_us.p50) << " | "
       << num(c.copyto_us.p50 > 0 ? c.mask_cpu_us.p50 / c.copyto_us.p50 : NAN, 2) << " |\n";
  md << "\n";

  md << "## End to end: `run` on a generated dataset (16-bit PNG depth + 8-bit PNG mask -> float32 TIFF)\n\n";
  if (!r.end_to_end_skipped.empty()) {
    md << "skipped: " << r.end_to_end_skipped << "\n\n";
  } else {
    md << "run: `run_batch` wall time on a fresh backend (first: start-up included), then again with the same "
          "backend into a fresh folder (warm). naive: serial imread + convertTo + copyTo(mask) + imwrite. Codec "
          "bound: "
       << m.hardware_threads
       << " threads / (decode + encode per frame, one thread). The naive loop and the codec times are rates, "
          "measured on the first min(frames, "
       << kRateFrames
       << ") frames. Steady: the warm run's rate from the commit of its first quarter of frames to its last. "
          "First frame: from run_batch's call to the first frame committed (listing, manifest, buffers on first "
          "use, one frame through the pipeline).\n\n";
    md << "| size | frames | backend | run frames/s (first) | run frames/s (warm) | naive frames/s | warm / naive | "
          "decode ms | encode ms | codec bound frames/s | warm / codec bound | first / codec bound | codec on all "
          "threads frames/s | warm / codec on all threads | steady frames/s | steady / codec bound | steady / codec on "
          "all threads | first frame ms (first / warm) | dataset s "
          "|\n|---|---:|---|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|\n";
    for (const EndToEndRow& e : r.end_to_end) {
      if (!e.error.empty()) {
        md << "| " << e.size.label() << " | " << e.frames << " | " << e.backend << " | failed: " << e.error
           << " | | | | | | | | | | |\n";
        continue;
      }
      md << "| " << e.size.label() << " | " << e.frames << " | " << e.backend << " | " << num(e.run_fps) << " | "
         << num(e.warm_run_fps) << " | " << num(e.naive_fps) << " (" << e.rate_frames << ") | "
         << num(e.naive_fps > 0 ? e.warm_run_fps / e.naive_fps : NAN, 2) << " | " << num(e.decode_ms, 2) << " | "
         << num(e.encode_ms, 2) << " | " << num(e.codec_bound_fps) << " | "
         << num(e.codec_bound_fps > 0 ? e.warm_run_fps / e.codec_bound_fps : NAN, 2) << " | "
         << num(e.codec_bound_fps > 0 ? e.run_fps / e.codec_bound_fps : NAN, 2) << " | " << num(e.codec_parallel_fps)
         << " | " << num(e.codec_parallel_fps > 0 ? e.warm_run_fps / e.codec_parallel_fps : NAN, 2) << " | "
         << num(e.steady_fps) << " | " << num(e.codec_bound_fps > 0 ? e.steady_fps / e.codec_bound_fps : NAN, 2)
         << " | " << num(e.codec_parallel_fps > 0 ? e.steady_fps / e.codec_parallel_fps : NAN, 2) << " | "
         << num(e.first_frame_ms) << " / " << num(e.warm_first_frame_ms) << " | " << num(e.generate_s) << " |\n";
    }
    md << "\n";
  }

  md << "## Live: replay:// " << r.live.size.label() << " at " << num(r.live.fps, 0) << " fps for "
     << num(r.live.seconds, r.live.seconds == std::floor(r.live.seconds) ? 0 : 1) << " s\n\n";
  if (!r.live.skipped.empty()) {
    md << "skipped: " << r.live.skipped << "\n\n";
  } else {
    md << "run_live per backend on a looped " << r.live.frames
       << "-frame generated dataset (16-bit PNG depth + 8-bit PNG mask, decoded by the source): overflow "
          "drop_oldest, default frame slots. Latency: from capture (frame decoded and due) to the masked depth on "
          "the host.\n\n";
    md << "| backend | captured | processed | dropped | failed | frames/s | p50 us | p99 us | max us "
          "|\n|---|---:|---:|---:|---:|---:|---:|---:|---:|\n";
    for (const LiveRow& l : r.live.rows) {
      if (!l.error.empty()) {
        md << "| " << l.backend << " | failed: " << l.error << " | | | | | | | |\n";
        continue;
      }
      md << "| " << l.backend << " | " << l.captured << " | " << l.processed << " | " << l.dropped << " | " << l.failed
         << " | " << num(l.fps) << " | " << l.p50_us << " | " << l.p99_us << " | " << l.max_us << " |\n";
    }
    md << "\n";
  }

  md << "## Targets (issues #4 and #5; set for an H200 with 16 cores, live also for a 2-core CPU machine)\n\n| target "
        "| measured | met |\n|---|---|---|\n";
  for (const TargetCheck& t : r.targets)
    md << "| " << t.what << " | " << (t.measured.empty() ? "not measured" : t.measured) << " | "
       << (t.met ? (*t.met ? "yes" : "**no**") : "-") << " |\n";
  md << "\nTotal bench time: " << num(r.seconds) << " s\n";
  return md.str();
}

namespace {

nlohmann::json size_json(const FrameSize& s) {
  return {{"width", s.width}, {"height", s.height}, {"label", s.label()}};
}
nlohmann::json stats_json(const Stats& s) {
  return {{"n", s.n}, {"mean", s.mean}, {"p50", s.p50}, {"p99", s.p99}, {"min", s.min}, {"max", s.max}};
}

}  // namespace

std::string to_json(const BenchReport& r) {
  using nlohmann::json;
  const MachineInfo& m = r.machine;
  json j;
  j["machine"] = {{"cpu_model", m.cpu_model},       {"hardware_threads", m.hardware_threads},
                  {"gpu_name", m.gpu_name},         {"cuda_runtime", m.cuda_runtime},
                  {"cuda_driver", m.cuda_driver},   {"cuda_built", m.cuda_built},
                  {"build_type", m.build_type},     {"date_utc", m.date_utc},
                  {"depthmask_version", m.version}, {"l2_bytes", r.l2_bytes}};
  j["command_line"] = r.options.command_line;
  json sizes = json::array();
  for (const FrameSize& s : r.options.sizes) sizes.push_back(s.label());
  json backends = json::array();
  for (BackendKind k : r.options.backends) backends.push_back(std::string(to_string(k)));
  j["options"] = {{"sizes", sizes},
                  {"frames", r.options.frames},
                  {"iterations", r.options.iterations},
                  {"backends", backends},
                  {"quick", r.options.quick},
                  {"end_to_end", r.options.end_to_end},
                  {"live", r.options.live},
                  {"live_seconds", r.options.live_seconds},
                  {"live_fps", r.options.live_fps > 0 ? json(r.options.live_fps) : json(nullptr)},
                  {"device", r.options.device}};

  json ceilings = json::array();
  for (const Ceiling& c : r.ceilings)
    ceilings.push_back({{"name", c.name},
                        {"gb_per_s", c.gb_per_s},
                        {"buffer_bytes", c.buffer_bytes},
                        {"bytes_per_rep", c.bytes_per_rep},
                        {"reps", c.reps},
                        {"note", c.note}});
  j["ceilings"] = {{"skipped", r.gpu_skipped.empty() ? json(nullptr) : json(r.gpu_skipped)}, {"rows", ceilings}};

  json kernel = json::array();
  for (const KernelRow& k : r.kernel)
    kernel.push_back({{"size", size_json(k.size)},
                      {"depth", k.depth},
                      {"backend", k.backend},
                      {"variant", k.variant},
                      {"batch", k.batch},
                      {"frames_rotated", k.frames_rotated},
                      {"working_set_bytes", k.working_set_bytes},
                      {"launches", k.launches},
                      {"us_per_frame", k.us_per_frame},
                      {"gb_per_s", k.gb_per_s},
                      {"pct_of_d2d", k.bus_bound ? json(nullptr) : json(k.pct_of_d2d)},
                      {"bus_bound", k.bus_bound},
                      {"pct_of_bidir_pinned", k.bus_bound ? json(k.pct_of_bidir_pinned) : json(nullptr)},
                      {"pct_of_h2d_plus_d2h_pinned", k.bus_bound ? json(k.pct_of_h2d_plus_d2h_pinned) : json(nullptr)},
                      {"matches_cpu", k.matches_cpu},
                      {"note", k.note}});
  j["kernel"] = {{"skipped", r.gpu_skipped.empty() ? json(nullptr) : json(r.gpu_skipped)}, {"rows", kernel}};

  json h2h = json::array();
  for (const LatencyRow& l : r.host_to_host)
    h2h.push_back({{"size", size_json(l.size)},
                   {"depth", l.depth},
                   {"backend", l.backend},
                   {"us", stats_json(l.us)},
                   {"fps", l.fps},
                   {"mask_kept", l.mask_kept},
                   {"frame", l.frame.empty() ? json(nullptr) : json(l.frame)}});
  json skipped = json::array();
  for (const auto& [what, why] : r.backends_skipped) skipped.push_back({{"what", what}, {"reason", why}});
  j["host_to_host"] = {{"rows", h2h}, {"skipped", skipped}};

  json cpu = json::array();
  for (const CpuRow& c : r.cpu_single_thread)
    cpu.push_back({{"size", size_json(c.size)},
                   {"mask_cpu_us", stats_json(c.mask_cpu_us)},
                   {"copyto_us", stats_json(c.copyto_us)}});
  j["cpu_single_thread"] = {{"rows", cpu}};

  json e2e = json::array();
  for (const EndToEndRow& e : r.end_to_end)
    e2e.push_back(
        {{"size", size_json(e.size)},
         {"frames", e.frames},
         {"backend", e.backend},
         {"generate_s", e.generate_s},
         {"run_s", e.run_s},
         {"run_fps", e.run_fps},
         {"warm_run_s", e.warm_run_s},
         {"warm_run_fps", e.warm_run_fps},
         {"rate_frames", e.rate_frames},
         {"naive_fps", e.naive_fps},
         {"decode_ms", e.decode_ms},
         {"encode_ms", e.encode_ms},
         {"threads", e.threads},
         {"codec_bound_fps", e.codec_bound_fps},
         {"codec_parallel_fps", e.codec_parallel_fps},
         {"steady_fps", e.steady_fps},
         {"first_frame_ms", e.first_frame_ms},
         {"warm_first_frame_ms", e.warm_first_frame_ms},
         {"warm_run_vs_naive", e.naive_fps > 0 ? json(e.warm_run_fps / e.naive_fps) : json(nullptr)},
         {"warm_run_vs_codec_bound", e.codec_bound_fps > 0 ? json(e.warm_run_fps / e.codec_bound_fps) : json(nullptr)},
         {"run_vs_naive", e.naive_fps > 0 ? json(e.run_fps / e.naive_fps) : json(nullptr)},
         {"run_vs_codec_bound", e.codec_bound_fps > 0 ? json(e.run_fps / e.codec_bound_fps) : json(nullptr)},
         {"error", e.error.empty() ? json(nullptr) : json(e.error)}});
  j["end_to_end"] = {{"skipped", r.end_to_end_skipped.empty() ? json(nullptr) : json(r.end_to_end_skipped)},
                     {"rows", e2e}};

  json live = json::array();
  for (const LiveRow& l : r.live.rows)
    live.push_back({{"backend", l.backend},
                    {"captured", l.captured},
                    {"processed", l.processed},
                    {"dropped", l.dropped},
                    {"failed", l.failed},
                    {"seconds", l.seconds},
                    {"fps", l.fps},
                    {"latency_us", {{"p50", l.p50_us}, {"p99", l.p99_us}, {"max", l.max_us}}},
                    {"error", l.error.empty() ? json(nullptr) : json(l.error)}});
  j["live"] = {{"skipped", r.live.skipped.empty() ? json(nullptr) : json(r.live.skipped)},
               {"size", size_json(r.live.size)},
               {"source_fps", r.live.fps},
               {"seconds", r.live.seconds},
               {"frames", r.live.frames},
               {"cuda_device", r.live.cuda_device},
               {"rows", live}};

  json targets = json::array();
  for (const TargetCheck& t : r.targets)
    targets.push_back({{"target", t.what}, {"measured", t.measured}, {"met", t.met ? json(*t.met) : json(nullptr)}});
  j["targets"] = targets;
  j["seconds"] = r.seconds;
  return j.dump(2) + "\n";
}

// ---- the chart ----

namespace {

struct Series {
  std::string name;
  std::vector<double> values;  // one per group; NaN: none
};

const cv::Scalar kInk(40, 40, 40), kGrid(215, 215, 215);
const cv::Scalar kPalette[] = {{60, 60, 60},    {180, 119, 31}, {14, 127, 255},  {44, 160, 44},   {40, 39, 214},
                               {189, 103, 148}, {75, 86, 140},  {194, 119, 227}, {127, 127, 127}, {34, 189, 188}};

void text(cv::Mat& img, const std::string& s, cv::Point p, double scale, int thick = 1, const cv::Scalar& c = kInk) {
  cv::putText(img, s, p, cv::FONT_HERSHEY_SIMPLEX, scale, c, thick, cv::LINE_AA);
}
int text_width(const std::string& s, double scale, int thick = 1) {
  int base = 0;
  return cv::getTextSize(s, cv::FONT_HERSHEY_SIMPLEX, scale, thick, &base).width;
}
std::string short_num(double v) {
  if (v >= 100) return num(v, 0);
  if (v >= 10) return num(v, 1);
  return num(v, 2);
}

// Grouped bars in `area`: a title, a legend, one group per label, log or linear value axis.
void bar_panel(cv::Mat& img, cv::Rect area, const std::string& title, const std::vector<std::string>& groups,
               const std::vector<Series>& series, bool log_scale, const std::string& empty_note) {
  text(img, title, {area.x + 10, area.y + 28}, 0.7, 2);
  double vmax = 0, vmin = INFINITY;
  for (const Series& s : series)
    for (double v : s.values)
      if (std::isfinite(v) && v > 0) {
        vmax = std::max(vmax, v);
        vmin = std::min(vmin, v);
      }
  if (series.empty() || groups.empty() || vmax <= 0) {
    text(img, empty_note.empty() ? "no data" : empty_note, {area.x + 30, area.y + area.height / 2}, 0.65, 1);
    return;
  }
  // Legend: wraps over as many lines as needed.
  int lx = area.x + 10, ly = area.y + 52;
  for (size_t i = 0; i < series.size(); ++i) {
    const int w = 26 + text_width(series[i].name, 0.5) + 18;
    if (lx + w > area.x + area.width - 10) {
      lx = area.x + 10;
      ly += 22;
    }
    cv::rectangle(img, {lx, ly - 12, 16, 14}, kPalette[i % std::size(kPalette)], cv::FILLED);
    text(img, series[i].name, {lx + 22, ly}, 0.5);
    lx += w;
  }
  const cv::Rect plot(area.x + 80, ly + 30, area.width - 100, area.y + area.height - (ly + 30) - 40);
  double lo = 0, hi = vmax * 1.15;
  if (log_scale) {
    lo = std::pow(10.0, std::floor(std::log10(vmin)));
    hi = std::pow(10.0, std::ceil(std::log10(vmax * 1.5)));
  }
  auto y_of = [&](double v) {
    const double f =
        log_scale ? (std::log10(v) - std::log10(lo)) / (std::log10(hi) - std::log10(lo)) : (v - lo) / (hi - lo);
    return plot.y + plot.height - static_cast<int>(std::lround(std::clamp(f, 0.0, 1.0) * plot.height));
  };
  // Axis ticks: decades for log, five steps for linear.
  std::vector<double> ticks;
  if (log_scale)
    for (double t = lo; t <= hi * 1.0001; t *= 10) ticks.push_back(t);
  else
    for (int i = 0; i <= 5; ++i) ticks.push_back(lo + (hi - lo) * i / 5);
  for (double t : ticks) {
    const int y = y_of(t);
    cv::line(img, {plot.x, y}, {plot.x + plot.width, y}, kGrid, 1);
    const std::string s = short_num(t);
    text(img, s, {plot.x - 8 - text_width(s, 0.45), y + 5}, 0.45);
  }
  cv::line(img, {plot.x, plot.y + plot.height}, {plot.x + plot.width, plot.y + plot.height}, kInk, 1);
  const int gw = plot.width / static_cast<int>(groups.size());
  const int bw = std::clamp(static_cast<int>(gw * 0.8) / static_cast<int>(series.size()), 4, 140);
  for (size_t g = 0; g < groups.size(); ++g) {
    const int gx = plot.x + static_cast<int>(g) * gw + (gw - bw * static_cast<int>(series.size())) / 2;
    for (size_t i = 0; i < series.size(); ++i) {
      const double v = g < series[i].values.size() ? series[i].values[g] : NAN;
      if (!std::isfinite(v) || v <= 0) continue;
      const int x = gx + static_cast<int>(i) * bw, y = y_of(v);
      cv::rectangle(img, {x + 1, y}, {x + bw - 2, plot.y + plot.height}, kPalette[i % std::size(kPalette)], cv::FILLED);
      const std::string s = short_num(v);
      const double sc = 0.38;
      if (text_width(s, sc) <= bw + 6) text(img, s, {x + (bw - text_width(s, sc)) / 2, y - 4}, sc);
    }
    const std::string& label = groups[g];
    text(img, label,
         {plot.x + static_cast<int>(g) * gw + (gw - text_width(label, 0.55)) / 2, plot.y + plot.height + 24}, 0.55);
  }
}

std::vector<FrameSize> sizes_of(const BenchReport& r) { return r.options.sizes; }

}  // namespace

cv::Mat render_chart(const BenchReport& r) {
  const int W = 1500, H = 1500;
  cv::Mat img(H, W, CV_8UC3, cv::Scalar(255, 255, 255));
  const std::vector<FrameSize> sizes = sizes_of(r);
  std::vector<std::string> groups;
  for (const FrameSize& s : sizes) groups.push_back(s.label());
  auto index_of = [&](const FrameSize& s) {
    for (size_t i = 0; i < sizes.size(); ++i)
      if (same(sizes[i], s)) return static_cast<int>(i);
    return -1;
  };
  const std::string head = "depthmask bench  " + r.machine.date_utc + "  " +
                           (r.machine.gpu_name.empty() ? std::string("no GPU") : r.machine.gpu_name) + "  " +
                           r.machine.cpu_model + " (" + std::to_string(r.machine.hardware_threads) + " threads)";
  text(img, head, {20, 30}, 0.6, 1);

  // 1: kernel GB/s (f32 depth): the best variant per backend and launch mode against its ceiling.
  // Log scale: mapped memory runs at bus speed, two orders of magnitude below D2D.
  {
    std::vector<Series> series;
    if (const Ceiling* d2d = r.ceiling("d2d"))
      series.push_back({"D2D copy ceiling", std::vector<double>(sizes.size(), d2d->gb_per_s)});
    std::map<std::string, size_t> at;
    auto best = [&](const std::string& name, const KernelRow& k) {
      if (!at.count(name)) {
        at[name] = series.size();
        series.push_back({name, std::vector<double>(sizes.size(), NAN)});
      }
      const int i = index_of(k.size);
      if (i < 0) return;
      double& v = series[at[name]].values[static_cast<size_t>(i)];
      if (!std::isfinite(v) || k.gb_per_s > v) v = k.gb_per_s;
    };
    for (const KernelRow& k : r.kernel)
      if (k.depth == "f32" && !k.bus_bound)
        best(k.backend + (k.batch > 1 ? " batched" : " 1 frame/launch") +
                 (k.backend == "managed" ? "" : " (best variant)"),
             k);
    if (const Ceiling* bidir = r.ceiling("bidir_pinned");
        bidir && std::any_of(r.kernel.begin(), r.kernel.end(), [](const KernelRow& k) { return k.bus_bound; }))
      series.push_back({"bidir pinned ceiling", std::vector<double>(sizes.size(), bidir->gb_per_s)});
    for (const KernelRow& k : r.kernel)
      if (k.depth == "f32" && k.bus_bound)
        best(k.backend + (k.batch > 1 ? " batched" : " 1 frame/launch") + " (best variant, bus-bound)", k);
    bar_panel(img, {0, 45, W, 480}, "Kernel only, f32 depth + u8 mask -> f32 (GB/s, log scale)", groups, series, true,
              r.gpu_skipped.empty() ? "no kernel rows" : "GPU skipped: " + r.gpu_skipped);
  }
  // 2: host-to-host p50 latency, f32 depth, per backend.
  {
    std::vector<Series> series;
    std::map<std::string, size_t> at;
    for (const LatencyRow& l : r.host_to_host) {
      if (l.depth != "f32" || !l.frame.empty()) continue;  // the synthetic frames, one per size
      if (!at.count(l.backend)) {
        at[l.backend] = series.size();
        series.push_back({l.backend, std::vector<double>(sizes.size(), NAN)});
      }
      if (const int i = index_of(l.size); i >= 0) series[at[l.backend]].values[static_cast<size_t>(i)] = l.us.p50;
    }
    bar_panel(img, {0, 530, W, 480}, "Host to host, one frame, f32 depth: p50 latency (us, log scale; lower is better)",
              groups, series, true, "no host-to-host rows");
  }
  // 3: end to end frames/s.
  {
    std::vector<Series> series{{"depthmask run (first, with start-up)", std::vector<double>(sizes.size(), NAN)},
                               {"depthmask run (warm)", std::vector<double>(sizes.size(), NAN)},
                               {"naive OpenCV loop", std::vector<double>(sizes.size(), NAN)},
                               {"codec bound", std::vector<double>(sizes.size(), NAN)}};
    for (const EndToEndRow& e : r.end_to_end) {
      const int i = index_of(e.size);
      if (i < 0 || !e.error.empty()) continue;
      series[0].values[static_cast<size_t>(i)] = e.run_fps;
      series[1].values[static_cast<size_t>(i)] = e.warm_run_fps;
      series[2].values[static_cast<size_t>(i)] = e.naive_fps;
      series[3].values[static_cast<size_t>(i)] = e.codec_bound_fps;
    }
    bar_panel(img, {0, 1015, W, 480}, "End to end: frames/s (log scale; higher is better)", groups, series, true,
              r.end_to_end_skipped.empty() ? "no end-to-end rows" : "skipped: " + r.end_to_end_skipped);
  }
  return img;
}

void write_report(const BenchReport& r, const std::filesystem::path& dir) {
  ensure_output_dir(dir);
  const std::string md = to_markdown(r), js = to_json(r);
  std::vector<uint8_t> png;
  DM_EXPECT(cv::imencode(".png", render_chart(r), png), OutputError, "cannot encode the bench chart as PNG");
  write_file_atomic(dir / "bench.md", md.data(), md.size(), false);
  write_file_atomic(dir / "bench.json", js.data(), js.size(), false);
  write_file_atomic(dir / "bench.png", png.data(), png.size(), false);
}

}  // namespace depthmask::bench
