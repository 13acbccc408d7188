// The MCAP reader and writer (depthmask/mcap.h): round trips for each chunk compression, with and
// without index, without chunks, on several channels; damage found and named (a chunk's CRC, the data
// section's CRC, a length past the end, a truncated file, an uncompressed size over the bound); CRC
// fields of 0 skipped; a damaged summary read around by scanning.
#include <gtest/gtest.h>

#include <cstring>
#include <string>
#include <tuple>
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

struct Sent {
  uint16_t channel;
  uint64_t log_time;
  std::vector<uint8_t> data;
};

// n messages over three channels of two schemas, of sizes 0 to a few hundred bytes.
std::vector<Sent> write_sample(const fs::path& file, const mc::WriterOptions& opt, int n = 60) {
  mc::Writer w(file, opt);
  const uint16_t image = w.add_schema("sensor_msgs/msg/Image", "ros2msg", "uint32 height\nuint32 width\n");
  const uint16_t info = w.add_schema("sensor_msgs/msg/CameraInfo", "ros2msg", "float64[9] k\n");
  const std::map<std::string, std::string> qos{{"offered_qos_profiles", "- history: 3\n"}};
  const uint16_t ch[3] = {w.add_channel(image, "/camera/depth", "cdr", qos),
                          w.add_channel(image, "/camera/color", "cdr", qos),
                          w.add_channel(info, "/camera/info", "cdr", {})};
  std::vector<Sent> sent;
  for (int i = 0; i < n; ++i) {
    Sent s{ch[i % 3], 1000000000ull + 33000000ull * static_cast<uint64_t>(i), {}};
    s.data.resize(static_cast<size_t>((i * 37) % 300));
    for (size_t k = 0; k < s.data.size(); ++k) s.data[k] = static_cast<uint8_t>(k * 7 + static_cast<size_t>(i));
    w.write(s.channel, s.log_time, s.log_time + 5, s.data.data(), s.data.size());
    sent.push_back(std::move(s));
  }
  w.close();
  return sent;
}

struct Got {
  mc::MessageInfo info;
  std::vector<uint8_t> data;
};

std::vector<Got> scan_all(mc::Reader& r) {
  std::vector<Got> got;
  r.scan([&](const mc::MessageInfo& m, const uint8_t* d, size_t n) {
    got.push_back({m, std::vector<uint8_t>(d, d + n)});
    return true;
  });
  return got;
}

// Where message i of the file is (the file read whole first).
mc::MessageLocation location_of(const fs::path& file, size_t i) {
  mc::Reader r(file);
  const std::vector<Got> got = scan_all(r);
  return i < got.size() ? got[i].info.location : got.back().info.location;
}

// The error a scan of `file` ends with, and in `seen` how many messages came before it.
std::string scan_error(const fs::path& file, size_t& seen) {
  mc::Reader r(file);
  seen = 0;
  return message_of<dm::InputError>(
      [&] { r.scan([&](const mc::MessageInfo&, const uint8_t*, size_t) { return ++seen > 0; }); });
}

void patch(const fs::path& file, uint64_t at, const void* bytes, size_t n) {
  std::vector<uint8_t> b = dmtest::read_bytes(file);
  ASSERT_LE(at + n, b.size());
  std::memcpy(b.data() + at, bytes, n);
  dmtest::write_bytes(file, b);
}

// Chunk record: op, length, start, end, uncompressed_size, crc, compression (4 + 0 for none), records length.
constexpr uint64_t kChunkUsize = 9 + 16;
constexpr uint64_t kChunkCrc = kChunkUsize + 8;
constexpr uint64_t kChunkRecordsNone = kChunkCrc + 4 + 4 + 8;

mc::WriterOptions options(mc::Compression c, bool index = true, bool chunked = true, uint64_t chunk = 1500) {
  mc::WriterOptions o;
  o.compression = c;
  o.index = index;
  o.chunked = chunked;
  o.chunk_size = chunk;
  return o;
}

}  // namespace

class McapRoundTrip : public ::testing::TestWithParam<std::tuple<mc::Compression, bool, bool>> {};

TEST_P(McapRoundTrip, EveryMessageComesBackInOrderByScanAndByLocation) {
  const auto [compression, index, chunked] = GetParam();
  dmtest::TempDir tmp;
  const fs::path file = tmp.path() / "rec.mcap";
  const std::vector<Sent> sent = write_sample(file, options(compression, index, chunked));
  ASSERT_TRUE(fs::exists(file));
  EXPECT_FALSE(fs::exists(file.string() + ".part"));
  mc::Reader r(file);
  EXPECT_EQ(r.profile(), "ros2");
  EXPECT_EQ(r.has_summary(), index);
  ASSERT_EQ(r.schemas().size(), 2u);
  EXPECT_EQ(r.schemas().at(1).name, "sensor_msgs/msg/Image");
  EXPECT_EQ(r.schemas().at(2).data, "float64[9] k\n");
  ASSERT_EQ(r.channels().size(), 3u);
  EXPECT_EQ(r.channels().at(2).topic, "/camera/color");
  EXPECT_EQ(r.channels().at(1).metadata.at("offered_qos_profiles"), "- history: 3\n");
  EXPECT_EQ(r.channels().at(3).schema_id, 2);
  if (index) {
    EXPECT_EQ(r.message_counts().at(1), 20u);
  }
  const std::vector<Got> got = scan_all(r);
  ASSERT_EQ(got.size(), sent.size());
  for (size_t i = 0; i < got.size(); ++i) {
    EXPECT_EQ(got[i].info.channel_id, sent[i].channel) << i;
    EXPECT_EQ(got[i].info.log_time, sent[i].log_time) << i;
    EXPECT_EQ(got[i].info.publish_time, sent[i].log_time + 5) << i;
    EXPECT_EQ(got[i].data, sent[i].data) << i;
    EXPECT_EQ(got[i].info.location.chunk_offset == UINT64_MAX, !chunked) << i;
  }
  for (size_t i = got.size(); i-- > 0;)
    EXPECT_EQ(r.read(got[i].info.location), sent[i].data) << i;  // backwards: cache misses
}

