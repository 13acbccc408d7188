// End-to-end tests of a ROS 2 bag as the input (docs/ROSBAG.md, "Reading"), on bags written by
// `depthmask synth --format mcap` (the bags of an independent writer: tests/ros/bag_vs_folder.sh):
// the same frames as a synthetic folder give byte-identical outputs; a lone .mcap; the doctor's
// topics; explicit topics; a bag cut short keeps its frames before the cut; one cut in its summary is
// read whole, with a warning.
#include <gtest/gtest.h>

#include <algorithm>
#include <cstring>
#include <string>
#include <vector>

#include "cli_helpers.h"
#include "test_support.h"

namespace {

namespace fs = std::filesystem;
using dmcli::contains;
using dmcli::run_in;
using dmtest::q;
using dmtest::TempDir;

class CliRosbag : public ::testing::Test {
 protected:
  void SetUp() override {
    if (!DEPTHMASK_WITH_ROSBAG) GTEST_SKIP() << "built without the bag libraries (DEPTHMASK_WITH_ROSBAG off)";
  }
};

std::vector<fs::path> tiffs(const fs::path& dir) {
  std::vector<fs::path> v;
  for (const auto& e : fs::directory_iterator(dir))
    if (e.path().extension() == ".tiff") v.push_back(e.path());
  std::sort(v.begin(), v.end());
  return v;
}

TEST_F(CliRosbag, ASyntheticBagMasksAsTheSameFramesInAFolder) {
  TempDir tmp;
  ASSERT_EQ(run_in(tmp.path(), "synth -o bag --frames 6 --size 96x64 --format mcap").exit_code, 0);
  ASSERT_EQ(run_in(tmp.path(), "synth -o folder --frames 6 --size 96x64").exit_code, 0);
  EXPECT_TRUE(fs::exists(tmp / "bag" / "metadata.yaml"));
  const auto bag = run_in(tmp.path(), "run --input bag --output out-bag --set output.format=[tiff,npy]");
  ASSERT_EQ(bag.exit_code, 0) << bag.output;
  EXPECT_TRUE(contains(bag.output, "layout rosbag2")) << bag.output;
  const auto folder = run_in(tmp.path(), "run --input folder --output out-folder --set output.format=[tiff,npy]");
  ASSERT_EQ(folder.exit_code, 0) << folder.output;
  const auto a = tiffs(tmp / "out-bag"), b = tiffs(tmp / "out-folder");
  ASSERT_EQ(a.size(), 6u);
  ASSERT_EQ(b.size(), 6u);
  EXPECT_EQ(a.front().filename(), "1700000000000000000.tiff");  // the depth stamp, 19 digits
  for (size_t i = 0; i < a.size(); ++i) {
    EXPECT_EQ(dmtest::read_bytes(a[i]), dmtest::read_bytes(b[i])) << a[i] << " vs " << b[i];
    fs::path na = a[i], nb = b[i];
    EXPECT_EQ(dmtest::read_bytes(na.replace_extension(".npy")), dmtest::read_bytes(nb.replace_extension(".npy")));
  }
}

TEST_F(CliRosbag, ALoneMcapFileIsABagAndExplicitTopicsAreChecked) {
  TempDir tmp;
  ASSERT_EQ(run_in(tmp.path(), "synth -o bag --frames 3 --size 64x48 --format mcap").exit_code, 0);
  const auto lone = run_in(tmp.path(), "run --input bag/synthetic_0.mcap --output out --set output.format=[tiff]");
  ASSERT_EQ(lone.exit_code, 0) << lone.output;
  EXPECT_EQ(tiffs(tmp / "out").size(), 3u);
  const auto named = run_in(tmp.path(),
                            "run --input bag --output out2 --set input.topics.depth=/camera/depth/image_rect_raw "
                            "--set input.topics.mask=/seg/mask --set input.topics.color=none");
  EXPECT_EQ(named.exit_code, 0) << named.output;
  const auto wrong = run_in(tmp.path(), "run --input bag --output out3 --set input.topics.depth=/no/such/topic");
  EXPECT_EQ(wrong.exit_code, 1) << wrong.output;
  EXPECT_TRUE(contains(wrong.output, "/no/such/topic")) << wrong.output;
  EXPECT_TRUE(contains(wrong.output, "input.topics.depth")) << wrong.output;
}

TEST_F(CliRosbag, TheDoctorListsTheTopicsAndWhichTheRunReads) {
  TempDir tmp;
  ASSERT_EQ(run_in(tmp.path(), "synth -o bag --frames 4 --size 64x48 --format mcap").exit_code, 0);
  const auto r = run_in(tmp.path(), "doctor --input bag");
  EXPECT_EQ(r.exit_code, 0) << r.output;
  EXPECT_TRUE(contains(r.output, "4 topics in the bag")) << r.output;
  EXPECT_TRUE(
      contains(r.output, "/camera/depth/image_rect_raw  sensor_msgs/msg/Image (16UC1), 4 messages, 30.0 Hz  <- depth"))
      << r.output;
  EXPECT_TRUE(contains(r.output, "/seg/mask  sensor_msgs/msg/Image (mono8)")) << r.output;
  EXPECT_TRUE(contains(r.output, "input.topics.camera_info: /camera/depth/camera_info")) << r.output;
  EXPECT_TRUE(contains(r.output, "sizes: depth 64x48, mask 64x48, color 64x48")) << r.output;
}

TEST_F(CliRosbag, ABagCutShortKeepsTheFramesBeforeTheCut) {
  TempDir tmp;
  // 640x480: a few frames a chunk (4 MiB), so a cut at 60 % leaves whole chunks before it.
  ASSERT_EQ(run_in(tmp.path(), "synth -o bag --frames 8 --size 640x480 --format mcap").exit_code, 0);
  const fs::path mcap = tmp / "bag" / "synthetic_0.mcap";
  fs::resize_file(mcap, fs::file_size(mcap) * 6 / 10);
  const auto r = run_in(tmp.path(), "run --input bag --output out --set output.format=[tiff]");
  EXPECT_EQ(r.exit_code, 1) << r.output;
  EXPECT_TRUE(contains(r.output, "synthetic_0.mcap")) << r.output;
  EXPECT_TRUE(contains(r.output, "the frames before it are listed")) << r.output;
  const size_t kept = tiffs(tmp / "out").size();
  EXPECT_TRUE(contains(r.output, "runs past the end of the file")) << r.output;
  // The last whole chunk ends inside a frame: its first messages are counted as what they are.
  EXPECT_TRUE(contains(r.output, "message(s) that belong to no depth frame")) << r.output;
  EXPECT_FALSE(contains(r.output, "file(s) that belong")) << r.output;
  EXPECT_GE(kept, 1u) << r.output;
  EXPECT_LT(kept, 8u) << r.output;
}

TEST_F(CliRosbag, ABagCutInItsSummaryIsReadWholeByScanningAndSaysSo) {
  TempDir tmp;
  ASSERT_EQ(run_in(tmp.path(), "synth -o bag --frames 8 --size 64x48 --format mcap").exit_code, 0);
  const fs::path mcap = tmp / "bag" / "synthetic_0.mcap";
  // The footer (29 bytes, then the 8-byte magic) gives where the summary starts; cut a few bytes into
  // it: every chunk and the Data End record stay whole, as when a recorder is killed while closing.
  const std::vector<uint8_t> bytes = dmtest::read_bytes(mcap);
  ASSERT_GT(bytes.size(), 37u);
  uint64_t summary_start = 0;
  std::memcpy(&summary_start, bytes.data() + bytes.size() - 37 + 9, 8);
  ASSERT_GT(summary_start, 8u);
  ASSERT_LT(summary_start + 5, bytes.size());
  fs::resize_file(mcap, summary_start + 5);
  const auto r = run_in(tmp.path(), "run --input bag --output out --set output.format=[tiff]");
  EXPECT_EQ(r.exit_code, 0) << r.output;
  EXPECT_EQ(tiffs(tmp / "out").size(), 8u) << r.output;
  EXPECT_TRUE(contains(r.output, "synthetic_0.mcap' has no footer")) << r.output;
  EXPECT_TRUE(contains(r.output, "reading its messages by scanning")) << r.output;
}

}  // namespace

