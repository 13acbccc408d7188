// `depthmask bench` (issue #4): the measurements behind the performance targets, in one run.
//
// Ceilings (device-to-device copy, pinned and pageable host<->device), the masking kernel alone on
// device-resident data per backend and per kernel variant, one frame host to host through FrameSlot
// per backend, the CPU loop on one thread against cv::Mat::copyTo, `run` end to end on a generated
// dataset against a naive serial OpenCV loop and the codec bound, and live mode (issue #5): run_live on
// a paced replay:// of a generated dataset per backend. GPU parts report why they were
// skipped on machines (or builds) without a usable GPU. Knows nothing of the command line: the CLI
// fills BenchOptions and prints what to_markdown() gives.
#pragma once

#include <opencv2/core.hpp>

#include <cstddef>
#include <filesystem>
#include <functional>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "depthmask/config.h"

namespace depthmask::bench {

struct FrameSize {
  int width = 0, height = 0;
  std::string label() const;  // "640x480"
  size_t pixels() const { return static_cast<size_t>(width) * static_cast<size_t>(height); }
};
// "640x480,1920x1080": throws ConfigError naming the bad item (sizes 1..16384 each).
std::vector<FrameSize> parse_sizes(const std::string& list);
// "cpu,copy": throws ConfigError for an unknown word or `auto` (the bench measures concrete backends).
std::vector<BackendKind> parse_backends(const std::string& list);

struct BenchOptions {
  std::vector<FrameSize> sizes{{640, 480}, {1280, 720}, {1920, 1080}, {3840, 2160}};
  int frames = 0;        // end-to-end dataset frames per size; 0: default_frames(size)
  int iterations = 200;  // timed host-to-host repetitions per row (also capped by time)
  std::vector<BackendKind> backends{BackendKind::Cpu, BackendKind::Copy, BackendKind::ZeroCopy, BackendKind::Managed};
  bool quick = false;  // short timing windows and small working sets: for tests, numbers not meaningful
  bool end_to_end = true;
  // Live (issue #5): run_live per backend on replay://DATASET?fps=F&loop=1 for live_seconds each.
  bool live = true;
  FrameSize live_size{640, 480};
  int live_frames = 90;       // frames in the generated dataset the replay loops over
  double live_seconds = 5.0;  // per backend
  double live_fps = 0;        // 0: default_live_fps() (the two targets)
  int device = 0;
  // A recorded frame (16-bit depth PNG + 8-bit mask PNG of one size) timed host to host beside the
  // synthetic ones (--real-frame DEPTH,MASK): masks from real scenes keep what they keep.
  std::string real_depth, real_mask;
  std::string command_line;  // recorded in the report as given
};
// What --quick means: two tiny sizes, 4 frames, 20 iterations, live 1 s at 160x120 over 8 frames
// (sizes/frames/iterations/live seconds given explicitly still win in the CLI).
BenchOptions quick_options();

// The live section's source rate when --live-fps is not given: 90 with a CUDA device (the H200
// target), 30 without (the 2-core CPU target).
inline double default_live_fps(bool cuda_device) { return cuda_device ? 90.0 : 30.0; }

// ---- statistics and arithmetic (unit-tested) ----

// The p-th percentile (0..100) of `samples` by linear interpolation between closest ranks (numpy's
// default). NaN for no samples.
double percentile(std::vector<double> samples, double p);

struct Stats {
  size_t n = 0;
  double mean = 0, p50 = 0, p99 = 0, min = 0, max = 0;
};
Stats summarize(const std::vector<double>& samples);

// The codec bound: `threads` cores each decoding and encoding whole frames, nothing else:
// threads / (decode + encode seconds per frame). 0 when the times are not positive.
double codec_bound_fps(unsigned threads, double decode_s, double encode_s);

// How many frames of `frame_bytes` to rotate among so the working set is at least `factor` x the
// L2 cache (at least `min_frames`; a multiple of `multiple_of`).
size_t rotation_frames(size_t frame_bytes, size_t l2_bytes, double factor, size_t min_frames = 2,
                       size_t multiple_of = 1);

// How the kernel-only rows rotate over device-resident frames: enough frames of `frame_bytes` that
// the working set is >= factor x L2 (at least 2, at most max_bytes worth but never fewer than one
// launch), and as many frames per batched launch as min(max_per_launch, that count); `frames` is a
// multiple of `per_launch`, so one-frame and batched launches rotate over the same frames.
struct KernelRotation {
  size_t frames = 0;
  int per_launch = 1;
};
KernelRotation kernel_rotation(size_t frame_bytes, size_t l2_bytes, double factor, size_t max_bytes,
                               int max_per_launch);

// Default end-to-end frame count: 256 at 640x480, falling with the square root of the pixel count
// (148 at 1280x720, 99 at 1920x1080, 49 at 3840x2160), clamped to 48..256: enough frames that the
// run's start-up (threads, pinned buffers on first use) does not dominate its time; and at least 64
// per thread (start-up, the pipeline's fill and drain), as long as a run's float output stays within
// 8 GiB (16 threads: 1024 frames up to 1080p, 258 at 4K).
int default_frames(const FrameSize& s, unsigned threads);
// The naive loop and the one-thread codec times are rates: measured on this many of the frames.
constexpr int kRateFrames = 24;

// ---- the report ----

struct MachineInfo {
  std::string cpu_model;
  unsigned hardware_threads = 0;
  std::string gpu_name;                   // empty: none
  std::string cuda_runtime, cuda_driver;  // "13.0"; empty when not built with CUDA / no driver
  bool cuda_built = false;
  std::string build_type;
  std::string date_utc;  // ISO 8601
  std::string version;
};

// One bandwidth ceiling. bytes counts what moved per repetition (D2D: read + write = 2x the size).
struct Ceiling {
  std::string name;     // d2d, h2d_pinned, d2h_pinned, bidir_pinned, h2d_pageable, d2h_pageable, bidir_pageable
  double gb_per_s = 0;  // 1e9 bytes per second
  size_t buffer_bytes = 0;
  size_t bytes_per_rep = 0;
  int reps = 0;
  std::string note;
};

// The kernel alone on data already where the backend's kernel reads it.
struct KernelRow {
  FrameSize size;
  std::string depth;    // "f32" | "u16" (mask is always u8, out f32)
  std::string backend;  // copy | managed | zero_copy
  std::string variant;  // to_string(variant), or "launch_mask" (the default variant, managed)
  int batch = 1;        // frames per launch (1, or launch_mask_batch of this many)
  size_t frames_rotated = 0;
  size_t working_set_bytes = 0;
  long long launches = 0;  // frames processed in the best timed repetition
  double us_per_frame = 0;
  double gb_per_s = 0;    // (depth read + mask read + out write) bytes per second, 1e9
  double pct_of_d2d = 0;  // of the D2D ceiling measured in the same run (0 when unknown or bus-bound)
  // zero_copy: the kernel reads depth + mask and writes out over the bus, so the pinned transfer
  // ceilings bound it: % of bidir_pinned and of h2d_pinned + d2h_pinned (0 when unknown).
  bool bus_bound = false;
  double pct_of_bidir_pinned = 0;
  double pct_of_h2d_plus_d2h_pinned = 0;
  bool matches_cpu = false;  // the first frame's output equals mask_cpu's bit for bit
  std::string note;
};

// One frame host to host: FrameSlot::run_mask() after set() (data in the backend's host buffers).
struct LatencyRow {
  FrameSize size;
  std::string depth;
  std::string backend;
  Stats us;              // microseconds
  double fps = 0;        // 1e6 / mean
  double mask_kept = 0;  // fraction of the frame's pixels that pass the mask test
  std::string frame;     // empty: the synthetic frame; else the recorded frame's mask file name
};

// The CPU loop on one thread against the OpenCV one-liner, float depth + 8-bit mask -> float out.
struct CpuRow {
  FrameSize size;
  Stats mask_cpu_us;  // mask_cpu() with oneTBB limited to one thread
  Stats copyto_us;    // depth.copyTo(out, mask), out preallocated
};

struct EndToEndRow {
  FrameSize size;
  int frames = 0;  // in the dataset and in each run
  std::string backend;
  double generate_s = 0;  // writing the dataset (parallel over frames)
  // The first run_batch on a fresh backend: wall time including start-up (threads, buffers and
  // pinned memory allocated on first use).
  double run_s = 0, run_fps = 0;
  // A second run_batch with the same backend object into a fresh output folder: CUDA, the thread pool
  // and the page cache warm (its own frame buffers are still allocated anew).
  double warm_run_s = 0, warm_run_fps = 0;
  // The warm run's rate from the commit of its first quarter of frames to its last: start-up (pool
  // allocation) and the pipeline's fill left out.
  double steady_fps = 0;
  // From run_batch's call to the first frame committed (listing, manifest, the frame pool's buffers
  // on first use, one frame through the pipeline), first and warm run: what start-up costs.
  double first_frame_ms = 0, warm_first_frame_ms = 0;
  int rate_frames = 0;  // frames the naive loop and the codec times ran on: min(frames, kRateFrames)
  double naive_fps = 0;
  double decode_ms = 0;  // per frame, depth + mask, one thread
  double encode_ms = 0;  // per frame, float32 TIFF, one thread
  unsigned threads = 0;
  double codec_bound_fps = 0;
  // The codec alone on every thread at once (decode + mask + encode in memory, oneTBB over frames):
  // what the cores deliver together, which the codec bound (threads x one thread's rate) assumes.
  double codec_parallel_fps = 0;
  std::string error;  // non-empty: the row failed (e.g. frames failed in run)
};

// One backend's live run: LiveSummary's counts and latency (capture to masked depth on the host).
struct LiveRow {
  std::string backend;
  unsigned long long captured = 0, processed = 0, dropped = 0, failed = 0;  // dropped: drop_oldest overflow
  double seconds = 0;  // the run's wall time (the duration, then the frames in flight finished)
  double fps = 0;      // processed / seconds
  unsigned long long p50_us = 0, p99_us = 0, max_us = 0;
  std::string error;  // non-empty: run_live threw; the counts are zero
};

struct LiveSection {
  FrameSize size;
  double fps = 0;            // the replay's pace
  double seconds = 0;        // per backend, as asked
  int frames = 0;            // in the looped dataset
  bool cuda_device = false;  // decides which target applies
  std::string skipped;       // non-empty: why the section did not run
  std::vector<LiveRow> rows;
};

// A performance target of the issue and whether this run meets it (nullopt: not measured here).
struct TargetCheck {
  std::string what;
  std::string measured;
  std::optional<bool> met;
};

struct BenchReport {
  MachineInfo machine;
  BenchOptions options;
  std::string gpu_skipped;  // non-empty: why the GPU sections did not run
  size_t l2_bytes = 0;
  std::vector<Ceiling> ceilings;
  std::vector<KernelRow> kernel;
  std::vector<LatencyRow> host_to_host;
  std::vector<std::pair<std::string, std::string>> backends_skipped;  // backend, reason
  std::vector<CpuRow> cpu_single_thread;
  std::vector<EndToEndRow> end_to_end;
  std::string end_to_end_skipped;
  LiveSection live;
  std::vector<TargetCheck> targets;
  double seconds = 0;