INSTANTIATE_TEST_SUITE_P(Mcap, McapRoundTrip,
                         ::testing::Values(std::make_tuple(mc::Compression::Zstd, true, true),
                                           std::make_tuple(mc::Compression::Zstd, false, true),
                                           std::make_tuple(mc::Compression::Lz4, true, true),
                                           std::make_tuple(mc::Compression::Lz4, false, true),
                                           std::make_tuple(mc::Compression::None, true, true),
                                           std::make_tuple(mc::Compression::None, false, false),
                                           std::make_tuple(mc::Compression::None, true, false)));

TEST(McapWriter, FlushPutsTheOpenChunkOnDiskAndThePartIsReadableUpToIt) {
  dmtest::TempDir tmp;
  const fs::path file = tmp.path() / "rec.mcap";
  mc::Writer w(file, options(mc::Compression::Zstd, true, true, 1 << 20));
  const uint16_t s = w.add_schema("std_msgs/msg/String", "ros2msg", "string data\n");
  const uint16_t c = w.add_channel(s, "/a", "cdr", {});
  const uint8_t payload[3] = {1, 2, 3};
  w.write(c, 10, 10, payload, 3);
  w.write(c, 20, 20, payload, 2);
  EXPECT_EQ(w.flush(), 2u);
  mc::Reader part(file.string() + ".part");
  size_t seen = 0;
  const std::string msg = message_of<dm::InputError>(
      [&] { part.scan([&](const mc::MessageInfo&, const uint8_t*, size_t) { return ++seen > 0; }); });
  EXPECT_EQ(seen, 2u);
  EXPECT_TRUE(dmtest::Contains(msg, "without its Data End record and footer")) << msg;
  w.close();
  EXPECT_FALSE(fs::exists(file.string() + ".part"));
  mc::Reader done(file);
  EXPECT_EQ(scan_all(done).size(), 2u);
}

TEST(McapReader, AChunkWhoseBytesChangedIsNamedWithItsOffset) {
  dmtest::TempDir tmp;
  const fs::path file = tmp.path() / "rec.mcap";
  write_sample(file, options(mc::Compression::None));
  const uint64_t chunk = location_of(file, SIZE_MAX).chunk_offset;
  const uint8_t x = 0xEE;
  patch(file, chunk + kChunkRecordsNone + 40, &x, 1);
  size_t seen = 0;
  const std::string msg = scan_error(file, seen);
  EXPECT_TRUE(dmtest::Contains(msg, "Chunk record at byte " + std::to_string(chunk))) << msg;
  EXPECT_TRUE(dmtest::Contains(msg, "CRC")) << msg;
  EXPECT_TRUE(dmtest::Contains(msg, file.string())) << msg;
  EXPECT_GT(seen, 0u);  // the chunks before it were delivered
}

TEST(McapReader, CrcFieldsOfZeroAreNotChecked) {
  dmtest::TempDir tmp;
  const fs::path file = tmp.path() / "rec.mcap";
  write_sample(file, options(mc::Compression::None, false));
  const uint64_t chunk = location_of(file, SIZE_MAX).chunk_offset;
  const uint32_t zero = 0;
  const uint8_t x = 0xEE;
  patch(file, chunk + kChunkCrc, &zero, 4);
  patch(file, chunk + kChunkRecordsNone + 40, &x, 1);
  const uint64_t data_end = fs::file_size(file) - 8 - 29 - 13;  // no summary: Data End, Footer, magic
  patch(file, data_end + 9, &zero, 4);
  mc::Reader r(file);
  EXPECT_EQ(scan_all(r).size(), 60u);
}

TEST(McapReader, AChangedMessageOutsideChunksFailsTheDataSectionCrcAfterEveryMessage) {
  dmtest::TempDir tmp;
  const fs::path file = tmp.path() / "rec.mcap";
  write_sample(file, options(mc::Compression::None, true, false));
  const uint64_t at = location_of(file, 5).offset;
  const uint8_t x = 0xEE;
  patch(file, at + 9 + 22 + 3, &x, 1);
  size_t seen = 0;
  const std::string msg = scan_error(file, seen);
  EXPECT_EQ(seen, 60u);
  EXPECT_TRUE(dmtest::Contains(msg, "Data End record")) << msg;
  EXPECT_TRUE(dmtest::Contains(msg, "data section's CRC")) << msg;
}

