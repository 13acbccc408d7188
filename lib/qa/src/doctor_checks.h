// The doctor's checks (doctor.h) as free functions over one Diagnosis, in report order:
// doctor_listing.cpp  the layout, the frames, pairing, files left out, sizes from the headers
// doctor_sample.cpp   the decoded sample: its statistics, types, three-channel depth, decoding
// doctor_values.cpp   what the sample's values say: units, intrinsics, the mask rule
// doctor.cpp runs them (diagnose) and holds the words they share; doctor_report.cpp renders the report.
#pragma once

#include <opencv2/core.hpp>

#include <cstddef>
#include <cstdint>
#include <cstdio>
#include <map>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "depthmask/config.h"
#include "depthmask/doctor.h"
#include "depthmask/geometry.h"
#include "depthmask/layouts.h"

namespace depthmask::detail {

// printf into a string (at most 255 characters).
template <class... A>
std::string cformat(const char* format, A... args) {
  char buf[256];
  std::snprintf(buf, sizeof buf, format, args...);
  return buf;
}

std::string num(double v);                                        // "%.10g"
std::string metres(double m);                                     // "1.5 m", "2000 m"
std::string percent(size_t part, size_t whole);                   // "12.5 %"
std::string size_text(int w, int h);                              // "640x480"
std::string plural(size_t n, const char* one, const char* many);  // "1 frame", "2 frames"
// Up to k indices of 0..n-1, evenly spaced, the first and the last included.
std::vector<size_t> evenly_spaced(size_t n, size_t k);
// "every 1563rd of 100000 frames" or "all 8 frames": how a sample was taken, for the report.
std::string spacing(size_t taken, size_t n);

// Counts of one property (a size, a type) over frames, with the first frames that differ from the
// most common value.
struct Tally {
  std::map<std::string, size_t> counts;
  std::map<std::string, std::vector<std::string>> first_ids;  // up to 3 frame ids per value

  void add(const std::string& value, const std::string& id);
  std::string common() const;
  bool uniform() const { return counts.size() <= 1; }
  // "640x480 (98 frames); 320x240 (2 frames: 000007, 000012)".
  std::string describe() const;
};

// What the decoded sample showed: gathered by the masked-frame hook, judged by the checks.
struct SampleStats {
  Tally depth_types, mask_types;
  std::vector<std::pair<std::string, std::string>> failures;  // frame id, message
  std::vector<float> valid_depth_m;                           // a subsample of every frame's valid depth
  size_t valid_pixels = 0, valid_in_range = 0, depth_pixels = 0;
  bool float_depth = false, own_scale = false;
  // Masks of their own values (not instance unions): a histogram of the values seen.
  std::vector<uint64_t> mask_hist;  // 65536 bins when any mask was seen
  size_t mask_frames = 0, mask_pixels = 0, mask_pass = 0, frames_mask_all = 0;
  size_t passes = 0, passes_keeping_nothing = 0, kept = 0, out_pixels = 0;
  size_t three_channel = 0;  // depth files stored as 3 equal channels (FrameSlot::depth_stored_channels)
  std::string three_channel_example;
  cv::Size first_grid;  // the first masked output's size (the grid intrinsics apply to)
  std::string first_grid_id;
};

// One run of the doctor: what the checks read (the configuration as given, the resolved input, the
// sample's statistics) and the report they add their findings to.
struct Diagnosis {
  Diagnosis(const Config& c, const DoctorOptions& o) : given(c), options(o) { report.root = c.input.root.string(); }

  const Config& given;
  DoctorOptions options;
  DoctorReport report;
  ResolvedInput input;
  std::optional<CameraGeometry> geometry;
  SampleStats stats;

  // The effective configuration (the layout's defaults applied); valid once check_input() succeeded.
  const Config& config() const { return input.config; }
  void add(const char* id, DoctorLevel level, std::string title, std::string detail = {}, std::string hint = {});
  // Sets a suggested key (a second suggestion of the same key replaces the first, in its place).
  void suggest(const std::string& key, const std::string& value);
};

// doctor_listing.cpp. check_input: the layout and the frames (resolve_input, as `run` starts); false
// when there is nothing further to check.
bool check_input(Diagnosis& d);
// rosbag2: the bag's topics (types, counts, encodings, rates) and which the run reads.
void check_topics(Diagnosis& d);
void check_pairing(Diagnosis& d);
void check_skipped(Diagnosis& d);
void check_sizes(Diagnosis& d);

// doctor_sample.cpp. decode_sample: decodes and masks the sample as `run` does, into d.stats.
void decode_sample(Diagnosis& d);
void check_types(Diagnosis& d);
void check_three_channel(Diagnosis& d);
void check_decode(Diagnosis& d);

// doctor_values.cpp
void check_units(Diagnosis& d);
void check_intrinsics(Diagnosis& d);
void check_mask_rule(Diagnosis& d);

}  // namespace depthmask::detail
