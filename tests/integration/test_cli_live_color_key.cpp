// `depthmask live` with live.mask.color_key end to end: the synthetic source's frames written as TIFF
// equal the rule applied by hand (the label mask AND OpenCV's cvtColor HSV in the key's range), for a
// key that keeps inside and one that keeps outside.
#include <gtest/gtest.h>

#include <opencv2/imgcodecs.hpp>

#include <string>

#include "cli_helpers.h"
#include "color_key_support.h"
#include "depthmask/synth.h"

namespace {

namespace fs = std::filesystem;
using dmtest::Contains;
using dmtest::TempDir;

constexpr int kW = 96, kH = 72;

void check_run(const std::string& key_yaml, const depthmask::LiveMaskConfig::ColorKey& key) {
  TempDir tmp;
  const auto r = dmcli::run_in(tmp.path(),
                               "live --backend cpu --source 'synthetic://?size=96x72&fps=0' --frames 4 "
                               "--set live.overflow=block --output out --set " +
                                   dmtest::q("live.mask.color_key=" + key_yaml));
  ASSERT_EQ(r.exit_code, 0) << r.output;
  EXPECT_TRUE(Contains(r.output, "written: 4 frame(s)")) << r.output;
  EXPECT_TRUE(Contains(r.output, "colour key")) << r.output;
  int kept_total = 0, labelled_total = 0;
  for (int i = 0; i < 4; ++i) {
    const depthmask::SyntheticFrame f = depthmask::render_synthetic_frame(i, kW, kH);
    char name[32];
    std::snprintf(name, sizeof name, "%06d.tiff", i);
    const cv::Mat got = cv::imread((tmp / "out" / name).string(), cv::IMREAD_UNCHANGED);
    ASSERT_FALSE(got.empty()) << name << " in " << r.output;
    ASSERT_EQ(got.type(), CV_32FC1);
    const cv::Mat keep = dmtest::key_reference(f.color, key);
    cv::Mat want(kH, kW, CV_32FC1);
    for (int y = 0; y < kH; ++y)
      for (int x = 0; x < kW; ++x) {
        const uint16_t mm = f.depth_mm.at<uint16_t>(y, x);
        const bool labelled = f.mask.at<uint8_t>(y, x) > 0;  // mask.threshold 0
        const bool kept = labelled && keep.at<uint8_t>(y, x) != 0 && mm > 0 && mm <= 10000;
        labelled_total += labelled && mm > 0;
        kept_total += kept;
        want.at<float>(y, x) = kept ? static_cast<float>(mm) * 0.001f : 0.0f;
      }
    EXPECT_TRUE(dmtest::SameBits(want, got)) << name;
  }
  // The key must decide something: some labelled pixels kept, some dropped.
  EXPECT_GT(kept_total, 0);
  EXPECT_LT(kept_total, labelled_total);
}

depthmask::LiveMaskConfig::ColorKey key(int h0, int h1, int s0, bool inside) {
  depthmask::LiveMaskConfig::ColorKey k;
  k.h[0] = h0, k.h[1] = h1, k.s[0] = s0, k.keep_inside = inside;
  return k;
}

TEST(CliLiveColorKey, GreenObjectsKeptByAnInsideKey) {
  check_run("{h: [35, 85], s: [60, 255], v: [0, 255]}", key(35, 85, 60, true));
}

TEST(CliLiveColorKey, RedsRemovedByAWrappingOutsideKey) {
  check_run("{h: [160, 25], s: [60, 255], v: [0, 255], keep: outside}", key(160, 25, 60, false));
}

}  // namespace
