// rosbag2 bags (depthmask/bag.h): a split MCAP bag read in metadata.yaml's order, a folder without
// metadata.yaml in natural order, a lone .mcap file, a SQLite .db3 bag (made here with libsqlite3 in
// rosbag2's schema) in timestamp order, per-message zstd compression undone, file compression
// refused, topics of one name and two types refused naming both files, and metadata.yaml as written
// read back by yaml-cpp with rosbag2's keys.
#include <gtest/gtest.h>
#include <yaml-cpp/yaml.h>

#include <string>
#include <vector>

#include "depthmask/bag.h"
#include "depthmask/errors.h"
#include "depthmask/mcap.h"
#include "test_support.h"

#if DEPTHMASK_WITH_ROSBAG
#include <sqlite3.h>
#include <zstd.h>
#endif

namespace dm = depthmask;
namespace fs = std::filesystem;
using dmtest::message_of;

#if DEPTHMASK_WITH_ROSBAG

namespace {

std::vector<uint8_t> payload_of(int i) {
  std::vector<uint8_t> p(static_cast<size_t>(10 + i % 7));
  for (size_t k = 0; k < p.size(); ++k) p[k] = static_cast<uint8_t>(i * 3 + static_cast<int>(k));
  return p;
}

// An MCAP file of `n` messages from time `t0` (ns, 1 ms apart) on /depth (Image) and /info (CameraInfo);
// `transform` changes each payload before it is written (per-message compression).
void write_mcap(const fs::path& file, int first, int n, const std::string& info_type = "sensor_msgs/msg/CameraInfo",
                std::vector<uint8_t> (*transform)(const std::vector<uint8_t>&) = nullptr) {
  dm::mcap::Writer w(file);
  const uint16_t image = w.add_schema("sensor_msgs/msg/Image", "ros2msg", "uint32 height\n");
  const uint16_t info = w.add_schema(info_type, "ros2msg", "float64[9] k\n");
  const std::map<std::string, std::string> qos{{"offered_qos_profiles", "- history: 3\n"}};
  const uint16_t depth_ch = w.add_channel(image, "/depth", "cdr", qos);
  const uint16_t info_ch = w.add_channel(info, "/info", "cdr", qos);
  for (int i = first; i < first + n; ++i) {
    std::vector<uint8_t> p = payload_of(i);
    if (transform) p = transform(p);
    const uint64_t t = 1000000ull * static_cast<uint64_t>(i);
    w.write(i % 2 ? info_ch : depth_ch, t, t, p.data(), p.size());
  }
  w.close();
}

void write_metadata_yaml(const fs::path& dir, const std::string& storage, const std::vector<std::string>& files,
                         const std::string& mode = "", const std::string& format = "") {
  std::string y =
      "rosbag2_bagfile_information:\n  version: 5\n  storage_identifier: " + storage + "\n  relative_file_paths:\n";
  for (const std::string& f : files) y += "    - " + f + "\n";
  y += "  compression_format: \"" + format + "\"\n  compression_mode: \"" + mode + "\"\n";
  dmtest::write_text(dir / "metadata.yaml", y);
}

struct Seen {
  std::string topic;
  int64_t time;
  std::vector<uint8_t> data;
  dm::bag::MessageRef ref;
};

std::vector<Seen> scan_all(dm::bag::Reader& r) {
  std::vector<Seen> seen;
  r.scan([&](const dm::bag::MessageInfo& m, const uint8_t* d, size_t n) {
    seen.push_back({r.topics().at(m.topic).name, m.log_time, std::vector<uint8_t>(d, d + n), m.ref});
    return true;
  });
  return seen;
}

void expect_in_time_order(dm::bag::Reader& r, int n) {
  const std::vector<Seen> seen = scan_all(r);
  ASSERT_EQ(seen.size(), static_cast<size_t>(n));
  for (int i = 0; i < n; ++i) {
    EXPECT_EQ(seen[i].time, 1000000ll * i) << i;
    EXPECT_EQ(seen[i].topic, i % 2 ? "/info" : "/depth") << i;
    EXPECT_EQ(seen[i].data, payload_of(i)) << i;
    EXPECT_EQ(r.read(seen[i].ref), payload_of(i)) << i;
  }
}

}  // namespace

