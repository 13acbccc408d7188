// `depthmask bench`: the host-side measurements (one frame host to host per backend, the CPU loop on
// one thread, `run` end to end against a naive OpenCV loop and the codec bound) and the order of the
// whole run. The GPU-only parts are in gpu_bench_cuda.cpp.
#include <tbb/global_control.h>

#include <tbb/parallel_for.h>
#include <opencv2/core.hpp>
#include <opencv2/imgcodecs.hpp>

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <ctime>
#include <fstream>
#include <iterator>
#include <sstream>
#include <thread>

#include "depthmask/bench/bench.h"
#include "depthmask/bench/scratch_dir.h"
#include "depthmask/encoders.h"
#include "depthmask/errors.h"
#include "depthmask/frame.h"
#include "depthmask/live.h"
#include "depthmask/live_runner.h"
#include "depthmask/pipeline.h"
#include "depthmask/synth.h"
#include "depthmask/version.h"
#include "gpu_bench.h"

#ifndef DEPTHMASK_BUILD_TYPE
#define DEPTHMASK_BUILD_TYPE "unknown"
#endif

namespace fs = std::filesystem;

namespace depthmask::bench {

namespace detail {

MaskJob host_job(const cv::Mat& depth, const cv::Mat& mask, cv::Mat& out) {
  out.create(depth.rows, depth.cols, CV_32FC1);
  MaskJob j;
  j.depth = {depth.data, depth.step[0]};
  j.depth_type = depth.type() == CV_16UC1 ? DepthType::U16 : DepthType::F32;
  j.mask = {mask.data, mask.step[0]};
  j.mask_type = mask.type() == CV_16UC1 ? MaskType::U16 : MaskType::U8;
  j.out = {out.ptr<float>(), out.step[0]};
  j.rows = depth.rows;
  j.cols = depth.cols;
  return j;
}

cv::Mat reference_output(const cv::Mat& depth, const cv::Mat& mask, const MaskParams& params) {
  cv::Mat out;
  mask_cpu(host_job(depth, mask, out), params);
  return out;
}

}  // namespace detail

namespace {

using detail::SizeImages;
using Clock = std::chrono::steady_clock;

double seconds_since(Clock::time_point t0) { return std::chrono::duration<double>(Clock::now() - t0).count(); }

// 90, 2.5: as a person writes a rate or a duration.
std::string num_text(double v) {
  std::ostringstream os;
  os << v;
  return os.str();
}

// OpenCV's own thread count, restored on scope exit.
class CvThreads {
 public:
  explicit CvThreads(int n) : saved_(cv::getNumThreads()) { cv::setNumThreads(n); }
  ~CvThreads() { cv::setNumThreads(saved_); }
  CvThreads(const CvThreads&) = delete;
  CvThreads& operator=(const CvThreads&) = delete;

