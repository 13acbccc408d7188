// The merge of a bag's parts (finalize_bag, depthmask/bag_output.h): a frame is told by its frame key
// (the MCAP sequence: the CRC-32 of its frame id), so two frames of one stamp in different parts are
// both kept and a redone frame only once; the lock file goes once the merge leaves no part behind,
// and a lock taken afterwards works as before.
#include <gtest/gtest.h>
#include <sys/stat.h>

#include <map>
#include <string>
#include <vector>

#include "depthmask/bag_output.h"
#include "depthmask/mcap.h"
#include "test_support.h"

namespace dm = depthmask;
namespace mc = depthmask::mcap;
namespace fs = std::filesystem;

#if DEPTHMASK_WITH_ROSBAG

namespace {

struct Frame {
  uint64_t stamp;
  std::string id;
  uint8_t fill;  // the payload's bytes: which part wrote it
};

// A closed part holding each frame's depth message at its stamp, keyed as BagOutput keys it.
void write_part(const fs::path& file, const std::vector<Frame>& frames) {
  mc::Writer w(file);
  const uint16_t s = w.add_schema("sensor_msgs/msg/Image", "ros2msg", "uint32 height\n");
  const uint16_t depth = w.add_channel(s, "/depthmask/depth", "cdr", {{"offered_qos_profiles", "- history: 3\n"}});
  for (const Frame& f : frames) {
    const std::vector<uint8_t> payload(16, f.fill);
    w.write(depth, f.stamp, f.stamp, payload.data(), payload.size(), dm::bag_frame_key(f.id));
  }
  w.close();
}

struct Merged {
  uint64_t stamp;
  uint32_t key;
  uint8_t fill;
};

std::vector<Merged> read_merged(const fs::path& file) {
  mc::Reader r(file);
  std::vector<Merged> out;
  r.scan([&](const mc::MessageInfo& m, const uint8_t* d, size_t n) {
    out.push_back({m.log_time, m.sequence, n > 0 ? d[0] : uint8_t{0}});
    return true;
  });
  return out;
}

}  // namespace

TEST(BagMerge, FramesOfOneStampInTwoPartsAreBothKeptAndARedoneFrameOnce) {
  dmtest::TempDir tmp;
  const fs::path& dir = tmp.path();
  const uint64_t t = 1700000000000000000ull;
  // Shard 0 wrote "t" and "t+1"; shard 1 "t-1" (the bag input's second message of stamp t); a later
  // run redid "t-1" (its record was lost).
  write_part(dir / "depthmask.part-0001-0of2.mcap", {{t, "1700000000000000000", 1}, {t + 1, "1700000000000000001", 1}});
  write_part(dir / "depthmask.part-0002-1of2.mcap", {{t, "1700000000000000000-1", 2}});
  write_part(dir / "depthmask.part-0003-all.mcap", {{t, "1700000000000000000-1", 3}});
  const dm::BagMerge m = dm::finalize_bag(dir);
  ASSERT_TRUE(m.merged) << m.why_not;
  EXPECT_EQ(m.parts, 3u);
  EXPECT_EQ(m.depth_messages, 3u);
  EXPECT_EQ(m.duplicates, 1u);
  const std::vector<Merged> got = read_merged(dir / dm::kBagName);
  ASSERT_EQ(got.size(), 3u);
  std::map<uint32_t, uint8_t> at_t;  // frame key -> the part its message came from
  for (const Merged& g : got)
    if (g.stamp == t) at_t[g.key] = g.fill;
  ASSERT_EQ(at_t.size(), 2u);
  EXPECT_EQ(at_t.at(dm::bag_frame_key("1700000000000000000")), 1);
  EXPECT_EQ(at_t.at(dm::bag_frame_key("1700000000000000000-1")), 3);  // the newest part's copy
  EXPECT_EQ(got.back().stamp, t + 1);
  EXPECT_NE(dm::bag_frame_key("1700000000000000000"), dm::bag_frame_key("1700000000000000000-1"));
}

