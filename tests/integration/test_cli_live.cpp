// `depthmask live` end to end. These need the live sources (synthetic://, replay://: branch
// live-sources), so in a build without them they fail with the placeholder's "not implemented".
#include <gtest/gtest.h>

#include <cstdlib>
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
  const auto r = dmcli::run_in(tmp.path(),
                               "live --backend cpu --source 'synthetic://?size=64x48&fps=0' --frames 6 "
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

// live.overflow auto (the default) blocks an unpaced replay: every frame of 12 looped to 24 is written
// with its preview, however slowly the machine writes (drop_oldest dropped 18 of 24 on 2 cores).
// `live` over 12 synthetic frames of `size` looped to 24, as fast as possible, with `flags`.
dmcli::CmdResult unpaced_replay(const TempDir& tmp, const std::string& size, const std::string& flags) {
  EXPECT_EQ(dmcli::run_in(tmp.path(), "synth --output data --frames 12 --size " + size).exit_code, 0);
  return dmcli::run_in(tmp.path(), "live --backend cpu --frames 24 " + flags + " --source " +
                                       dmtest::q("replay://" + (tmp / "data").string() + "?fps=0&loop=1"));
}

TEST(CliLive, UnpacedReplayLosesNoFrameUnderAuto) {
  TempDir tmp;
  const auto r = unpaced_replay(tmp, "320x240", "--output out --set output.preview=true");
  ASSERT_EQ(r.exit_code, 0) << r.output;
  EXPECT_TRUE(Contains(r.output, "24 frame(s) captured, 24 processed, 0 dropped (overflow), 0 failed")) << r.output;
  EXPECT_TRUE(Contains(r.output, "written: 24 frame(s)")) << r.output;
  EXPECT_TRUE(Contains(r.output, "overflow: auto → block: an unpaced replay waits")) << r.output;
  // The loop's second pass writes the same 12 ids again.
  EXPECT_EQ(dmcli::count_with_suffix(dmcli::file_names(tmp / "out"), ".tiff"), 12u);
  EXPECT_EQ(dmcli::count_with_suffix(dmcli::file_names(tmp / "out"), ".preview.png"), 12u);
}

TEST(CliLive, AnExplicitDropOldestStillAppliesToAnUnpacedReplay) {
  TempDir tmp;
  const auto r = unpaced_replay(tmp, "64x48", "--set live.overflow=drop_oldest");
  ASSERT_EQ(r.exit_code, 0) << r.output;
  EXPECT_TRUE(Contains(r.output, "overflow: drop_oldest (live.overflow)")) << r.output;
  EXPECT_TRUE(Contains(r.output, "24 frame(s) captured")) << r.output;
}

TEST(CliLive, AutoDropsOldestForACameraLikeSource) {
  TempDir tmp;
  const auto r = dmcli::run_in(tmp.path(), "live --backend cpu --source 'synthetic://?size=32x24&fps=0' --frames 5");
  ASSERT_EQ(r.exit_code, 0) << r.output;
  EXPECT_TRUE(Contains(r.output, "overflow: auto → drop_oldest")) << r.output;
}

TEST(CliLive, BadLiveKeyIsAUsageError) {
  TempDir tmp;
  const auto r = dmcli::run_in(tmp.path(), "live --set live.overflow=newest --frames 1");
  EXPECT_EQ(r.exit_code, 2) << r.output;
  EXPECT_TRUE(Contains(r.output, "live.overflow"));
  EXPECT_TRUE(Contains(r.output, "auto, drop_oldest, block"));
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
  EXPECT_TRUE(Contains(r.output, "no OpenNI2 device is attached") || Contains(r.output, "OpenNI2 does not start") ||
              Contains(r.output, "not built in"))
      << r.output;
}

TEST(CliLive, PreviewWithoutADisplayIsOffAndTheRunGoesOn) {
  TempDir tmp;
  const auto r = dmcli::run_shell("cd " + dmtest::q(tmp.path()) + " && env -u DISPLAY -u WAYLAND_DISPLAY " +
                                  dmtest::depthmask_cmd() +
                                  " live --backend cpu --source 'synthetic://?size=64x48&fps=0' --frames 20 --preview "
                                  "--set live.overflow=block");
  ASSERT_EQ(r.exit_code, 0) << r.output;
  EXPECT_TRUE(Contains(r.output, "20 frame(s) captured, 20 processed")) << r.output;
  EXPECT_TRUE(
      Contains(r.output, "live.preview: no display ($DISPLAY and $WAYLAND_DISPLAY are unset): the preview is off"))
      << r.output;
  EXPECT_TRUE(Contains(r.output, "preview: 0 frame(s) shown")) << r.output;
}

TEST(CliLive, PreviewWindowUnderXvfb) {
  if (std::system("command -v xvfb-run >/dev/null 2>&1") != 0)
    GTEST_SKIP() << "xvfb-run is not installed (package xvfb; scripts/install-deps.sh)";
  TempDir tmp;
  // 2 s at 30 fps: the window has time to come up and show frames. No D-Bus session bus: without
  // one named, libdbus (under OpenCV's Qt window, for accessibility) autolaunches one through
  // dbus-launch: it forks and reads the child's pipe, and under ASan the forked child once deadlocked
  // in the allocator before its exec, so the read waited for ever. An address that fails at once
  // means no fork; the window still opens.
  const auto r = dmcli::run_shell("cd " + dmtest::q(tmp.path()) +
                                  " && DBUS_SESSION_BUS_ADDRESS=unix:path=/nonexistent/depthmask-test xvfb-run -a " +
                                  dmtest::depthmask_cmd() +
                                  " live --backend cpu --source 'synthetic://?size=160x120&fps=30' --frames 60 "
                                  "--preview --set live.overflow=block");
  ASSERT_EQ(r.exit_code, 0) << r.output;
  EXPECT_TRUE(Contains(r.output, "60 frame(s) captured, 60 processed")) << r.output;
  EXPECT_TRUE(Contains(r.output, "live.preview: showing the masked depth")) << r.output;
  EXPECT_FALSE(Contains(r.output, "preview: 0 frame(s) shown")) << r.output;
  EXPECT_TRUE(Contains(r.output, "frame(s) shown")) << r.output;
}

}  // namespace

