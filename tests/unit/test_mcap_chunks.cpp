// The MCAP reader's chunks (depthmask/mcap.h): a scan over more chunks than it has in flight
// delivers every message in order, and a damaged chunk far into the file stops it exactly after the
// messages before that chunk; view() gives read()'s bytes without a copy, from several threads at
// once; chunks a scan keeps (keep_scanned_chunks) stay within the budget and go once read past (the
// cache then holds the last few only); a message's sequence is the writer's when it names one.
#include <gtest/gtest.h>

#include <cstring>
#include <string>
#include <thread>
#include <vector>

#include "depthmask/errors.h"
#include "depthmask/mcap.h"
#include "test_support.h"

namespace dm = depthmask;
namespace mc = depthmask::mcap;
namespace fs = std::filesystem;
using dmtest::message_of;

#if DEPTHMASK_WITH_ROSBAG

namespace {

constexpr int kMessages = 900;

std::vector<uint8_t> payload(int i) {
  std::vector<uint8_t> p(static_cast<size_t>(200 + (i * 13) % 500));
  for (size_t k = 0; k < p.size(); ++k) p[k] = static_cast<uint8_t>(k * 31 + static_cast<size_t>(i) * 7);
  return p;
}

// kMessages messages in chunks of about 2 KB: some 200 chunks, far more than a scan has in flight.
void write_many(const fs::path& file) {
  mc::WriterOptions o;
  o.chunk_size = 2000;
  mc::Writer w(file, o);
  const uint16_t s = w.add_schema("sensor_msgs/msg/Image", "ros2msg", "uint32 height\n");
  const uint16_t ch = w.add_channel(s, "/depth", "cdr", {});
  for (int i = 0; i < kMessages; ++i) {
    const std::vector<uint8_t> p = payload(i);
    const auto t = static_cast<uint64_t>(i) * 1000;
    w.write(ch, t, t, p.data(), p.size(), static_cast<uint32_t>(i * 3));
  }
  w.close();
}

std::vector<mc::MessageInfo> scan_infos(mc::Reader& r) {
  std::vector<mc::MessageInfo> got;
  r.scan([&](const mc::MessageInfo& m, const uint8_t* d, size_t n) {
    EXPECT_EQ(std::vector<uint8_t>(d, d + n), payload(static_cast<int>(got.size()))) << got.size();
    got.push_back(m);
    return true;
  });
  return got;
}

}  // namespace

TEST(McapChunks, AScanOverManyChunksDeliversEveryMessageInOrderWithItsSequence) {
  dmtest::TempDir tmp;
  const fs::path file = tmp.path() / "many.mcap";
  write_many(file);
  mc::Reader r(file);
  const std::vector<mc::MessageInfo> got = scan_infos(r);
  ASSERT_EQ(got.size(), static_cast<size_t>(kMessages));
  uint64_t chunks = 0, last = UINT64_MAX;
  for (size_t i = 0; i < got.size(); ++i) {
    EXPECT_EQ(got[i].log_time, i * 1000) << i;
    EXPECT_EQ(got[i].sequence, i * 3) << i;
    if (got[i].location.chunk_offset != last) ++chunks, last = got[i].location.chunk_offset;
  }
  EXPECT_GT(chunks, 128u);
}

TEST(McapChunks, ADamagedChunkFarIntoTheFileStopsTheScanRightBeforeIt) {
  dmtest::TempDir tmp;
  const fs::path file = tmp.path() / "many.mcap";
  write_many(file);
  std::vector<mc::MessageInfo> all;
  {
    mc::Reader r(file);
    all = scan_infos(r);
  }
  const uint64_t chunk = all[700].location.chunk_offset;
  size_t before = 0;
  while (all[before].location.chunk_offset != chunk) ++before;
  std::vector<uint8_t> b = dmtest::read_bytes(file);
  b[chunk + 9 + 8 + 8 + 8 + 4 + 4 + 4 + 8 + 20] ^= 0xFF;  // inside its compressed records
  dmtest::write_bytes(file, b);
  mc::Reader r(file);
  size_t seen = 0;
  const std::string msg = message_of<dm::InputError>(
      [&] { r.scan([&](const mc::MessageInfo&, const uint8_t*, size_t) { return ++seen > 0; }); });
  EXPECT_EQ(seen, before);
  EXPECT_TRUE(dmtest::Contains(msg, "Chunk record at byte " + std::to_string(chunk))) << msg;
  EXPECT_TRUE(dmtest::Contains(msg, file.string())) << msg;
}

TEST(McapChunks, ViewsFromSeveralThreadsEqualReadsAndKeptChunksStayInTheirBudget) {
  dmtest::TempDir tmp;
  const fs::path file = tmp.path() / "many.mcap";
  write_many(file);
  mc::Reader r(file);
  constexpr uint64_t kBudget = uint64_t{64} * 1024;
  r.keep_scanned_chunks(kBudget);
  const std::vector<mc::MessageInfo> got = scan_infos(r);
  EXPECT_GT(r.kept_bytes(), kBudget / 2);
  EXPECT_LE(r.kept_bytes(), kBudget);
  std::vector<std::thread> threads;
  threads.reserve(4);
  std::vector<int> wrong(4, 0);
  for (int t = 0; t < 4; ++t) {
    threads.emplace_back([&, t] {
      for (size_t i = static_cast<size_t>(t); i < got.size(); i += 2) {  // two threads on each message
        const mc::Payload p = r.view(got[i].location);
        if (std::vector<uint8_t>(p.data, p.data + p.size) != payload(static_cast<int>(i))) ++wrong[t];
      }
    });
  }
  for (std::thread& th : threads) th.join();
  EXPECT_EQ(wrong, std::vector<int>(4, 0));
  EXPECT_EQ(r.kept_bytes(), 0u);  // every kept chunk was read, and let go to the cache
  EXPECT_EQ(r.read(got[17].location), payload(17));
}

TEST(McapChunks, ReadsInOrderHoldOnlyTheLastFewChunksAfterTheKeptOnes) {
  dmtest::TempDir tmp;
  const fs::path file = tmp.path() / "many.mcap";
  write_many(file);
  mc::Reader r(file);
  r.keep_scanned_chunks(uint64_t{64} * 1024);
  const std::vector<mc::MessageInfo> got = scan_infos(r);
  // A message ten chunks before the last one, read in its turn and held.
  std::vector<uint64_t> chunks;
  for (const mc::MessageInfo& m : got)
    if (chunks.empty() || chunks.back() != m.location.chunk_offset) chunks.push_back(m.location.chunk_offset);
  ASSERT_GT(chunks.size(), 40u);
  size_t held_at = 0;
  while (got[held_at].location.chunk_offset != chunks[chunks.size() - 10]) ++held_at;
  const mc::Payload first = r.view(got[0].location);  // from the kept chunks
  mc::Payload held;
  for (size_t i = 0; i < got.size(); ++i) {
    const mc::Payload p = r.view(got[i].location);
    if (i == held_at) held = p;
  }
  // Only these views hold their chunks now: the kept ones went into the cache of the last few, which
  // let them go as the reads moved on.
  EXPECT_EQ(first.keep.use_count(), 1);
  EXPECT_EQ(held.keep.use_count(), 1);
  EXPECT_EQ(std::vector<uint8_t>(held.data, held.data + held.size), payload(static_cast<int>(held_at)));
}

#else

TEST(McapChunks, NeedsTheBagLibraries) {
  GTEST_SKIP() << "built without the bag libraries (DEPTHMASK_WITH_ROSBAG off)";
}

#endif