namespace {

// `live` replays a bag (replay://) and records one (output.format mcap): every frame's depth in
// depthmask.mcap, with metadata.yaml, and the TIFFs beside it.
TEST_F(CliRosbag, LiveReplaysABagAndRecordsOne) {
  TempDir tmp;
  ASSERT_EQ(run_in(tmp.path(), "synth -o bag --frames 5 --size 64x48 --format mcap").exit_code, 0);
  const auto r = run_in(tmp.path(), "live --backend cpu --set live.overflow=block --source " +
                                        q("replay://" + (tmp / "bag").string() + "?fps=0") +
                                        " --output out --set 'output.format=[tiff,mcap]' --set output.mcap.mask=true");
  ASSERT_EQ(r.exit_code, 0) << r.output;
  EXPECT_TRUE(contains(r.output, "5 frame(s) captured, 5 processed")) << r.output;
  EXPECT_TRUE(contains(r.output, "5 frame(s) recorded in")) << r.output;
  EXPECT_TRUE(fs::exists(tmp / "out" / "depthmask.mcap")) << r.output;
  EXPECT_TRUE(fs::exists(tmp / "out" / "metadata.yaml")) << r.output;
  EXPECT_EQ(tiffs(tmp / "out").size(), 5u);
  // The recording is a bag `run` reads in turn: its depth topic holds the five masked frames.
  const auto again = run_in(tmp.path(), "doctor --input out");
  EXPECT_TRUE(contains(again.output, "/depthmask/depth  sensor_msgs/msg/Image (32FC1), 5 messages")) << again.output;
  EXPECT_TRUE(contains(again.output, "<- depth")) << again.output;
  EXPECT_TRUE(contains(again.output, "/depthmask/mask  sensor_msgs/msg/Image (mono8), 5 messages")) << again.output;
}

}  // namespace