TEST(BagReader, ASplitMcapBagIsReadInTheOrderOfItsMetadata) {
  dmtest::TempDir tmp;
  // metadata.yaml's order is not the names' order: the reader must follow the former.
  write_mcap(tmp.path() / "b_0.mcap", 0, 10);
  write_mcap(tmp.path() / "a_1.mcap", 10, 10);
  write_metadata_yaml(tmp.path(), "mcap", {"b_0.mcap", "a_1.mcap"});
  ASSERT_TRUE(dm::bag::Reader::is_bag(tmp.path()));
  dm::bag::Reader r(tmp.path());
  ASSERT_EQ(r.files().size(), 2u);
  EXPECT_EQ(r.files()[0].path.filename(), "b_0.mcap");
  EXPECT_EQ(r.files()[1].storage, "mcap");
  ASSERT_EQ(r.topics().size(), 2u);  // united by name across the files
  EXPECT_EQ(r.topics()[0].name, "/depth");
  EXPECT_EQ(r.topics()[0].type, "sensor_msgs/msg/Image");
  EXPECT_EQ(r.topics()[0].serialization_format, "cdr");
  EXPECT_EQ(r.topics()[0].offered_qos_profiles, "- history: 3\n");
  EXPECT_EQ(r.topics()[0].message_count, 10u);  // the summaries' statistics, before a scan
  expect_in_time_order(r, 20);
  EXPECT_EQ(r.topics()[1].message_count, 10u);
}

TEST(BagReader, AFolderWithoutMetadataReadsItsFilesInNaturalOrder) {
  dmtest::TempDir tmp;
  write_mcap(tmp.path() / "rec_10.mcap", 10, 10);
  write_mcap(tmp.path() / "rec_2.mcap", 0, 10);
  dm::bag::Reader r(tmp.path());
  ASSERT_EQ(r.files().size(), 2u);
  EXPECT_EQ(r.files()[0].path.filename(), "rec_2.mcap");
  expect_in_time_order(r, 20);
}

TEST(BagReader, ALoneMcapFileIsABag) {
  dmtest::TempDir tmp;
  const fs::path file = tmp.path() / "rec.mcap";
  write_mcap(file, 0, 12);
  EXPECT_TRUE(dm::bag::Reader::is_bag(file));
  dm::bag::Reader r(file);
  ASSERT_EQ(r.files().size(), 1u);
  expect_in_time_order(r, 12);
}

TEST(BagReader, IsBagAnswersForFoldersAndFiles) {
  dmtest::TempDir tmp;
  EXPECT_FALSE(dm::bag::Reader::is_bag(tmp.path()));  // empty
  dmtest::write_text(tmp.path() / "notes.txt", "x");
  EXPECT_FALSE(dm::bag::Reader::is_bag(tmp.path()));
  EXPECT_FALSE(dm::bag::Reader::is_bag(tmp.path() / "notes.txt"));
  EXPECT_FALSE(dm::bag::Reader::is_bag(tmp.path() / "missing"));
  dmtest::write_text(tmp.path() / "sub" / "rec_0.db3", "");
  EXPECT_TRUE(dm::bag::Reader::is_bag(tmp.path() / "sub"));
  write_mcap(tmp.path() / "recording.bin", 0, 1);  // MCAP by its magic, whatever its name
  EXPECT_TRUE(dm::bag::Reader::is_bag(tmp.path() / "recording.bin"));
}

namespace {

void exec(sqlite3* db, const std::string& sql) {
  char* err = nullptr;
  ASSERT_EQ(sqlite3_exec(db, sql.c_str(), nullptr, nullptr, &err), SQLITE_OK) << (err ? err : "") << "\n" << sql;
}

// A .db3 in rosbag2's schema (rosbag2_storage_sqlite3, schema version 3) with messages 0..n-1 inserted
// in an order that is not their time order.
void write_db3(const fs::path& file, int n) {
  sqlite3* db = nullptr;
  ASSERT_EQ(sqlite3_open(file.c_str(), &db), SQLITE_OK);
  exec(db,
       "CREATE TABLE schema(schema_version INTEGER PRIMARY KEY, ros_distro TEXT NOT NULL);"
       "INSERT INTO schema VALUES (3, 'humble');"
       "CREATE TABLE metadata(id INTEGER PRIMARY KEY, metadata_version INTEGER NOT NULL, metadata TEXT NOT NULL);"
       "CREATE TABLE topics(id INTEGER PRIMARY KEY, name TEXT NOT NULL, type TEXT NOT NULL, "
       "serialization_format TEXT NOT NULL, offered_qos_profiles TEXT NOT NULL);"
       "CREATE TABLE messages(id INTEGER PRIMARY KEY, topic_id INTEGER NOT NULL, timestamp INTEGER NOT NULL, "
       "data BLOB NOT NULL);"
       "CREATE INDEX timestamp_idx ON messages (timestamp ASC);"
       "INSERT INTO topics VALUES (1, '/depth', 'sensor_msgs/msg/Image', 'cdr', '- history: 3\n');"
       "INSERT INTO topics VALUES (2, '/info', 'sensor_msgs/msg/CameraInfo', 'cdr', '');");
  sqlite3_stmt* st = nullptr;
  ASSERT_EQ(
      sqlite3_prepare_v2(db, "INSERT INTO messages (topic_id, timestamp, data) VALUES (?, ?, ?)", -1, &st, nullptr),
      SQLITE_OK);
  for (int k = 0; k < n; ++k) {
    const int i = (k * 7) % n;  // n coprime with 7
    const std::vector<uint8_t> p = payload_of(i);
    sqlite3_bind_int64(st, 1, i % 2 ? 2 : 1);
    sqlite3_bind_int64(st, 2, 1000000ll * i);
    sqlite3_bind_blob(st, 3, p.data(), static_cast<int>(p.size()), SQLITE_TRANSIENT);
    ASSERT_EQ(sqlite3_step(st), SQLITE_DONE);
    sqlite3_reset(st);
  }
  sqlite3_finalize(st);
  sqlite3_close(db);
}

std::vector<uint8_t> zstd_frame(const std::vector<uint8_t>& p) {
  std::vector<uint8_t> out(ZSTD_compressBound(p.size()));
  out.resize(ZSTD_compress(out.data(), out.size(), p.data(), p.size(), 1));
  return out;
}

}  // namespace