TEST(McapReader, ATruncatedFileDeliversTheMessagesBeforeTheCutThenSaysSo) {
  for (const bool chunked : {true, false}) {
    dmtest::TempDir tmp;
    const fs::path file = tmp.path() / "rec.mcap";
    const std::vector<Sent> sent = write_sample(file, options(mc::Compression::Zstd, true, chunked, 800));
    std::vector<uint8_t> b = dmtest::read_bytes(file);
    b.resize(b.size() / 2);
    dmtest::write_bytes(file, b);
    mc::Reader r(file);
    EXPECT_FALSE(r.has_summary());
    EXPECT_EQ(r.channels().size(), 3u);
    std::vector<Got> got;
    const std::string msg = message_of<dm::InputError>([&] {
      r.scan([&](const mc::MessageInfo& m, const uint8_t* d, size_t n) {
        got.push_back({m, std::vector<uint8_t>(d, d + n)});
        return true;
      });
    });
    EXPECT_TRUE(dmtest::Contains(msg, file.string())) << msg;
    EXPECT_TRUE(dmtest::Contains(msg, "truncated")) << msg;
    ASSERT_GT(got.size(), 0u) << chunked;
    EXPECT_LT(got.size(), sent.size()) << chunked;
    for (size_t i = 0; i < got.size(); ++i) EXPECT_EQ(got[i].data, sent[i].data) << i;
  }
}

TEST(McapReader, ALengthPastTheEndIsAnErrorNotAnAllocation) {
  dmtest::TempDir tmp;
  const fs::path file = tmp.path() / "rec.mcap";
  write_sample(file, options(mc::Compression::None, true, false));
  const uint64_t at = location_of(file, 7).offset;
  const uint64_t huge = uint64_t{1} << 60;
  patch(file, at + 1, &huge, 8);
  size_t seen = 0;
  const std::string msg = scan_error(file, seen);
  EXPECT_EQ(seen, 7u);
  EXPECT_TRUE(dmtest::Contains(msg, "Message record at byte " + std::to_string(at))) << msg;
  EXPECT_TRUE(dmtest::Contains(msg, "runs past the end")) << msg;
}

TEST(McapReader, AnUncompressedSizeOverTheBoundIsRefused) {
  for (const uint64_t usize : {uint64_t{3} << 30, uint64_t{100} << 20}) {  // over 2 GiB; over 1000x
    dmtest::TempDir tmp;
    const fs::path file = tmp.path() / "rec.mcap";
    write_sample(file, options(mc::Compression::Zstd));
    const uint64_t chunk = location_of(file, 0).chunk_offset;
    patch(file, chunk + kChunkUsize, &usize, 8);
    mc::Reader r(file);
    const std::string msg = message_of<dm::InputError>([&] { scan_all(r); });
    EXPECT_TRUE(dmtest::Contains(msg, "Chunk record at byte " + std::to_string(chunk))) << msg;
    EXPECT_TRUE(dmtest::Contains(msg, "uncompressed size " + std::to_string(usize))) << msg;
  }
}

TEST(McapReader, ADamagedSummaryIsReadAroundByScanning) {
  dmtest::TempDir tmp;
  const fs::path file = tmp.path() / "rec.mcap";
  write_sample(file, options(mc::Compression::Lz4));
  const uint64_t footer = fs::file_size(file) - 8 - 29;
  uint64_t summary = 0;
  std::memcpy(&summary, dmtest::read_bytes(file).data() + footer + 9, 8);
  const uint8_t x = 0x42;
  patch(file, summary + 20, &x, 1);  // inside the first Schema record of the summary
  mc::Reader r(file);
  EXPECT_FALSE(r.has_summary());
  EXPECT_EQ(r.channels().size(), 3u);
  EXPECT_EQ(scan_all(r).size(), 60u);
}

TEST(McapReader, NotAnMcapFileIsNamed) {
  dmtest::TempDir tmp;
  const fs::path file = tmp.path() / "x.mcap";
  dmtest::write_text(file, "hello, this is not MCAP");
  const std::string msg = message_of<dm::InputError>([&] { mc::Reader r(file); });
  EXPECT_TRUE(dmtest::Contains(msg, "is not an MCAP file")) << msg;
  EXPECT_TRUE(dmtest::Contains(msg, file.string())) << msg;
}

#else

TEST(McapReader, ABuildWithoutBagSupportSaysSo) {
  dmtest::TempDir tmp;
  const fs::path file = tmp.path() / "rec.mcap";
  const std::string msg = message_of<dm::InputError>([&] { mc::Reader r(file); });
  EXPECT_TRUE(dmtest::Contains(msg, "built without ROS 2 bag support (DEPTHMASK_WITH_ROSBAG=OFF)")) << msg;
  EXPECT_TRUE(dmtest::Contains(message_of<dm::ConfigError>([&] { mc::Writer w(file); }), "DEPTHMASK_WITH_ROSBAG=OFF"));
}

#endif