 private:
  int saved_;
};

std::string cpu_model() {
  std::ifstream in("/proc/cpuinfo");
  std::string line;
  while (std::getline(in, line)) {
    if (line.rfind("model name", 0) == 0 || line.rfind("Model", 0) == 0) {
      const size_t colon = line.find(':');
      if (colon != std::string::npos) {
        std::string v = line.substr(colon + 1);
        v.erase(0, v.find_first_not_of(" \t"));
        if (!v.empty()) return v;
      }
    }
  }
  return "unknown";
}

std::string utc_now() {
  const std::time_t t = std::time(nullptr);
  std::tm tm{};
  gmtime_r(&t, &tm);
  char buf[32];
  std::strftime(buf, sizeof buf, "%Y-%m-%dT%H:%M:%SZ", &tm);
  return buf;
}

MachineInfo machine_info(const PlatformInfo& p, int device) {
  MachineInfo m;
  m.cpu_model = cpu_model();
  m.hardware_threads = std::max(1u, std::thread::hardware_concurrency());
  m.cuda_built = p.cuda_built;
  if (p.cuda_built && p.runtime_version > 0) m.cuda_runtime = cuda_version_string(p.runtime_version);
  if (p.driver_version > 0) m.cuda_driver = cuda_version_string(p.driver_version);
  if (device >= 0 && static_cast<size_t>(device) < p.devices.size())
    m.gpu_name = p.devices[static_cast<size_t>(device)].name;
  m.build_type = DEPTHMASK_BUILD_TYPE;
  m.date_utc = utc_now();
  m.version = DEPTHMASK_VERSION;
  return m;
}

SizeImages make_images(const FrameSize& s) {
  // Frame 3 of the synthetic sequence: every object in view; their masks cover about 5 % of the pixels
  // (the APC captures' ground-truth masks cover 16-20 %: --real-frame times one of those).
  const SyntheticFrame f = render_synthetic_frame(3, s.width, s.height);
  SizeImages im;
  im.size = s;
  im.depth_u16 = f.depth_mm;
  f.depth_mm.convertTo(im.depth_f32, CV_32FC1, 0.001);
  im.mask = f.mask;
  return im;
}

// The fraction of an 8-bit mask's pixels that pass the mask test.
double mask_kept_fraction(const cv::Mat& mask, const MaskParams& p) {
  size_t kept = 0;
  for (int y = 0; y < mask.rows; ++y) {
    const uint8_t* m = mask.ptr<uint8_t>(y);
    for (int x = 0; x < mask.cols; ++x) kept += mask_keeps(m[x], p) ? 1 : 0;
  }
  return mask.total() > 0 ? static_cast<double>(kept) / static_cast<double>(mask.total()) : 0.0;
}

// One file of --real-frame, read as the batch loader reads (ImageReader: its bounds, decoders and checks).
cv::Mat read_real_image(const std::string& path, ImageRole role) {
  ImageReader reader(input_limits(Config{}));
  cv::Mat m;
  try {
    reader.read(path, role, m);
  } catch (const InputError& e) {
    throw InputError(std::string("--real-frame: ") + e.what());
  }
  return m;
}

// The recorded frame of --real-frame: 16-bit depth (also as float metres, x 0.001) and an 8-bit mask
// of the same size.
SizeImages load_real_frame(const std::string& depth_path, const std::string& mask_path) {
  const cv::Mat d = read_real_image(depth_path, ImageRole::Depth);
  DM_EXPECT(d.type() == CV_16UC1, InputError,
            "--real-frame: " << depth_path << " is not a 16-bit single-channel depth image");
  const cv::Mat m = read_real_image(mask_path, ImageRole::Mask);
  DM_EXPECT(m.type() == CV_8UC1, InputError, "--real-frame: " << mask_path << " is not an 8-bit single-channel mask");
  DM_EXPECT(m.size() == d.size(), InputError,
            "--real-frame: the mask " << mask_path << " is " << m.cols << "x" << m.rows << ", the depth " << depth_path
                                      << " " << d.cols << "x" << d.rows);
  SizeImages im;
  im.size = FrameSize{d.cols, d.rows};
  im.depth_u16 = d;
  d.convertTo(im.depth_f32, CV_32FC1, 0.001);
  im.mask = m;
  im.frame = fs::path(mask_path).filename().string();
  return im;
}

// The configuration every section masks with: the synthetic dataset's own (depth.max 2 m drops the
// wall), as `depthmask synth` writes it.
Config bench_config() {
  Config c;
  c.depth.max = 2.0;
  return c;
}

// Repeats `once` (which returns the microseconds to record) `warmup` times untimed, then up to
// `iterations` times, stopping early after `cap_s` seconds once it has 10 samples.
std::vector<double> sample_us(int warmup, int iterations, double cap_s, const std::function<double()>& once) {
  for (int i = 0; i < warmup; ++i) (void)once();
  std::vector<double> us;
  us.reserve(static_cast<size_t>(iterations));
  const auto t0 = Clock::now();
  for (int i = 0; i < iterations; ++i) {
    us.push_back(once());
    if (us.size() >= 10 && seconds_since(t0) > cap_s) break;
  }
  return us;
}

template <class F>
double time_us(F&& f) {
  const auto t0 = Clock::now();
  f();
  return seconds_since(t0) * 1e6;
}

// The backend `kind` on the bench's device, or null with `why` when this machine cannot make it.
std::unique_ptr<MemoryBackend> try_backend(BackendKind kind, const BenchOptions& o, const PlatformInfo& platform,
                                           std::string& why) {
  try {
    return make_backend(choose_backend(BackendConfig{kind, o.device}, platform), platform);
  } catch (const Error& e) {
    why = e.what();
    return nullptr;
  }
}

void host_to_host(const BenchOptions& o, const PlatformInfo& platform, const std::vector<SizeImages>& images,
                  const MaskParams& params, const ProgressFn& say, BenchReport& r) {
  const int warmup = std::max(3, o.iterations / 10);
  const double cap = o.quick ? 0.5 : 5.0;
  for (BackendKind kind : o.backends) {
    const std::string name(to_string(kind));
    std::string why;
    const std::unique_ptr<MemoryBackend> be = try_backend(kind, o, platform, why);
    if (!be) {
      r.backends_skipped.emplace_back(name, why);
      continue;
    }
    try {
      for (const SizeImages& im : images) {
        // The copy backend with its row bands chosen by size (0), then a sweep: 1 (one upload, kernel,
        // download) to 16 bands whose uploads, kernels and downloads overlap. The cpu backend with
        // oneTBB's split (0), then exactly 1 to 32 bands (how many cores a frame of this size is worth).
        // zero_copy reads depth only where the mask keeps a pixel (mask_variants.h kept_only), so its
        // time depends on the mask: also timed (-1) with a mask that keeps every pixel, its worst case.
        const std::vector<int> band_choices = kind == BackendKind::Copy       ? std::vector<int>{0, 1, 2, 4, 8, 16}
                                              : kind == BackendKind::Cpu      ? std::vector<int>{0, 1, 2, 4, 8, 16, 32}
                                              : kind == BackendKind::ZeroCopy ? std::vector<int>{0, -1}
                                                                              : std::vector<int>{0};
        const char* unit = kind == BackendKind::Copy ? " band" : " task";
        for (const int bands : band_choices)
          for (bool f32 : {true, false}) {
            const std::string label = bands == 0 ? name
                                      : bands < 0
                                          ? name + " (mask keeps every pixel)"
                                          : name + " (" + std::to_string(bands) + unit + (bands == 1 ? ")" : "s)");
            say("host to host " + im.size.label() + " " + (f32 ? "f32" : "u16") + " " + label);
            FrameSlot slot(*be);
            slot.set_copy_bands(kind == BackendKind::Copy ? bands : 0);
            slot.set_cpu_tasks(kind == BackendKind::Cpu ? bands : 0);
            const cv::Mat& depth = im.depth(f32);
            const cv::Mat mask = bands < 0 ? cv::Mat(im.mask.size(), CV_8UC1, cv::Scalar(255)) : im.mask;
            // set() puts the frame in the backend's host buffers, as the loader leaves it; only
            // run_mask() is timed (upload, kernel or CPU loop, download, wait).
            const std::vector<double> us = sample_us(warmup, o.iterations, cap, [&] {
              slot.set(depth, mask);
              return time_us([&] { slot.run_mask(params); });
            });
            LatencyRow row;
            row.size = im.size;
            row.depth = f32 ? "f32" : "u16";
            row.backend = label;
            row.us = summarize(us);
            row.fps = row.us.mean > 0 ? 1e6 / row.us.mean : 0;
            row.mask_kept = mask_kept_fraction(mask, params);
            row.frame = im.frame;
            r.host_to_host.push_back(row);
          }
      }
    } catch (const Error& e) {
      r.backends_skipped.emplace_back(name, std::string("failed while measuring: ") + e.what());
    }
  }
}

void cpu_single_thread(const BenchOptions& o, const std::vector<SizeImages>& images, const MaskParams& params,
                       const ProgressFn& say, BenchReport& r) {
  const int warmup = std::max(3, o.iterations / 10);
  const double cap = o.quick ? 0.5 : 3.0;
  for (const SizeImages& im : images) {
    say("cpu one thread " + im.size.label());
    CpuRow row;
    row.size = im.size;
    cv::Mat out;
    const MaskJob job = detail::host_job(im.depth_f32, im.mask, out);
    {
      const tbb::global_control one(tbb::global_control::max_allowed_parallelism, 1);
      row.mask_cpu_us =
          summarize(sample_us(warmup, o.iterations, cap, [&] { return time_us([&] { mask_cpu(job, params); }); }));
    }
    const CvThreads cv_one(1);
    cv::Mat copied(im.depth_f32.size(), CV_32FC1, cv::Scalar(0));
    row.copyto_us = summarize(
        sample_us(warmup, o.iterations, cap, [&] { return time_us([&] { im.depth_f32.copyTo(copied, im.mask); }); }));
    r.cpu_single_thread.push_back(row);
  }
}

std::vector<uint8_t> read_file(const fs::path& p) {
  std::ifstream in(p, std::ios::binary);
  DM_EXPECT(in, InputError, "cannot open '" << p.string() << "'");
  return std::vector<uint8_t>(std::istreambuf_iterator<char>(in), {});
}

std::string frame_id(int i) {
  char b[16];
  std::snprintf(b, sizeof b, "%06d", i);
  return b;
}

// `depthmask run --config <data>/depthmask.yaml --output <out> --set output.format=[tiff]`, backend auto.
Config run_config(const fs::path& data, const fs::path& out, const BenchOptions& o) {
  return load_config(data / "depthmask.yaml", {{"output.dir", out.string(), "bench", true},
                                               {"output.format", "[tiff]", "bench"},
                                               {"output.preview", "false", "bench"},
                                               {"backend.device", std::to_string(o.device), "bench"}});
}

// Commit times of the frames, to measure the steady state apart from start-up and drain.
class CommitClock final : public RunObserver {
 public:
  explicit CommitClock(Clock::time_point start) : start_(start) {}
  void on_frame(const FrameEntry&, size_t done, size_t, const FrameFailure*) override {
    times_.push_back(Clock::now());
    (void)done;
  }
  // From the run's start to its first commit, in ms (0 without one).
  double first_frame_ms() const {
    return times_.empty() ? 0 : std::chrono::duration<double, std::milli>(times_.front() - start_).count();
  }
  // Frames per second between the commit of the first quarter of the frames and the last commit.
  double steady_fps() const {
    if (times_.size() < 8) return 0;
    const size_t a = times_.size() / 4, b = times_.size() - 1;
    const double s = std::chrono::duration<double>(times_[b] - times_[a]).count();
    return s > 0 ? static_cast<double>(b - a) / s : 0;
  }

