// Frames that make every `reason` code appear (kernels/reason.h), for the CPU tests and the GPU
// parity tests alike: each case is a frame, the rule, and what the slot needs (a colour key, a live
// band's configured range, registration), run through a FrameSlot with the reason pass on.
#pragma once

#include <opencv2/core.hpp>

#include <cmath>
#include <cstdint>
#include <limits>
#include <optional>
#include <random>
#include <string>
#include <utility>
#include <vector>

#include "depthmask/frame.h"
#include "depthmask/geometry.h"
#include "depthmask/kernels/color_key.h"
#include "depthmask/kernels/drop_reason.h"
#include "depthmask/kernels/mask_rule.h"

namespace dmtest {

struct ReasonCase {
  std::string name;
  cv::Mat depth, mask, color;
  depthmask::MaskParams params;
  std::optional<depthmask::MaskParams> configured;  // a live band: the rule without it
  std::optional<depthmask::ColorKey> key;
  depthmask::RegistrationMode registration = depthmask::RegistrationMode::None;
  std::optional<depthmask::CameraGeometry> geometry;
  std::vector<uint8_t> expect_codes;  // codes the case must produce (each at least once)
};

// 16-bit depth in mm: 0 holes, 65535 markers, values below 300, in range, above 5000.
inline cv::Mat reason_depth_u16(cv::Size size, std::mt19937& rng) {
  cv::Mat d(size, CV_16UC1);
  std::uniform_int_distribution<int> pick(0, 19), mm(50, 9000);
  for (int y = 0; y < d.rows; ++y)
    for (int x = 0; x < d.cols; ++x) {
      const int k = pick(rng);
      d.at<uint16_t>(y, x) = static_cast<uint16_t>(k == 0 ? 0 : k == 1 ? 65535 : mm(rng));
    }
  return d;
}

// Float metres with NaN, +-inf, negatives and zeros among valid depth.
inline cv::Mat reason_depth_f32(cv::Size size, std::mt19937& rng) {
  cv::Mat d(size, CV_32FC1);
  std::uniform_int_distribution<int> pick(0, 19);
  std::uniform_real_distribution<float> m(0.05f, 9.0f);
  for (int y = 0; y < d.rows; ++y)
    for (int x = 0; x < d.cols; ++x) {
      const int k = pick(rng);
      float v = m(rng);
      if (k == 0) v = std::numeric_limits<float>::quiet_NaN();
      if (k == 1) v = std::numeric_limits<float>::infinity();
      if (k == 2) v = -1.5f;
      if (k == 3) v = 0.0f;
      d.at<float>(y, x) = v;
    }
  return d;
}

// Blobs of labels 0..4 (so erosion has edges to eat) with some single-pixel noise.
inline cv::Mat reason_mask(cv::Size size, int type, std::mt19937& rng) {
  cv::Mat m(size, type, cv::Scalar(0));
  std::uniform_int_distribution<int> label(0, 4), noise(0, 15);
  const int block = 6;
  for (int by = 0; by < size.height; by += block)
    for (int bx = 0; bx < size.width; bx += block) {
      const int l = label(rng);
      for (int y = by; y < std::min(by + block, size.height); ++y)
        for (int x = bx; x < std::min(bx + block, size.width); ++x) {
          const int v = noise(rng) == 0 ? label(rng) : l;
          if (type == CV_8UC1)
            m.at<uint8_t>(y, x) = static_cast<uint8_t>(v);
          else
            m.at<uint16_t>(y, x) = static_cast<uint16_t>(v * 16000);
        }
    }
  return m;
}

inline std::vector<ReasonCase> reason_cases(cv::Size size, unsigned seed = 7) {
  namespace dm = depthmask;
  std::mt19937 rng(seed);
  std::vector<ReasonCase> cases;
  const auto base = [] {
    dm::MaskParams p;
    dm::set_depth_range(p, 0.001, 0.3, 5.0);
    p.invalid_raw_count = 1, p.invalid_raw[0] = 65535;
    p.invalid = std::numeric_limits<float>::quiet_NaN();
    return p;
  };
  {  // labels, erode, markers, both ends of the range
    ReasonCase c;
    c.name = "u16_labels_erode";
    c.depth = reason_depth_u16(size, rng);
    c.mask = reason_mask(size, CV_8UC1, rng);
    c.params = base();
    c.params.label_count = 2, c.params.labels[0] = 1, c.params.labels[1] = 3;
    c.params.erode = 2;
    c.expect_codes = {dm::kKept,        dm::kDropMaskRule, dm::kDropErosion,
                      dm::kDropNoDepth, dm::kDropBelowMin, dm::kDropAboveMax};
    cases.push_back(c);
  }
  {  // float depth, a 16-bit mask's fraction threshold, inverted
    ReasonCase c;
    c.name = "f32_fraction_invert";
    c.depth = reason_depth_f32(size, rng);
    c.mask = reason_mask(size, CV_16UC1, rng);
    c.params = base();
    dm::set_threshold_fraction(c.params, 0.5);
    c.params.invert = true;
    c.params.invalid = -1.0f;
    c.expect_codes = {dm::kKept, dm::kDropMaskRule, dm::kDropNoDepth, dm::kDropBelowMin, dm::kDropAboveMax};
    cases.push_back(c);
  }
  {  // APC-encoded depth with a live depth band inside the configured range
    ReasonCase c;
    c.name = "u16_apc_band";
    c.depth = reason_depth_u16(size, rng);
    for (int y = 0; y < c.depth.rows; ++y)
      for (int x = 0; x < c.depth.cols; ++x) {
        uint16_t& w = c.depth.at<uint16_t>(y, x);
        if (w != 0 && w != 65535) w = static_cast<uint16_t>((w << 3) | (w >> 13));
      }
    c.mask = reason_mask(size, CV_8UC1, rng);
    c.params = base();
    c.params.apc_encoding = true;
    c.configured = c.params;
    dm::set_depth_range(c.params, 0.001, 1.0, 3.0);
    c.params.erode = 1;
    c.expect_codes = {dm::kKept,         dm::kDropMaskRule, dm::kDropErosion,  dm::kDropNoDepth,
                      dm::kDropBelowMin, dm::kDropAboveMax, dm::kDropDepthBand};
    cases.push_back(c);
  }
  {  // a plane of test results (live.mask.static AND the frame's mask), as the live runner makes it
    ReasonCase c;
    c.name = "tests_plane";
    c.depth = reason_depth_u16(size, rng);
    const cv::Mat labels = reason_mask(size, CV_8UC1, rng);
    c.mask = cv::Mat(size, CV_8UC1);
    for (int y = 0; y < size.height; ++y)
      for (int x = 0; x < size.width; ++x) {
        const uint8_t l = labels.at<uint8_t>(y, x);
        c.mask.at<uint8_t>(y, x) = l == 0 ? 0 : l < 3 ? dm::kTestKeep : dm::kTestLiveDrop;
      }
    c.params = dm::union_mask_params(base());
    c.params.erode = 1;
    c.expect_codes = {dm::kKept, dm::kDropMaskRule, dm::kDropLiveMask, dm::kDropErosion, dm::kDropNoDepth};
    cases.push_back(c);
  }
  {  // the colour key
    ReasonCase c;
    c.name = "color_key";
    c.depth = reason_depth_u16(size, rng);
    c.mask = reason_mask(size, CV_8UC1, rng);
    c.color = cv::Mat(size, CV_8UC3);
    cv::randu(c.color, cv::Scalar::all(0), cv::Scalar::all(256));
    c.params = base();
    dm::ColorKey k;
    k.h_min = 30, k.h_max = 120, k.s_min = 40;
    c.key = k;
    c.expect_codes = {dm::kKept, dm::kDropMaskRule, dm::kDropLiveMask, dm::kDropNoDepth};
    cases.push_back(c);
  }
  {  // resample: depth of half the size, its principal point shifted, so the mask grid's edges have no
     // source pixel
    ReasonCase c;
    c.name = "resample";
    const cv::Size small(std::max(1, size.width / 2), std::max(1, size.height / 2));
    c.depth = reason_depth_u16(small, rng);
    c.mask = reason_mask(size, CV_8UC1, rng);
    c.params = base();
    c.params.erode = 1;
    dm::CameraGeometry g;
    g.color = {static_cast<double>(size.width),
               static_cast<double>(size.width),
               size.width / 2.0,
               size.height / 2.0,
               size.width,
               size.height};
    g.depth = {small.width * 1.2,      small.width * 1.2, small.width / 2.0 - 2,
               small.height / 2.0 + 1, small.width,       small.height};
    c.geometry = g;
    c.registration = dm::RegistrationMode::Resample;
    c.expect_codes = {dm::kKept, dm::kDropMaskRule, dm::kDropNotCovered, dm::kDropNoDepth};
    cases.push_back(c);
  }
  {  // reproject: another camera 5 cm to the side
    ReasonCase c;
    c.name = "reproject";
    c.depth = reason_depth_u16(size, rng);
    c.mask = reason_mask(size, CV_16UC1, rng);
    c.params = base();
    c.params.threshold = 16000;
    dm::CameraGeometry g;
    const double f = std::max(8.0, size.width * 0.9);
    g.color = {f, f, size.width / 2.0, size.height / 2.0, size.width, size.height};
    g.depth = g.color;
    g.depth_to_color[3] = 0.05;
    c.geometry = g;
    c.registration = dm::RegistrationMode::Reproject;
    c.expect_codes = {dm::kKept, dm::kDropMaskRule, dm::kDropNotCovered};
    cases.push_back(c);
  }
  return cases;
}

// The case through `slot` (its settings set here): the masked depth and the codes, cloned.
inline std::pair<cv::Mat, cv::Mat> run_reason_case(depthmask::FrameSlot& slot, const ReasonCase& c) {
  slot.set_registration(c.registration, c.geometry);
  slot.set_color_key(c.key);
  slot.set_reason(true, c.configured);
  slot.set(c.depth, c.mask, c.color);
  slot.run_mask(c.params);
  return {slot.out().clone(), slot.reason().clone()};
}

// Every pixel's code is 0 exactly where the masked depth holds a depth (not `invalid`).
inline ::testing::AssertionResult codes_match_output(const cv::Mat& out, const cv::Mat& reason, float invalid) {
  if (out.size() != reason.size() || reason.type() != CV_8UC1)
    return ::testing::AssertionFailure() << "reason plane of the wrong size or type";
  for (int y = 0; y < out.rows; ++y)
    for (int x = 0; x < out.cols; ++x) {
      const float v = out.at<float>(y, x);
      const bool dropped = std::isnan(invalid) ? std::isnan(v) : v == invalid;
      const uint8_t code = reason.at<uint8_t>(y, x);
      if (code >= depthmask::kDropReasonCount)
        return ::testing::AssertionFailure() << "pixel (" << x << ", " << y << "): code " << int(code);
      if (dropped != (code != depthmask::kKept))
        return ::testing::AssertionFailure()
               << "pixel (" << x << ", " << y << "): output " << v << " but code " << int(code);
    }
  return ::testing::AssertionSuccess();
}

}  // namespace dmtest