TEST(BagReader, ASqliteBagIsReadInTimestampOrder) {
  dmtest::TempDir tmp;
  write_db3(tmp.path() / "rec_0.db3", 15);
  write_metadata_yaml(tmp.path(), "sqlite3", {"rec_0.db3"});
  dm::bag::Reader r(tmp.path());
  ASSERT_EQ(r.files().size(), 1u);
  EXPECT_EQ(r.files()[0].storage, "sqlite3");
  ASSERT_EQ(r.topics().size(), 2u);
  EXPECT_EQ(r.topics()[1].type, "sensor_msgs/msg/CameraInfo");
  EXPECT_EQ(r.topics()[0].offered_qos_profiles, "- history: 3\n");
  expect_in_time_order(r, 15);
  EXPECT_EQ(r.topics()[0].message_count, 8u);
}

TEST(BagReader, MessagesCompressedOneByOneAreDecompressed) {
  dmtest::TempDir tmp;
  write_mcap(tmp.path() / "rec_0.mcap", 0, 9, "sensor_msgs/msg/CameraInfo", zstd_frame);
  write_metadata_yaml(tmp.path(), "mcap", {"rec_0.mcap"}, "message", "zstd");
  dm::bag::Reader r(tmp.path());
  expect_in_time_order(r, 9);
}

TEST(BagReader, AMessageThatDoesNotDecompressIsNamed) {
  dmtest::TempDir tmp;
  write_mcap(tmp.path() / "rec_0.mcap", 0, 3);  // not compressed, though the metadata says so
  write_metadata_yaml(tmp.path(), "mcap", {"rec_0.mcap"}, "MESSAGE", "zstd");
  dm::bag::Reader r(tmp.path());
  const std::string msg = message_of<dm::InputError>([&] { scan_all(r); });
  EXPECT_TRUE(dmtest::Contains(msg, "rec_0.mcap")) << msg;
  EXPECT_TRUE(dmtest::Contains(msg, "topic '/depth'")) << msg;
}

TEST(BagReader, FileCompressionIsRefusedNamingTheMetadata) {
  dmtest::TempDir tmp;
  write_mcap(tmp.path() / "rec_0.mcap", 0, 3);
  write_metadata_yaml(tmp.path(), "mcap", {"rec_0.mcap.zstd"}, "FILE", "zstd");
  const std::string msg = message_of<dm::InputError>([&] { dm::bag::Reader r(tmp.path()); });
  EXPECT_TRUE(dmtest::Contains(msg, (tmp.path() / "metadata.yaml").string() +
                                        ": compression_mode FILE (the whole file zstd-compressed) is not supported"))
      << msg;
  EXPECT_TRUE(dmtest::Contains(msg, "zstd -d")) << msg;
}

TEST(BagReader, ATopicOfTwoTypesInTwoFilesIsRefusedNamingBoth) {
  dmtest::TempDir tmp;
  write_mcap(tmp.path() / "rec_0.mcap", 0, 4);
  write_mcap(tmp.path() / "rec_1.mcap", 4, 4, "sensor_msgs/msg/Image");
  write_metadata_yaml(tmp.path(), "mcap", {"rec_0.mcap", "rec_1.mcap"});
  const std::string msg = message_of<dm::InputError>([&] { dm::bag::Reader r(tmp.path()); });
  EXPECT_TRUE(dmtest::Contains(msg, "topic '/info'")) << msg;
  EXPECT_TRUE(dmtest::Contains(msg, "rec_0.mcap")) << msg;
  EXPECT_TRUE(dmtest::Contains(msg, "rec_1.mcap")) << msg;
}