 private:
  Clock::time_point start_;
  std::vector<Clock::time_point> times_;
};

// The wall time of run_batch (start-up included); `steady_fps` gets the steady-state rate and
// `first_frame_ms` the time to the first committed frame.
double timed_run_batch(const Config& c, MemoryBackend& be, const BackendChoice& choice, RunSummary& s,
                       double* steady_fps, double* first_frame_ms) {
  const auto t0 = Clock::now();
  CommitClock clock(t0);
  s = run_batch(c, be, choice, &clock);
  const double wall = seconds_since(t0);
  if (steady_fps) *steady_fps = clock.steady_fps();
  if (first_frame_ms) *first_frame_ms = clock.first_frame_ms();
  return wall;
}

std::string run_error(const RunSummary& s, int frames, const char* which) {
  if (s.failed == 0 && s.ok == static_cast<size_t>(frames)) return {};
  return std::string(which) + ": " + std::to_string(s.ok) + " of " + std::to_string(frames) + " frames ok" +
         (s.failures.empty() ? std::string() : ": " + s.failures.front().message);
}

EndToEndRow end_to_end(const BenchOptions& o, const FrameSize& size, const PlatformInfo& platform,
                       const MaskParams& params, const fs::path& work, unsigned threads, const ProgressFn& say) {
  EndToEndRow row;
  row.size = size;
  row.frames = o.frames > 0 ? o.frames : default_frames(size, threads);
  row.rate_frames = std::min(row.frames, kRateFrames);
  row.threads = threads;
  const fs::path data = work / size.label(), out = work / (size.label() + "-run"),
                 warm_out = work / (size.label() + "-run-warm"), naive = work / (size.label() + "-naive");
  say("end to end " + size.label() + ": generating " + std::to_string(row.frames) + " frames");
  auto t0 = Clock::now();
  write_synthetic_dataset(data, row.frames, size.width, size.height);
  row.generate_s = seconds_since(t0);

  // First run on a fresh backend (start-up included), then a second one with the same backend object
  // into a fresh folder: CUDA context, lazily loaded kernels, the backend's stream, the thread pool
  // and the page cache are warm. run_batch still allocates its frame buffers (pinned for copy) again:
  // the backends keep no pool, so that part of start-up stays in both.
  say("end to end " + size.label() + ": run (first, with start-up)");
  const Config first = run_config(data, out, o);
  const BackendChoice choice = choose_backend(first.backend, platform);
  std::unique_ptr<MemoryBackend> be = make_backend(choice, platform);
  RunSummary s;
  row.run_s = timed_run_batch(first, *be, choice, s, nullptr, &row.first_frame_ms);
  row.backend = std::string(to_string(s.backend));
  row.run_fps = row.run_s > 0 ? static_cast<double>(s.ok) / row.run_s : 0;
  row.error = run_error(s, row.frames, "first run");
  if (row.error.empty()) {
    std::error_code ec;
    fs::remove_all(out, ec);  // the disk holds one run's outputs at a time
    say("end to end " + size.label() + ": run (warm)");
    row.warm_run_s =
        timed_run_batch(run_config(data, warm_out, o), *be, choice, s, &row.steady_fps, &row.warm_first_frame_ms);
    row.warm_run_fps = row.warm_run_s > 0 ? static_cast<double>(s.ok) / row.warm_run_s : 0;
    row.error = run_error(s, row.frames, "warm run");
  }
  be.reset();

  // The naive serial loop a user would write with OpenCV: a rate, on the first rate_frames frames.
  say("end to end " + size.label() + ": naive OpenCV loop on " + std::to_string(row.rate_frames) + " frames");
  fs::create_directories(naive);
  t0 = Clock::now();
  for (int i = 0; i < row.rate_frames; ++i) {
    const std::string id = frame_id(i);
    const cv::Mat d = cv::imread((data / "depth" / (id + ".png")).string(), cv::IMREAD_UNCHANGED);
    const cv::Mat m = cv::imread((data / "mask" / (id + ".png")).string(), cv::IMREAD_UNCHANGED);
    cv::Mat metres;
    d.convertTo(metres, CV_32FC1, 0.001);
    cv::Mat masked = cv::Mat::zeros(d.size(), CV_32FC1);
    metres.copyTo(masked, m);
    cv::imwrite((naive / (id + ".tiff")).string(), masked);
  }
  const double naive_s = seconds_since(t0);
  row.naive_fps = naive_s > 0 ? row.rate_frames / naive_s : 0;

  // The codec alone, one thread: decode depth + mask from bytes in memory, encode the float TIFF the
  // run writes (encoders.h encode_tiff).
  say("end to end " + size.label() + ": codec times on " + std::to_string(row.rate_frames) + " frames");
  double decode_s = 0, encode_s = 0;
  {
    const CvThreads one(1);
    for (int i = 0; i < row.rate_frames; ++i) {
      const std::string id = frame_id(i);
      const std::vector<uint8_t> db = read_file(data / "depth" / (id + ".png"));
      const std::vector<uint8_t> mb = read_file(data / "mask" / (id + ".png"));
      cv::Mat d, m;
      decode_s += time_us([&] {
                    d = cv::imdecode(db, cv::IMREAD_UNCHANGED);
                    m = cv::imdecode(mb, cv::IMREAD_UNCHANGED);
                  }) *
                  1e-6;
      const cv::Mat masked = detail::reference_output(d, m, params);
      std::vector<uint8_t> bytes;
      encode_s += time_us([&] { bytes = encode_tiff(masked); }) * 1e-6;
    }
  }
  row.decode_ms = decode_s / row.rate_frames * 1e3;
  row.encode_ms = encode_s / row.rate_frames * 1e3;
  row.codec_bound_fps = codec_bound_fps(threads, decode_s / row.rate_frames, encode_s / row.rate_frames);

  // The same work on every thread at once: shared caches, memory bandwidth and (on VMs) shared
  // physical cores make it less than threads x the one-thread rate.
  say("end to end " + size.label() + ": codec on all threads");
  {
    std::vector<std::vector<uint8_t>> dbs, mbs;
    for (int i = 0; i < row.rate_frames; ++i) {
      dbs.push_back(read_file(data / "depth" / (frame_id(i) + ".png")));
      mbs.push_back(read_file(data / "mask" / (frame_id(i) + ".png")));
    }
    const CvThreads one(1);  // OpenCV's own threads off: oneTBB spreads the frames
    const int n = std::max(row.rate_frames * 4, static_cast<int>(threads) * 4);
    const double secs = time_us([&] {
                          tbb::parallel_for(0, n, [&](int i) {
                            const size_t k = static_cast<size_t>(i % row.rate_frames);
                            const cv::Mat d = cv::imdecode(dbs[k], cv::IMREAD_UNCHANGED);
                            const cv::Mat m = cv::imdecode(mbs[k], cv::IMREAD_UNCHANGED);
                            (void)encode_tiff(detail::reference_output(d, m, params));
                          });
                        }) *
                        1e-6;
    row.codec_parallel_fps = secs > 0 ? n / secs : 0;
  }

  std::error_code ec;
  for (const fs::path& dir : {data, out, warm_out, naive}) fs::remove_all(dir, ec);
  return row;
}

// Live mode per backend: run_live on a paced, looped replay of a generated dataset for a fixed time,
// drop_oldest overflow and the default frame slots, as `depthmask live --source replay://...` runs.
// A backend this machine cannot make is left out (host to host already says why).
void live(const BenchOptions& o, const PlatformInfo& platform, const fs::path& work, const ProgressFn& say,
          BenchReport& r) {
  LiveSection& l = r.live;
  const fs::path data = work / ("live-" + l.size.label());
  say("live " + l.size.label() + ": generating " + std::to_string(l.frames) + " frames");
  write_synthetic_dataset(data, l.frames, l.size.width, l.size.height);
  Config c = load_config(data / "depthmask.yaml", {{"backend.device", std::to_string(o.device), "bench"}});
  c.live.overflow = Overflow::DropOldest;
  c.live.output_every = 0;
  c.live.publish.clear();
  c.live.stats_interval = 0;  // no log lines mid-table
  std::ostringstream uri;
  uri << "replay://" << data.string() << "?fps=" << l.fps << "&loop=1";
  LiveLimits limits;
  limits.duration = l.seconds;
  for (BackendKind kind : o.backends) {
    std::string why;
    const std::unique_ptr<MemoryBackend> be = try_backend(kind, o, platform, why);
    if (!be) continue;
    LiveRow row;
    row.backend = std::string(to_string(kind));
    say("live " + l.size.label() + " at " + num_text(l.fps) + " fps for " + num_text(l.seconds) + " s: " + row.backend);
    try {
      const std::unique_ptr<LiveSource> source = make_live_source(parse_source_uri(uri.str()), c);
      const LiveSummary s = run_live(c, *be, *source, limits, nullptr);
      row.captured = s.captured;
      row.processed = s.processed;
      row.dropped = s.drops_overflow;
      row.failed = s.failed;
      row.seconds = s.seconds;
      row.fps = s.fps();
      row.p50_us = s.latency.p50_us;
      row.p99_us = s.latency.p99_us;
      row.max_us = s.latency.max_us;
    } catch (const Error& e) {
      row.error = e.what();
    }
    l.rows.push_back(row);
  }
  std::error_code ec;
  fs::remove_all(data, ec);
}

}  // namespace

BenchReport run_bench(const BenchOptions& o, const ProgressFn& progress, const CheckpointFn& checkpoint) {
  DM_EXPECT(!o.sizes.empty(), ConfigError, "bench: no sizes");
  DM_EXPECT(o.iterations >= 1 && o.iterations <= 1000000, ConfigError,
            "--iterations " << o.iterations << ": expected 1..1000000");
  DM_EXPECT(o.frames >= 0 && o.frames <= 100000, ConfigError, "--frames " << o.frames << ": expected 1..100000");
  DM_EXPECT(!o.backends.empty(), ConfigError, "--backends: none given");
  DM_EXPECT(o.live_seconds > 0 && o.live_seconds <= 3600, ConfigError,
            "--live-seconds " << o.live_seconds << ": expected more than 0, at most 3600");
  DM_EXPECT(o.live_fps >= 0 && o.live_fps <= 10000, ConfigError, "--live-fps " << o.live_fps << ": expected 1..10000");
  DM_EXPECT(o.live_frames >= 1 && o.live_frames <= 100000, ConfigError,
            "live frames " << o.live_frames << ": expected 1..100000");
  const auto t0 = Clock::now();
  const ProgressFn say = [&](const std::string& s) {
    if (progress) progress(s);
  };
  BenchReport r;
  r.options = o;
  const PlatformInfo platform = probe_platform(o.device);
  r.machine = machine_info(platform, o.device);
  const auto section_done = [&] {
    if (!checkpoint) return;
    r.targets = check_targets(r);
    r.seconds = seconds_since(t0);
    checkpoint(r);
  };

  std::vector<SizeImages> images;
  for (const FrameSize& s : o.sizes) {
    say("rendering a " + s.label() + " frame");
    images.push_back(make_images(s));
  }
  // Host to host also times the recorded frame, read now: a bad file fails before minutes of measuring.
  std::vector<SizeImages> one_frame_images = images;
  DM_EXPECT(o.real_depth.empty() == o.real_mask.empty(), ConfigError,
            "--real-frame: expected DEPTH,MASK (two image files)");
  if (!o.real_depth.empty()) one_frame_images.push_back(load_real_frame(o.real_depth, o.real_mask));
  const MaskParams params = mask_params(bench_config());

  detail::GpuResults gpu = detail::measure_gpu(o, platform, images, params, say);
  r.gpu_skipped = gpu.skipped;
  r.l2_bytes = gpu.l2_bytes;
  r.ceilings = std::move(gpu.ceilings);
  r.kernel = std::move(gpu.kernel);
  for (auto& f : gpu.failures) r.backends_skipped.push_back(std::move(f));

  section_done();
  host_to_host(o, platform, one_frame_images, params, say, r);
  cpu_single_thread(o, images, params, say, r);
  section_done();

  if (!o.end_to_end) {
    r.end_to_end_skipped = "--skip-end-to-end";
  } else {
    const ScratchDir work("depthmask-bench-");
    for (const FrameSize& s : o.sizes) {
      try {
        r.end_to_end.push_back(end_to_end(o, s, platform, params, work.path(), r.machine.hardware_threads, say));
      } catch (const Error& e) {
        EndToEndRow row;
        row.size = s;
        row.error = e.what();
        r.end_to_end.push_back(row);
      }
      section_done();
    }
  }

  r.live.cuda_device = platform.cuda_built && !platform.devices.empty();
  r.live.size = o.live_size;
  r.live.fps = o.live_fps > 0 ? o.live_fps : default_live_fps(r.live.cuda_device);
  r.live.seconds = o.live_seconds;
  r.live.frames = o.live_frames;
  if (!o.live) {
    r.live.skipped = "--skip-live";
  } else {
    const ScratchDir work("depthmask-bench-");
    try {
      live(o, platform, work.path(), say, r);
    } catch (const Error& e) {
      r.live.skipped = std::string("failed: ") + e.what();
    }
  }
  r.targets = check_targets(r);
  r.seconds = seconds_since(t0);
  return r;
}

}  // namespace depthmask::bench
