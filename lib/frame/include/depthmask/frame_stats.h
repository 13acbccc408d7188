// What a frame's masked depth kept, in a few numbers: the kept-pixel count and a small histogram of
// the kept depth. Computed once per output where the writer has the masked image on the host, kept in
// the resume manifest (version 2), and read back by the QA report (report.h) and `depthmask status`
// without any image.
#pragma once

#include <opencv2/core.hpp>

#include <cstdint>
#include <vector>

#include "depthmask/config.h"

namespace depthmask {

// The kept-depth histogram's bins: `bins` equal bins over [min, max] metres (the run's depth.min and
// depth.max), the last one closed. Stored once in the manifest's head, so a reader needs no config.
struct HistogramSpec {
  double min = 0, max = 10;
  int bins = 32;

  // depth.min..depth.max of `c` in kDefaultBins bins (a depth.max that is not a finite number above
  // depth.min: min + 10 m).
  static HistogramSpec of(const Config& c);
  // The bin of kept depth z (clamped into the range, so kept values never fall outside).
  int bin_of(float z) const;
  bool operator==(const HistogramSpec& o) const { return min == o.min && max == o.max && bins == o.bins; }
  bool operator!=(const HistogramSpec& o) const { return !(*this == o); }

  static constexpr int kDefaultBins = 32;
};

// One frame's numbers. A frame with several outputs (mask.per_instance) sums them.
struct FrameStats {
  uint64_t kept = 0;           // kept pixels (depth_kept: finite, > 0, not output.invalid)
  uint64_t pixels = 0;         // pixels in the output(s)
  std::vector<uint64_t> hist;  // kept pixels per bin of the run's HistogramSpec; empty: not known

  // Adds another output's numbers (histograms of the same spec).
  void add(const FrameStats& other);
  double kept_fraction() const { return pixels > 0 ? static_cast<double>(kept) / static_cast<double>(pixels) : 0.0; }
};

// One pass over a masked CV_32FC1 output: the kept count and the histogram together.
FrameStats frame_stats(const cv::Mat& f32, float invalid, const HistogramSpec& spec);

}  // namespace depthmask