  const Ceiling* ceiling(std::string_view name) const;
};

// Progress lines ("kernel 1920x1080 f32 copy ...") as the bench goes.
using ProgressFn = std::function<void(const std::string&)>;

// The report so far, after each section (the caller may write it: a long bench that is stopped or
// runs out of time keeps what it measured).
using CheckpointFn = std::function<void(const BenchReport&)>;

// Runs every measurement the options ask for. Throws ConfigError for bad options; GPU problems
// become "skipped" sections, a failed end-to-end size becomes a row with `error`.
BenchReport run_bench(const BenchOptions& options, const ProgressFn& progress = {},
                      const CheckpointFn& checkpoint = {});

// The targets checked against a report (filled into BenchReport::targets by run_bench).
std::vector<TargetCheck> check_targets(const BenchReport& r);

std::string to_markdown(const BenchReport& r);
std::string to_json(const BenchReport& r);
// Bar charts (BGR, 8-bit): kernel GB/s against the D2D ceiling, host-to-host p50 latency, end-to-end
// frames/s against the naive loop and the codec bound.
cv::Mat render_chart(const BenchReport& r);
// Writes <dir>/bench.md, bench.json and bench.png, each atomically. Throws OutputError.
void write_report(const BenchReport& r, const std::filesystem::path& dir);

}  // namespace depthmask::bench