namespace {

TEST(CliLive, ServeBindsPrintsTheServedLineAndInfoSaysSo) {
  TempDir tmp;
  const auto info = dmcli::run_in(tmp.path(), "info");
  if (Contains(info.output, "live --serve: unavailable"))
    GTEST_SKIP() << "built without the server (DEPTHMASK_WITH_SERVE)";
  EXPECT_TRUE(Contains(info.output, "live --serve: HTTP and WebSocket")) << info.output;
  const auto r = dmcli::run_in(
      tmp.path(), "live --backend cpu --source 'synthetic://?size=64x48&fps=30' --frames 10 --serve 127.0.0.1:0");
  ASSERT_EQ(r.exit_code, 0) << r.output;
  EXPECT_TRUE(Contains(r.output, "serving on http://127.0.0.1:")) << r.output;
  EXPECT_TRUE(Contains(r.output, "served:  0 client(s), 0 message(s) sent")) << r.output;
  EXPECT_FALSE(Contains(r.output, "visible on the network")) << r.output;
}

TEST(CliLive, ServeOnABadAddressFailsNamingTheKey) {
  TempDir tmp;
  auto r = dmcli::run_in(tmp.path(), "live --source 'synthetic://?size=64x48' --frames 1 --serve http://x:80");
  EXPECT_EQ(r.exit_code, 2) << r.output;
  EXPECT_TRUE(Contains(r.output, "live.serve")) << r.output;
  EXPECT_TRUE(Contains(r.output, "ADDR:PORT")) << r.output;
  r = dmcli::run_in(tmp.path(), "live --source 'synthetic://?size=64x48' --frames 1 --serve 256.1.1.1:80");
  EXPECT_EQ(r.exit_code, 2) << r.output;
  EXPECT_TRUE(Contains(r.output, "live.serve")) << r.output;
}

}  // namespace
