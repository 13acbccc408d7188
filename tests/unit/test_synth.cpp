// write_synthetic_dataset renders and encodes its frames in parallel: the files must hold exactly the
// frames render_synthetic_frame gives one by one, under the right names.
#include <gtest/gtest.h>

#include <opencv2/core.hpp>
#include <opencv2/imgcodecs.hpp>

#include <cstdio>

#include "depthmask/synth.h"
#include "test_support.h"

namespace {

namespace fs = std::filesystem;

bool same_pixels(const cv::Mat& a, const cv::Mat& b) {
  return a.size() == b.size() && a.type() == b.type() && cv::countNonZero(cv::Mat(a != b).reshape(1)) == 0;
}

TEST(SynthDataset, ParallelWriteHoldsEachFrameUnderItsName) {
  dmtest::TempDir tmp;
  const fs::path d = tmp.path() / "syn";
  constexpr int kFrames = 9, kW = 37, kH = 29;
  depthmask::write_synthetic_dataset(d, kFrames, kW, kH);
  for (int i = 0; i < kFrames; ++i) {
    SCOPED_TRACE(i);
    char id[16];
    std::snprintf(id, sizeof id, "%06d.png", i);
    const depthmask::SyntheticFrame f = depthmask::render_synthetic_frame(i, kW, kH);
    EXPECT_TRUE(same_pixels(cv::imread((d / "depth" / id).string(), cv::IMREAD_UNCHANGED), f.depth_mm));
    EXPECT_TRUE(same_pixels(cv::imread((d / "color" / id).string(), cv::IMREAD_UNCHANGED), f.color));
    EXPECT_TRUE(same_pixels(cv::imread((d / "mask" / id).string(), cv::IMREAD_UNCHANGED), f.mask));
  }
  EXPECT_FALSE(fs::exists(d / "depth" / "000009.png"));
  EXPECT_TRUE(fs::exists(d / "depthmask.yaml"));
}

}  // namespace
