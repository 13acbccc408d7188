// The `reason` output end to end: `run` writes {id}.reason.png beside the masked depth (8-bit codes,
// 0 exactly where the TIFF holds depth), the preview gains the colour-mapped fourth panel, the
// outputs are recorded and resumed like any other, and `live` writes it too (the depth band's code).
// With reason off nothing changes: the same TIFF bytes.
#include <gtest/gtest.h>

#include <opencv2/imgcodecs.hpp>

#include <set>
#include <string>

#include "cli_helpers.h"
#include "depthmask/kernels/drop_reason.h"
#include "reason_support.h"
#include "test_support.h"

namespace fs = std::filesystem;
using dmcli::q;
using dmtest::TempDir;

namespace {

dmtest::CmdResult run_sample(const fs::path& out, const std::string& extra) {
  return dmcli::run_in(fs::current_path(), "run --config " + q(dmtest::sample_dir() / "depthmask.yaml") + " --output " +
                                               q(out) + " --backend cpu " + extra);
}

TEST(CliReason, RunWritesCodesThatMatchTheDepth) {
  TempDir tmp;
  const fs::path with = tmp.path() / "with", without = tmp.path() / "without";
  const auto r = run_sample(with, "--set 'output.format=[tiff,reason]' output.preview=true --set mask.erode=2");
  ASSERT_EQ(r.exit_code, 0) << r.output;
  const auto plain = run_sample(without, "--set 'output.format=[tiff]' output.preview=false --set mask.erode=2");
  ASSERT_EQ(plain.exit_code, 0) << plain.output;
  std::set<int> seen;
  for (const std::string& id : dmcli::sample_ids()) {
    SCOPED_TRACE(id);
    const cv::Mat codes = cv::imread((with / (id + ".reason.png")).string(), cv::IMREAD_UNCHANGED);
    ASSERT_FALSE(codes.empty());
    ASSERT_EQ(codes.type(), CV_8UC1);
    const cv::Mat depth = dmcli::read_tiff(with / (id + ".tiff"));
    EXPECT_TRUE(dmtest::codes_match_output(depth, codes, 0.0f));
    for (int y = 0; y < codes.rows; ++y)
      for (int x = 0; x < codes.cols; ++x) seen.insert(codes.at<uint8_t>(y, x));
    // Reason off: the masked depth is the same, byte for byte.
    EXPECT_EQ(dmtest::read_bytes(with / (id + ".tiff")), dmtest::read_bytes(without / (id + ".tiff")));
    const cv::Mat preview = cv::imread((with / (id + ".preview.png")).string(), cv::IMREAD_COLOR);
    EXPECT_EQ(preview.cols, 4 * codes.cols);
  }
  // The sample has objects, background, holes, the far wall (depth.max 2 m) and eroded edges.
  for (const int code : {depthmask::kKept, depthmask::kDropMaskRule, depthmask::kDropErosion})
    EXPECT_TRUE(seen.count(code)) << "no pixel with code " << code;
  // Recorded and resumed like the other outputs.
  const auto again = run_sample(with, "--set 'output.format=[tiff,reason]' output.preview=true --set mask.erode=2");
  ASSERT_EQ(again.exit_code, 0) << again.output;
  EXPECT_NE(again.output.find("8 skipped (done)"), std::string::npos) << again.output;
}

TEST(CliReason, LiveWritesTheBandCode) {
  TempDir tmp;
  const auto r = dmcli::run_in(tmp.path(),
                               "live --backend cpu --source 'synthetic://?size=64x48&fps=0' --frames 4 "
                               "--set live.overflow=block --output out --set 'output.format=[tiff,reason]' "
                               "--set 'live.mask.depth_band=[0.8, 1.2]'");
  ASSERT_EQ(r.exit_code, 0) << r.output;
  std::set<int> seen;
  size_t files = 0;
  for (const auto& e : fs::directory_iterator(tmp.path() / "out")) {
    const std::string name = e.path().filename().string();
    if (name.size() < 11 || name.compare(name.size() - 11, 11, ".reason.png") != 0) continue;
    ++files;
    const cv::Mat codes = cv::imread(e.path().string(), cv::IMREAD_UNCHANGED);
    ASSERT_EQ(codes.type(), CV_8UC1);
    const std::string stem = name.substr(0, name.size() - 11);
    EXPECT_TRUE(dmtest::codes_match_output(dmcli::read_tiff(tmp.path() / "out" / (stem + ".tiff")), codes, 0.0f));
    for (int y = 0; y < codes.rows; ++y)
      for (int x = 0; x < codes.cols; ++x) seen.insert(codes.at<uint8_t>(y, x));
  }
  EXPECT_EQ(files, 4u);
  EXPECT_TRUE(seen.count(depthmask::kDropDepthBand)) << r.output;
}

}  // namespace