TEST(BagReader, AFileTheMetadataListsButIsMissingIsNamed) {
  dmtest::TempDir tmp;
  write_mcap(tmp.path() / "rec_0.mcap", 0, 4);
  write_metadata_yaml(tmp.path(), "mcap", {"rec_0.mcap", "rec_1.mcap"});
  const std::string msg = message_of<dm::InputError>([&] { dm::bag::Reader r(tmp.path()); });
  EXPECT_TRUE(dmtest::Contains(msg, "its file 'rec_1.mcap' is missing")) << msg;
}

#else

TEST(BagReader, ABuildWithoutBagSupportSaysSo) {
  dmtest::TempDir tmp;
  const fs::path file = tmp.path() / "rec.mcap";
  dmtest::write_text(file, "\x89MCAP0\r\n");
  EXPECT_TRUE(dm::bag::Reader::is_bag(file));
  const std::string msg = message_of<dm::InputError>([&] { dm::bag::Reader r(file); });
  EXPECT_TRUE(dmtest::Contains(msg, "built without ROS 2 bag support (DEPTHMASK_WITH_ROSBAG=OFF)")) << msg;
}

#endif

TEST(BagMetadata, WrittenMetadataHasRosbag2sVersion5Keys) {
  dmtest::TempDir tmp;
  dm::bag::write_metadata(tmp.path(), {{"out_0.mcap", 1000, 500, 7}, {"out_1.mcap", 2000, 300, 5}},
                          {{{"/depthmask/depth", "sensor_msgs/msg/Image", ""}, 10},
                           {{"/depthmask/camera_info", "sensor_msgs/msg/CameraInfo", "- history: 1\n"}, 2}});
  const YAML::Node root = YAML::LoadFile((tmp.path() / "metadata.yaml").string());
  const YAML::Node info = root["rosbag2_bagfile_information"];
  ASSERT_TRUE(info.IsMap());
  EXPECT_EQ(info["version"].as<int>(), 5);
  EXPECT_EQ(info["storage_identifier"].as<std::string>(), "mcap");
  EXPECT_EQ(info["duration"]["nanoseconds"].as<int64_t>(), 1300);  // 1000 .. 2300
  EXPECT_EQ(info["starting_time"]["nanoseconds_since_epoch"].as<int64_t>(), 1000);
  EXPECT_EQ(info["message_count"].as<uint64_t>(), 12u);
  const YAML::Node topics = info["topics_with_message_count"];
  ASSERT_EQ(topics.size(), 2u);
  EXPECT_EQ(topics[0]["topic_metadata"]["name"].as<std::string>(), "/depthmask/depth");
  EXPECT_EQ(topics[0]["topic_metadata"]["type"].as<std::string>(), "sensor_msgs/msg/Image");
  EXPECT_EQ(topics[0]["topic_metadata"]["serialization_format"].as<std::string>(), "cdr");
  const std::string qos = topics[0]["topic_metadata"]["offered_qos_profiles"].as<std::string>();
  EXPECT_EQ(qos.rfind("- history: 3\n  depth: 0\n  reliability: 1\n  durability: 2\n", 0), 0u) << qos;
  EXPECT_TRUE(YAML::Load(qos)[0]["deadline"]["sec"]) << qos;  // the text is YAML itself
  EXPECT_EQ(topics[1]["topic_metadata"]["offered_qos_profiles"].as<std::string>(), "- history: 1\n");
  EXPECT_EQ(topics[0]["message_count"].as<uint64_t>(), 10u);
  EXPECT_EQ(info["compression_format"].as<std::string>(), "");
  EXPECT_EQ(info["compression_mode"].as<std::string>(), "");
  ASSERT_EQ(info["relative_file_paths"].size(), 2u);
  EXPECT_EQ(info["relative_file_paths"][1].as<std::string>(), "out_1.mcap");
  ASSERT_EQ(info["files"].size(), 2u);
  EXPECT_EQ(info["files"][1]["path"].as<std::string>(), "out_1.mcap");
  EXPECT_EQ(info["files"][1]["starting_time"]["nanoseconds_since_epoch"].as<int64_t>(), 2000);
  EXPECT_EQ(info["files"][1]["duration"]["nanoseconds"].as<int64_t>(), 300);
  EXPECT_EQ(info["files"][0]["message_count"].as<uint64_t>(), 7u);
  const std::vector<uint8_t> bytes = dmtest::read_bytes(tmp.path() / "metadata.yaml");
  const std::string text(bytes.begin(), bytes.end());
  EXPECT_TRUE(dmtest::Contains(text, "offered_qos_profiles: \"- history: 3\\n  depth: 0"))
      << text;  // as Humble writes it
}
