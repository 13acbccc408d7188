// The doctor's decoded sample (doctor_checks.h): frames decoded and masked as `run` does, what they
// showed gathered into SampleStats, and the checks of the types, three-channel depth and decoding.
#include <algorithm>
#include <memory>
#include <type_traits>

#include "depthmask/backend.h"
#include "depthmask/encoders.h"
#include "depthmask/errors.h"
#include "depthmask/frame.h"
#include "depthmask/pipeline.h"
#include "depthmask/platform.h"
#include "doctor_checks.h"

namespace depthmask::detail {

namespace {

std::string type_text(int type) {
  switch (type) {
    case CV_8UC1:
      return "8-bit";
    case CV_16UC1:
      return "16-bit";
    case CV_32FC1:
      return "32-bit float";
    case CV_8UC3:
      return "8-bit BGR";
    default:
      return "type " + std::to_string(type);
  }
}

template <class T>
void add_valid_depth(SampleStats& s, const cv::Mat& depth, const MaskParams& p) {
  // At most 16384 values a frame: the median of a million is as good as that of all of them.
  const size_t total = depth.total();
  const size_t stride = std::max<size_t>(1, total / 16384);
  size_t i = 0;
  for (int y = 0; y < depth.rows; ++y) {
    const T* row = depth.ptr<T>(y);
    for (int x = 0; x < depth.cols; ++x, ++i) {
      float m = 0;
      if constexpr (std::is_same_v<T, uint16_t>) {
        const uint16_t v = decode_depth_raw(row[x], p);
        if (v == 0) continue;
        m = depth_metres(v, p);
        ++s.valid_pixels;
        if (v >= p.raw_min && v <= p.raw_max) ++s.valid_in_range;
      } else {
        m = row[x];
        if (!finite_f(m) || !(m > 0.0f)) continue;
        ++s.valid_pixels;
        if (m >= p.min_m && m <= p.max_m) ++s.valid_in_range;
      }
      if (i % stride == 0) s.valid_depth_m.push_back(m);
    }
  }
  s.depth_pixels += total;
}

template <class T>
void add_mask(SampleStats& s, const cv::Mat& mask, const MaskParams& p) {
  if (s.mask_hist.empty()) s.mask_hist.assign(65536, 0);
  size_t pass = 0;
  for (int y = 0; y < mask.rows; ++y) {
    const T* row = mask.ptr<T>(y);
    for (int x = 0; x < mask.cols; ++x) {
      ++s.mask_hist[row[x]];
      pass += mask_keeps(row[x], p) ? 1 : 0;
    }
  }
  ++s.mask_frames;
  s.mask_pixels += mask.total();
  s.mask_pass += pass;
  if (pass == mask.total()) ++s.frames_mask_all;
}

void observe(SampleStats& s, const FrameSlot& slot, const std::string& id, const MaskParams& p,
             const MaskParams* own_mask, bool union_of_instances) {
  const cv::Mat& d = slot.depth();
  s.depth_types.add(type_text(d.type()), id);
  if (slot.depth_stored_channels() == 3 && s.three_channel++ == 0) s.three_channel_example = id;
  s.mask_types.add(union_of_instances ? "instance union" : type_text(slot.mask().type()), id);
  if (d.type() == CV_16UC1) add_valid_depth<uint16_t>(s, d, p);
  if (d.type() == CV_32FC1) {
    s.float_depth = true;
    add_valid_depth<float>(s, d, p);
  }
  if (own_mask) {
    if (slot.mask().type() == CV_8UC1) add_mask<uint8_t>(s, slot.mask(), *own_mask);
    if (slot.mask().type() == CV_16UC1) add_mask<uint16_t>(s, slot.mask(), *own_mask);
  }
  const cv::Mat& out = slot.out();
  const size_t kept = count_kept(out, p.invalid);
  ++s.passes;
  s.kept += kept;
  s.out_pixels += out.total();
  if (kept == 0) ++s.passes_keeping_nothing;
  if (s.first_grid.area() == 0) s.first_grid = out.size(), s.first_grid_id = id;
}

}  // namespace

// Decodes and masks the sample as `run` does (process_frame on a FrameSlot of the cpu backend).
void decode_sample(Diagnosis& d) {
  const auto& frames = d.input.listing.frames;
  d.report.sample = evenly_spaced(frames.size(), d.options.sample);
  if (d.report.sample.empty()) return;
  const std::unique_ptr<MemoryBackend> backend =
      make_backend(BackendChoice{BackendKind::Cpu, 0, "depthmask doctor decodes on the CPU", false}, PlatformInfo{});
  FrameSlot slot(*backend);
  slot.set_registration(d.config().registration.mode, d.geometry);
  slot.set_limits(input_limits(d.config()));
  for (size_t i : d.report.sample) {
    const FrameEntry& f = frames[i];
    const MaskParams p = mask_params(d.config(), f);
    const bool union_of_instances = !f.instances.empty() && !d.config().mask.per_instance;
    if (f.depth_scale) d.stats.own_scale = true;
    try {
      process_frame(d.config(), f, slot, p, [&](const FrameSlot& masked, const std::string& id) {
        observe(d.stats, masked, id, p, f.instances.empty() ? &p : nullptr, union_of_instances);
      });
      ++d.report.decoded;
    } catch (const ConfigError&) {
      throw;
    } catch (const std::exception& e) {
      d.stats.failures.emplace_back(f.id, e.what());
    }
  }
}

void check_types(Diagnosis& d) {
  if (d.stats.depth_types.counts.empty()) return;
  const bool uniform = d.stats.depth_types.uniform() && d.stats.mask_types.uniform();
  d.add("types", uniform ? DoctorLevel::Ok : DoctorLevel::Warning,
        "types: depth " + d.stats.depth_types.common() + ", mask " + d.stats.mask_types.common() +
            (uniform ? "" : ", but not every sampled frame has these"),
        "depth: " + d.stats.depth_types.describe() + "\nmask: " + d.stats.mask_types.describe());
}

void check_three_channel(Diagnosis& d) {
  if (d.stats.passes == 0) return;
  if (d.stats.three_channel == 0) {
    d.add("three_channel", DoctorLevel::Ok, "depth is stored single-channel in the sampled frames");
    return;
  }
  d.add("three_channel", DoctorLevel::Warning,
        std::to_string(d.stats.three_channel) + " of " +
            plural(d.stats.passes, "sampled depth image is", "sampled depth images are") + " stored with 3 channels",
        "read as their one channel because all three are equal (e.g. frame " + d.stats.three_channel_example +
            "); a file whose channels differ fails to decode",
        "store depth as a single channel: the run decodes three times the data it uses");
}

void check_decode(Diagnosis& d) {
  const size_t n = d.report.sample.size();
  if (n == 0) return;
  const std::string how = "decoded and masked as `run` does: " + spacing(n, d.report.frames);
  if (d.stats.failures.empty()) {
    d.add("decode", DoctorLevel::Ok, std::to_string(n) + " sampled " + (n == 1 ? "frame decodes" : "frames decode"),
          how);
    return;
  }
  std::string detail = how;
  for (size_t i = 0; i < d.stats.failures.size() && i < 5; ++i)
    detail += "\nframe " + d.stats.failures[i].first + ": " + d.stats.failures[i].second;
  if (d.stats.failures.size() > 5) detail += "\n...";
  d.add("decode", DoctorLevel::Error,
        std::to_string(d.stats.failures.size()) + " of " + std::to_string(n) + " sampled frames do not decode or pair",
        detail);
}

}  // namespace depthmask::detail