TEST(BagMerge, TheLockFileGoesWithTheLastPartAndLockingStillWorksAfter) {
  dmtest::TempDir tmp;
  const fs::path& dir = tmp.path();
  const fs::path lock_file = dir / ".depthmask-bag.lock";
  write_part(dir / "depthmask.part-0001-all.mcap", {{5, "a", 1}});
  {
    const dm::BagLock writer(dir, dm::BagLock::Mode::Shared);  // a run still writing a part
    EXPECT_FALSE(dm::finalize_bag(dir).merged);
  }
  EXPECT_TRUE(fs::exists(lock_file));  // the merge did not happen: the file stays for the writers
  ASSERT_TRUE(dm::finalize_bag(dir).merged);
  EXPECT_FALSE(fs::exists(lock_file));
  EXPECT_TRUE(fs::exists(dir / dm::kBagName));
  // A later writer makes the file again and keeps a merge out as before.
  {
    const dm::BagLock writer(dir, dm::BagLock::Mode::Shared);
    ASSERT_TRUE(writer.held());
    EXPECT_TRUE(fs::exists(lock_file));
    const dm::BagLock merge(dir, dm::BagLock::Mode::TryExclusive);
    EXPECT_FALSE(merge.held());
  }
  const dm::BagMerge again = dm::finalize_bag(dir);
  EXPECT_FALSE(again.merged);
  EXPECT_EQ(again.why_not, "the bag is merged already");
  EXPECT_FALSE(fs::exists(lock_file));
}

// The run's own part, alone and in time order, becomes the bag as it is (the same file, renamed: no
// rewrite); out of order, or beside another part, it is merged as before.
TEST(BagMerge, TheOnlyPartInTimeOrderIsRenamedNotRewritten) {
  dmtest::TempDir tmp;
  const fs::path& dir = tmp.path();
  const fs::path part = dir / "depthmask.part-0001-all.mcap";
  write_part(part, {{5, "a", 1}, {7, "b", 1}, {7, "c", 1}});
  const auto inode = [](const fs::path& p) {
    struct stat st {};
    return ::stat(p.c_str(), &st) == 0 ? st.st_ino : ino_t{0};
  };
  const ino_t before = inode(part);
  dm::ClosedPart own{part, true, 3, 5, 7, {{{"/depthmask/depth", "sensor_msgs/msg/Image", ""}, 3}}};
  const dm::BagMerge m = dm::finalize_bag(dir, &own);
  ASSERT_TRUE(m.merged) << m.why_not;
  EXPECT_EQ(m.parts, 1u);
  EXPECT_EQ(m.messages, 3u);
  EXPECT_EQ(m.depth_messages, 3u);
  EXPECT_FALSE(fs::exists(part));
  EXPECT_EQ(inode(dir / dm::kBagName), before);
  EXPECT_FALSE(fs::exists(dir / ".depthmask-bag.lock"));
  const std::vector<uint8_t> yb = dmtest::read_bytes(dir / "metadata.yaml");
  const std::string yaml(yb.begin(), yb.end());
  EXPECT_NE(yaml.find("message_count: 3"), std::string::npos) << yaml;
  EXPECT_NE(yaml.find("nanoseconds: 2\n"), std::string::npos) << yaml;  // duration 7 - 5
  ASSERT_EQ(read_merged(dir / dm::kBagName).size(), 3u);

  // Out of order: rewritten in time order.
  dmtest::TempDir tmp2;
  const fs::path part2 = tmp2.path() / "depthmask.part-0001-all.mcap";
  write_part(part2, {{9, "a", 1}, {4, "b", 1}});
  dm::ClosedPart unordered{part2, false, 2, 9, 9, {{{"/depthmask/depth", "sensor_msgs/msg/Image", ""}, 2}}};
  const ino_t before2 = inode(part2);
  ASSERT_TRUE(dm::finalize_bag(tmp2.path(), &unordered).merged);
  EXPECT_NE(inode(tmp2.path() / dm::kBagName), before2);
  const std::vector<Merged> got = read_merged(tmp2.path() / dm::kBagName);
  ASSERT_EQ(got.size(), 2u);
  EXPECT_EQ(got[0].stamp, 4u);

  // Beside another part: merged, both parts' frames kept.
  dmtest::TempDir tmp3;
  const fs::path mine = tmp3.path() / "depthmask.part-0002-all.mcap";
  write_part(tmp3.path() / "depthmask.part-0001-all.mcap", {{1, "x", 2}});
  write_part(mine, {{5, "a", 1}});
  dm::ClosedPart ordered{mine, true, 1, 5, 5, {{{"/depthmask/depth", "sensor_msgs/msg/Image", ""}, 1}}};
  const dm::BagMerge m3 = dm::finalize_bag(tmp3.path(), &ordered);
  ASSERT_TRUE(m3.merged);
  EXPECT_EQ(m3.parts, 2u);
  EXPECT_EQ(read_merged(tmp3.path() / dm::kBagName).size(), 2u);
}

#else

TEST(BagMerge, NeedsTheBagLibraries) { GTEST_SKIP() << "built without the bag libraries (DEPTHMASK_WITH_ROSBAG off)"; }

#endif
