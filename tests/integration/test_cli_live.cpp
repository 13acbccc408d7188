// `depthmask live` end to end. These need the live sources (synthetic://, replay://: branch
// live-sources), so in a build without them they fail with the placeholder's "not implemented".
#include <gtest/gtest.h>

#include <string>

#include "cli_helpers.h"
#include "layout_fixtures.h"

namespace {

namespace fs = std::filesystem;
using dmtest::Contains;
using dmtest::TempDir;

TEST(CliLive, SyntheticSourceForTwentyFramesPrintsTheSummary) {
  TempDir tmp;
  const auto r = dmcli::run_in(tmp.path(), "live --backend cpu --source 'synthetic://?size=64x48&fps=0' --frames 20");
  ASSERT_EQ(r.exit_code, 0) << r.output;
  EXPECT_TRUE(Contains(r.output, "20 frame(s) captured"));
  EXPECT_TRUE(Contains(r.output, "latency"));
  EXPECT_TRUE(Contains(r.output, "backend: cpu"));
}

TEST(CliLive, SyntheticSourceWritesFilesWithOutput) {
  TempDir tmp;
  const auto r = dmcli::run_in(tmp.path(), "live --backend cpu --source 'synthetic://?size=64x48&fps=0' --frames 6 "
                                           "--set live.overflow=block --output out");
  ASSERT_EQ(r.exit_code, 0) << r.output;
  EXPECT_TRUE(Contains(r.output, "written: 6 frame(s)"));
  EXPECT_EQ(dmcli::count_with_suffix(dmcli::file_names(tmp / "out"), ".tiff"), 6u);
}

TEST(CliLive, ReplayOfTheSampleEndsWithTheSource) {
  TempDir tmp;
  const fs::path data = dmcli::copy_sample(tmp / "sample");
  const auto r = dmcli::run_in(tmp.path(), "live --backend cpu --set live.overflow=block --source " +
                                               dmtest::q("replay://" + data.string() + "?fps=0"));
  ASSERT_EQ(r.exit_code, 0) << r.output;
  EXPECT_TRUE(Contains(r.output, "8 frame(s) captured, 8 processed"));
  EXPECT_TRUE(Contains(r.output, "source ended"));
}

TEST(CliLive, BadLiveKeyIsAUsageError) {
  TempDir tmp;
  const auto r = dmcli::run_in(tmp.path(), "live --set live.overflow=newest --frames 1");
  EXPECT_EQ(r.exit_code, 2) << r.output;
  EXPECT_TRUE(Contains(r.output, "live.overflow"));
  EXPECT_TRUE(Contains(r.output, "drop_oldest, block"));
}

TEST(CliLive, PrintConfigShowsTheLiveSection) {
  TempDir tmp;
  const auto r = dmcli::run_in(tmp.path(), "live --publish tcp://127.0.0.1:5599 --print-config");
  ASSERT_EQ(r.exit_code, 0) << r.output;
  EXPECT_TRUE(Contains(r.output, "live:"));
  EXPECT_TRUE(Contains(r.output, "tcp://127.0.0.1:5599"));
}

TEST(CliLive, TumReplayCountsTheUnpairedFrames) {
  // The TUM fixture has an rgb frame and a depth frame without a partner within 20 ms.
  TempDir tmp;
  dmfix::write_tum(tmp / "seq");
  const auto r = dmcli::run_in(tmp.path(), "live --backend cpu --set live.overflow=block --source " +
                                               dmtest::q("replay://" + (tmp / "seq").string()));
  ASSERT_EQ(r.exit_code, 0) << r.output;
  EXPECT_TRUE(Contains(r.output, "4 frame(s) captured, 4 processed")) << r.output;
  EXPECT_TRUE(Contains(r.output, "unpaired: 2 frame(s) dropped by the source")) << r.output;
  EXPECT_TRUE(Contains(r.output, "live.sync.tolerance_ms (20 ms)")) << r.output;
}

TEST(CliLive, InfoReportsOpenNi2) {
  TempDir tmp;
  const auto r = dmcli::run_in(tmp.path(), "info");
  ASSERT_EQ(r.exit_code, 0) << r.output;
  EXPECT_TRUE(Contains(r.output, "openni2 (OpenNI2 depth cameras and .oni recordings (untested on hardware))") ||
              Contains(r.output, "openni2 (unavailable: not built in"))
      << r.output;
}

TEST(CliLive, OpenNi2WithoutACameraFailsNamingTheProblem) {
  TempDir tmp;
  const auto r = dmcli::run_in(tmp.path(), "live --backend cpu --frames 1 --source openni2://");
  EXPECT_NE(r.exit_code, 0) << r.output;
  EXPECT_TRUE(Contains(r.output, "no OpenNI2 device is attached") || Contains(r.output, "not built in")) << r.output;
}

}  // namespace
