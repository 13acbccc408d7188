// The bench's small arithmetic: percentiles, the codec bound, rotation counts, option parsing.
#include <algorithm>
#include <cmath>
#include <cstdio>
#include <limits>
#include <numeric>
#include <sstream>

#include "depthmask/bench/bench.h"
#include "depthmask/errors.h"

namespace depthmask::bench {

std::string FrameSize::label() const { return std::to_string(width) + "x" + std::to_string(height); }

namespace {

std::vector<std::string> split_list(const std::string& list) {
  std::vector<std::string> out;
  std::stringstream ss(list);
  std::string item;
  while (std::getline(ss, item, ',')) {
    item.erase(0, item.find_first_not_of(" \t"));
    item.erase(item.find_last_not_of(" \t") + 1);
    if (!item.empty()) out.push_back(item);
  }
  return out;
}

}  // namespace

std::vector<FrameSize> parse_sizes(const std::string& list) {
  std::vector<FrameSize> out;
  for (const std::string& item : split_list(list)) {
    int w = 0, h = 0;
    char x = 0, extra = 0;
    if (std::sscanf(item.c_str(), "%d%c%d%c", &w, &x, &h, &extra) != 3 || (x != 'x' && x != 'X') || w <= 0 || h <= 0 ||
        w > 16384 || h > 16384)
      throw ConfigError("--sizes: '" + item + "' is not WIDTHxHEIGHT such as 640x480 (1..16384 each)");
    out.push_back({w, h});
  }
  DM_EXPECT(!out.empty(), ConfigError, "--sizes: no size given (expected e.g. 640x480,1920x1080)");
  return out;
}

std::vector<BackendKind> parse_backends(const std::string& list) {
  std::vector<BackendKind> out;
  for (const std::string& item : split_list(list)) {
    const std::optional<BackendKind> k = parse_backend_kind(item);
    DM_EXPECT(k && *k != BackendKind::Auto, ConfigError,
              "--backends: '" << item << "' is not one of cpu, copy, zero_copy, managed");
    if (std::find(out.begin(), out.end(), *k) == out.end()) out.push_back(*k);
  }
  DM_EXPECT(!out.empty(), ConfigError, "--backends: no backend given (expected e.g. cpu,copy)");
  return out;
}

BenchOptions quick_options() {
  BenchOptions o;
  o.sizes = {{160, 120}, {320, 240}};
  o.frames = 4;
  o.iterations = 20;
  o.live_size = {160, 120};
  o.live_frames = 8;
  o.live_seconds = 1.0;
  o.quick = true;
  return o;
}

double percentile(std::vector<double> samples, double p) {
  if (samples.empty()) return std::numeric_limits<double>::quiet_NaN();
  std::sort(samples.begin(), samples.end());
  const double rank = std::clamp(p, 0.0, 100.0) / 100.0 * static_cast<double>(samples.size() - 1);
  const size_t lo = static_cast<size_t>(std::floor(rank));
  const size_t hi = std::min(lo + 1, samples.size() - 1);
  const double frac = rank - static_cast<double>(lo);
  return samples[lo] + (samples[hi] - samples[lo]) * frac;
}

Stats summarize(const std::vector<double>& samples) {
  Stats s;
  s.n = samples.size();
  if (samples.empty()) return s;
  s.mean = std::accumulate(samples.begin(), samples.end(), 0.0) / static_cast<double>(samples.size());
  s.p50 = percentile(samples, 50);
  s.p99 = percentile(samples, 99);
  const auto [mn, mx] = std::minmax_element(samples.begin(), samples.end());
  s.min = *mn;
  s.max = *mx;
  return s;
}

double codec_bound_fps(unsigned threads, double decode_s, double encode_s) {
  const double per_frame = decode_s + encode_s;
  if (!(decode_s >= 0) || !(encode_s >= 0) || !(per_frame > 0)) return 0.0;
  return static_cast<double>(threads) / per_frame;
}

size_t rotation_frames(size_t frame_bytes, size_t l2_bytes, double factor, size_t min_frames, size_t multiple_of) {
  if (multiple_of == 0) multiple_of = 1;
  size_t n = min_frames;
  if (frame_bytes > 0) {
    const double need = std::ceil(static_cast<double>(l2_bytes) * factor / static_cast<double>(frame_bytes));
    n = std::max(n, static_cast<size_t>(need));
  }
  return (n + multiple_of - 1) / multiple_of * multiple_of;
}

KernelRotation kernel_rotation(size_t frame_bytes, size_t l2_bytes, double factor, size_t max_bytes,
                               int max_per_launch) {
  KernelRotation r;
  size_t n = rotation_frames(frame_bytes, l2_bytes, factor, 2, 1);
  if (frame_bytes > 0 && n * frame_bytes > max_bytes) n = std::max<size_t>(1, max_bytes / frame_bytes);
  r.per_launch = static_cast<int>(std::clamp<size_t>(n, 1, static_cast<size_t>(std::max(max_per_launch, 1))));
  const size_t b = static_cast<size_t>(r.per_launch);
  r.frames = (n + b - 1) / b * b;
  // Rounding up to whole launches may pass max_bytes: round down instead (n >= b, so >= one launch).
  if (frame_bytes > 0 && r.frames * frame_bytes > max_bytes && r.frames > b) r.frames -= b;
  return r;
}

int default_frames(const FrameSize& s, unsigned threads) {
  if (s.pixels() == 0) return 256;
  const double f = 256.0 * std::sqrt(640.0 * 480.0 / static_cast<double>(s.pixels()));
  const int by_size = std::clamp(static_cast<int>(std::lround(f)), 48, 256);
  // At least 64 rounds of the pipeline's threads, so that its start-up (mostly the slots' pinned
  // buffers: 50-120 ms to the first frame on the H200 at 640x480-1080p) and its filling and draining
  // (about one frame's codec time each) stay a few percent of the run, as in a dataset of thousands
  // of frames; at most 8 GiB of float output per run (the disk holds one run's outputs at a time).
  const auto by_output = static_cast<int>((size_t{8} << 30) / (static_cast<size_t>(s.pixels()) * 4));
  return std::max(by_size, std::min(64 * static_cast<int>(threads), by_output));
}

const Ceiling* BenchReport::ceiling(std::string_view name) const {
  for (const Ceiling& c : ceilings)
    if (c.name == name) return &c;
  return nullptr;
}

}  // namespace depthmask::bench
