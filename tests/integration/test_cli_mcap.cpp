// End-to-end tests of output.format mcap (docs/ROSBAG.md, "Writing"): a folder run's bag read back
// (pixels bitwise those of the TIFFs of the same run, NaN where they hold the invalid value; stamps;
// camera_info; metadata.yaml), two shards merged by the second to finish, a killed run's part
// (cut inside its last chunk) and a frame redone after a crash between its chunk and its record, and
// `status --finalize`.
#include <gtest/gtest.h>

#include <fcntl.h>
#include <sys/file.h>
#include <unistd.h>

#include <yaml-cpp/yaml.h>
#include <nlohmann/json.hpp>
#include <opencv2/imgcodecs.hpp>

#include <cmath>
#include <cstring>
#include <map>
#include <string>
#include <vector>

#include "cli_helpers.h"
#include "depthmask/bag_output.h"
#include "depthmask/mcap.h"
#include "depthmask/ros_msgs.h"
#include "test_support.h"

namespace {

namespace dm = depthmask;
namespace fs = std::filesystem;
using dmcli::contains;
using dmtest::q;
using dmtest::TempDir;

const std::string kCleanEnv = "env -u SLURM_ARRAY_TASK_ID -u JOB_COMPLETION_INDEX -u DEPTHMASK_SHARD_COUNT ";
const std::string kBagRun = "run --config depthmask.yaml --set 'output.format=[tiff,mcap]' --set output.preview=false";

// A bag's messages by topic, in file order.
struct BagRead {
  std::map<std::string, std::vector<std::pair<uint64_t, std::vector<uint8_t>>>> by_topic;
  std::vector<uint64_t> times;  // every message's log time, in file order
  bool summary = false;
  std::string profile;
};

BagRead read_bag(const fs::path& file) {
  BagRead out;
  dm::mcap::Reader r(file);
  out.summary = r.has_summary();
  out.profile = r.profile();
  r.scan([&](const dm::mcap::MessageInfo& m, const uint8_t* data, size_t size) {
    EXPECT_EQ(m.log_time, m.publish_time);
    out.by_topic[r.channels().at(m.channel_id).topic].push_back({m.log_time, std::vector<uint8_t>(data, data + size)});
    out.times.push_back(m.log_time);
    return true;
  });
  return out;
}

uint32_t bits(float f) {
  uint32_t b;
  std::memcpy(&b, &f, 4);
  return b;
}

// The depth messages equal the run's TIFFs: bitwise where kept, NaN where the TIFF holds 0 (the
// default output.invalid); stamps frame index / 30 s; the header's frame_id the configured one.
void expect_bag_matches_tiffs(const fs::path& out, size_t frames) {
  const BagRead bag = read_bag(out / "depthmask.mcap");
  EXPECT_TRUE(bag.summary);
  EXPECT_EQ(bag.profile, "ros2");
  EXPECT_TRUE(std::is_sorted(bag.times.begin(), bag.times.end()));
  const auto& depth = bag.by_topic.at("/depthmask/depth");
  ASSERT_EQ(depth.size(), frames);
  for (size_t i = 0; i < frames; ++i) {
    char id[16];
    std::snprintf(id, sizeof id, "%06zu", i);
    const dm::ros::Image img = dm::ros::decode_image(depth[i].second.data(), depth[i].second.size(), "depth");
    EXPECT_EQ(img.encoding, "32FC1");
    EXPECT_EQ(img.header.frame_id, "camera");
    EXPECT_EQ(depth[i].first, static_cast<uint64_t>(std::llround(static_cast<double>(i) / 30 * 1e9)));
    EXPECT_EQ(img.header.stamp.nanoseconds(), static_cast<int64_t>(depth[i].first));
    const cv::Mat tiff = cv::imread((out / (std::string(id) + ".tiff")).string(), cv::IMREAD_UNCHANGED);
    ASSERT_EQ(tiff.type(), CV_32FC1);
    ASSERT_EQ(img.width, static_cast<uint32_t>(tiff.cols));
    ASSERT_EQ(img.height, static_cast<uint32_t>(tiff.rows));
    const auto* px = reinterpret_cast<const float*>(img.data.data());
    size_t differ = 0, nan = 0;
    for (int y = 0; y < tiff.rows; ++y)
      for (int x = 0; x < tiff.cols; ++x) {
        const float t = tiff.at<float>(y, x), b = px[size_t(y) * tiff.cols + x];
        if (t == 0.0f) {
          nan += std::isnan(b);
          differ += !std::isnan(b);
        } else {
          differ += bits(t) != bits(b);
        }
      }
    EXPECT_EQ(differ, 0u) << "frame " << id;
    EXPECT_GT(nan, 0u) << "frame " << id;
  }
  const auto& info = bag.by_topic.at("/depthmask/camera_info");
  ASSERT_EQ(info.size(), frames);
  const dm::ros::CameraInfo ci = dm::ros::decode_camera_info(info[0].second.data(), info[0].second.size(), "info");
  const double k[9] = {249.6, 0, 159.5, 0, 249.6, 119.5, 0, 0, 1};
  for (int i = 0; i < 9; ++i) EXPECT_DOUBLE_EQ(ci.k[i], k[i]) << i;
  EXPECT_EQ(ci.width, 320u);
  EXPECT_EQ(ci.height, 240u);
  EXPECT_EQ(ci.header.stamp.nanoseconds(), 0);
  EXPECT_TRUE(dm::list_bag_parts(out).empty());
}

size_t count_parts(const fs::path& out) { return dm::list_bag_parts(out).size(); }

// `depthmask run` of the bag's settings plus `extra`, in `in`, untouched by a job engine's variables.
dmtest::CmdResult run_bag(const fs::path& in, const std::string& extra) {
  return dmtest::run_shell("cd " + q(in) + " && " + kCleanEnv + dmtest::depthmask_cmd() + " " + kBagRun + extra);
}

class CliMcap : public ::testing::Test {
 protected:
  void SetUp() override {
    if (!DEPTHMASK_WITH_ROSBAG) GTEST_SKIP() << "built without the bag libraries (DEPTHMASK_WITH_ROSBAG off)";
  }
};

TEST_F(CliMcap, FolderRunWritesOneBagEqualToItsTiffs) {
  TempDir tmp;
  const fs::path in = dmcli::copy_sample(tmp / "in");
  const auto r = run_bag(in,
                         " --set output.mcap.mask=true --set output.mcap.reason=true "
                         "--set output.mcap.compressed_depth=true");
  ASSERT_EQ(r.exit_code, 0) << r.output;
  expect_bag_matches_tiffs(in / "out", 8);
  const BagRead bag = read_bag(in / "out" / "depthmask.mcap");
  for (const char* t : {"/depthmask/mask", "/depthmask/reason", "/depthmask/depth/compressedDepth"})
    EXPECT_EQ(bag.by_topic.at(t).size(), 8u) << t;
  const dm::ros::Image mask = dm::ros::decode_image(bag.by_topic.at("/depthmask/mask")[0].second.data(),
                                                    bag.by_topic.at("/depthmask/mask")[0].second.size(), "mask");
  EXPECT_EQ(mask.encoding, "mono8");

  const YAML::Node md = YAML::LoadFile((in / "out" / "metadata.yaml").string())["rosbag2_bagfile_information"];
  EXPECT_EQ(md["version"].as<int>(), 5);
  EXPECT_EQ(md["storage_identifier"].as<std::string>(), "mcap");
  EXPECT_EQ(md["message_count"].as<uint64_t>(), 40u);
  EXPECT_EQ(md["relative_file_paths"][0].as<std::string>(), "depthmask.mcap");
  EXPECT_EQ(md["topics_with_message_count"].size(), 5u);
  for (const auto& t : md["topics_with_message_count"]) {
    EXPECT_EQ(t["message_count"].as<uint64_t>(), 8u);
    EXPECT_FALSE(t["topic_metadata"]["offered_qos_profiles"].as<std::string>().empty());
  }
  // A re-run finds everything done: the bag stays as it is.
  const auto bytes = dmtest::read_bytes(in / "out" / "depthmask.mcap");
  const auto again = run_bag(in,
                             " --set output.mcap.mask=true --set output.mcap.reason=true "
                             "--set output.mcap.compressed_depth=true");
  ASSERT_EQ(again.exit_code, 0) << again.output;
  EXPECT_EQ(dmtest::read_bytes(in / "out" / "depthmask.mcap"), bytes);
  EXPECT_EQ(count_parts(in / "out"), 0u);
}

TEST_F(CliMcap, ARunWritingOnlyTheBagRecordsItsFramesAndMerges) {
  TempDir tmp;
  const fs::path in = dmcli::copy_sample(tmp / "in");
  const auto r = run_bag(in, " --set 'output.format=[mcap]'");
  ASSERT_EQ(r.exit_code, 0) << r.output;
  EXPECT_TRUE(contains(r.output, "merged into")) << r.output;
  EXPECT_EQ(read_bag(in / "out" / "depthmask.mcap").by_topic.at("/depthmask/depth").size(), 8u);
  EXPECT_EQ(count_parts(in / "out"), 0u);
  EXPECT_FALSE(fs::exists(in / "out" / ".depthmask-bag.lock"));
  const auto status = dmcli::run_in(in, "status out");
  EXPECT_EQ(status.exit_code, 0) << status.output;
  const auto again = run_bag(in, " --set 'output.format=[mcap]'");
  EXPECT_TRUE(contains(again.output, "8 of 8 frame(s) already done")) << again.output;
}

TEST_F(CliMcap, TheSecondShardToFinishMergesTheParts) {
  TempDir tmp;
  const fs::path in = dmcli::copy_sample(tmp / "in");
  const auto first = run_bag(in, " --shard 1/2");
  ASSERT_EQ(first.exit_code, 0) << first.output;
  EXPECT_FALSE(fs::exists(in / "out" / "depthmask.mcap"));
  EXPECT_EQ(count_parts(in / "out"), 1u);
  // Before the merge, status and report read the folder as ever.
  EXPECT_EQ(dmcli::run_in(in, "status out").exit_code, 1);
  const auto second = run_bag(in, " --shard 0/2");
  ASSERT_EQ(second.exit_code, 0) << second.output;
  EXPECT_TRUE(contains(second.output, "merged into")) << second.output;
  expect_bag_matches_tiffs(in / "out", 8);
  EXPECT_EQ(dmcli::run_in(in, "status out").exit_code, 0);
}

// Walks an MCAP file's records: the offset of the last Chunk record (op 0x06) before Data End.
uint64_t last_chunk_offset(const std::vector<uint8_t>& f) {
  uint64_t pos = 8, last = 0;
  while (pos + 9 <= f.size()) {
    uint64_t len;
    std::memcpy(&len, f.data() + pos + 1, 8);
    if (f[pos] == 0x0F) break;  // Data End
    if (f[pos] == 0x06) last = pos;
    pos += 9 + len;
  }
  return last;
}

void drop_manifest_record(const fs::path& manifest, const std::string& key) {
  nlohmann::json j = nlohmann::json::parse(dmtest::read_bytes(manifest));
  ASSERT_EQ(j["frames"].erase(key), 1u) << key;
  dmtest::write_text(manifest, j.dump());
}

TEST_F(CliMcap, AKilledRunsPartAndARedoneFrameLeaveEachFrameOnce) {
  TempDir tmp;
  const fs::path in = dmcli::copy_sample(tmp / "in");
  const fs::path out = in / "out";
  // Frame 000005 fails and stops the run: frames 0-4 are done, in one part.
  const fs::path bad = in / "depth" / "000005.png";
  const auto good = dmtest::read_bytes(bad);
  dmtest::write_text(bad, "not a png");
  const auto r1 = run_bag(in, " --set run.on_error=stop");
  ASSERT_NE(r1.exit_code, 0) << r1.output;
  ASSERT_EQ(count_parts(out), 1u);
  const fs::path part = dm::list_bag_parts(out)[0];
  // A kill: the part without its summary and footer, cut inside its last chunk (frame 4's), which the
  // manifest therefore never recorded; frame 3's chunk whole but its record lost too (a crash between
  // the two).
  std::vector<uint8_t> bytes = dmtest::read_bytes(part);
  bytes.resize(last_chunk_offset(bytes) + 100);
  fs::remove(part);
  dmtest::write_bytes(fs::path(part.string() + ".part"), bytes);
  drop_manifest_record(out / "depthmask-manifest.json", "depth/000004.png");
  drop_manifest_record(out / "depthmask-manifest.json", "depth/000003.png");
  dmtest::write_bytes(bad, good);

  const auto r2 = run_bag(in, "");
  ASSERT_EQ(r2.exit_code, 0) << r2.output;
  EXPECT_TRUE(contains(r2.output, "3 of 8 frame(s) already done")) << r2.output;
  EXPECT_TRUE(contains(r2.output, "2 repeated message(s) dropped")) << r2.output;
  expect_bag_matches_tiffs(out, 8);
}

TEST_F(CliMcap, StatusFinalizeMergesWhatNoRunCould) {
  TempDir tmp;
  const fs::path in = dmcli::copy_sample(tmp / "in");
  const fs::path out = in / "out";
  ASSERT_EQ(run_bag(in, " --shard 0/2").exit_code, 0);
  // A run still writing a part (the lock held shared) keeps the second shard from merging.
  const int fd = ::open((out / ".depthmask-bag.lock").c_str(), O_RDWR | O_CREAT, 0644);
  ASSERT_GE(fd, 0);
  ASSERT_EQ(::flock(fd, LOCK_SH), 0);
  const auto second = run_bag(in, " --shard 1/2");
  ASSERT_EQ(second.exit_code, 0) << second.output;
  EXPECT_TRUE(contains(second.output, "not merged")) << second.output;
  EXPECT_EQ(count_parts(out), 2u);
  const auto busy = dmcli::run_in(in, "status out --finalize");
  EXPECT_TRUE(contains(busy.output, "a run is writing a part")) << busy.output;
  ::close(fd);
  EXPECT_EQ(dmcli::run_in(in, "report out").exit_code, 0);
  const auto fin = dmcli::run_in(in, "status out --finalize");
  EXPECT_EQ(fin.exit_code, 0) << fin.output;
  EXPECT_TRUE(contains(fin.output, "bag written")) << fin.output;
  expect_bag_matches_tiffs(out, 8);
  EXPECT_TRUE(contains(dmcli::run_in(in, "status out --finalize").output, "merged already"));
}

}  // namespace
