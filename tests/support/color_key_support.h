// Helpers for the colour key's tests (live.mask.color_key): a fake live source whose frames carry a
// BGR colour image (or none, or one of another size), and the key's reference from OpenCV's cvtColor,
// independent of the rule in color_key.h.
#pragma once

#include <opencv2/imgproc.hpp>

#include <cstdint>

#include "depthmask/config.h"
#include "live_support.h"

namespace dmtest {

// Frame `seq`'s colour: hues, saturations and values all over (and every 7th pixel a grey), changing
// with seq so frames mixed up show.
inline cv::Mat fake_color(uint64_t seq, int w, int h) {
  cv::Mat c(h, w, CV_8UC3);
  for (int y = 0; y < h; ++y)
    for (int x = 0; x < w; ++x) {
      const auto s = static_cast<int>(seq);
      if ((x + 3 * y + s) % 7 == 0) {
        const auto g = static_cast<uint8_t>(x * 13 + y * 5);
        c.at<cv::Vec3b>(y, x) = cv::Vec3b(g, g, g);
      } else {
        c.at<cv::Vec3b>(y, x) =
            cv::Vec3b(static_cast<uint8_t>(x * 41 + y * 7 + s * 13), static_cast<uint8_t>(y * 23 + x * 3 + s * 5),
                      static_cast<uint8_t>((x + y) * 19 + s * 29));
      }
    }
  return c;
}

// FakeSource frames with fake_color() of `color_size` (the depth's size by default; empty: no colour).
class ColorFakeSource : public FakeSource {
 public:
  ColorFakeSource(int w, int h, uint64_t frames) : FakeSource(w, h, frames), color_size(w, h) {}
  cv::Size color_size;
  bool read(depthmask::CapturedFrame& f) override {
    if (!FakeSource::read(f)) return false;
    if (!color_size.empty()) f.color = fake_color(f.sequence, color_size.width, color_size.height);
    return true;
  }
};

// 255 where live.mask.color_key `k` keeps the pixel of `color`, from cv::cvtColor's HSV.
inline cv::Mat key_reference(const cv::Mat& color, const depthmask::LiveMaskConfig::ColorKey& k) {
  cv::Mat hsv;
  cv::cvtColor(color, hsv, cv::COLOR_BGR2HSV);
  cv::Mat keep(color.size(), CV_8UC1);
  for (int y = 0; y < hsv.rows; ++y)
    for (int x = 0; x < hsv.cols; ++x) {
      const cv::Vec3b c = hsv.at<cv::Vec3b>(y, x);
      const bool hue = k.h[0] <= k.h[1] ? (c[0] >= k.h[0] && c[0] <= k.h[1]) : (c[0] >= k.h[0] || c[0] <= k.h[1]);
      const bool inside = hue && c[1] >= k.s[0] && c[1] <= k.s[1] && c[2] >= k.v[0] && c[2] <= k.v[1];
      keep.at<uint8_t>(y, x) = inside == k.keep_inside ? 255 : 0;
    }
  return keep;
}

// `out` with `invalid` wherever `keep` is 0.
inline cv::Mat invalid_where_dropped(cv::Mat out, const cv::Mat& keep, float invalid) {
  out.setTo(cv::Scalar(invalid), keep == 0);
  return out;
}

}  // namespace dmtest
