// `depthmask status` in the library (status.h): manifests named by shard, each frame counted once
// across them, failures superseded by a later success, other settings, corrupt manifests, outputs
// missing or changed (sizes by default, CRC-32s with verify), inputs changed, the rerun list, the
// text and JSON renderings, and memory bounded on a 300,000-record manifest. The command end to end:
// tests/integration/test_cli_status.cpp.
#include <gtest/gtest.h>

#include <nlohmann/json.hpp>

#include <atomic>
#include <chrono>
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <optional>
#include <string>
#include <vector>

#include "depthmask/encoders.h"
#include "depthmask/errors.h"
#include "depthmask/manifest.h"
#include "depthmask/status.h"
#include "test_support.h"

using dmtest::Contains;
using dmtest::TempDir;

namespace {

namespace fs = std::filesystem;
namespace dm = depthmask;

// A folder of frames "depth/NNNNNN.png" (files that need not exist: their fingerprint says so) and
// an output folder holding each frame's one output, NNNNNN.tiff.
class Status : public ::testing::Test {
 protected:
  void SetUp() override {
    for (int i = 0; i < 6; ++i) {
      dm::FrameEntry f;
      f.index = static_cast<size_t>(i);
      char id[16];
      std::snprintf(id, sizeof id, "%06d", i);
      f.id = id;
      f.relative = fs::path("depth") / (f.id + ".png");
      f.depth = tmp_ / "in" / f.relative;
      f.mask = tmp_ / "in" / "mask" / (f.id + ".png");
      frames_.push_back(f);
    }
    fs::create_directories(out());
  }
  fs::path out() const { return tmp_ / "out"; }
  std::string key(int i) const { return dm::manifest_key(frames_[static_cast<size_t>(i)]); }

  // Frame i's output, written with `bytes` (its own content by default), and its record.
  dm::ManifestRecord record(int i, std::string bytes = "") {
    const dm::FrameEntry& f = frames_[static_cast<size_t>(i)];
    if (bytes.empty()) bytes = "tiff of frame " + f.id;
    const std::string name = f.id + ".tiff";
    dmtest::write_text(out() / name, bytes);
    return {f.id, dm::inputs_fingerprint(f), {{name, bytes.size(), dm::crc32_of(bytes.data(), bytes.size())}}, {}};
  }

  dm::Manifest manifest(const std::string& settings = kSettings) const {
    dm::Manifest m;
    m.head.settings = settings;
    return m;
  }
  // Writes `m` as the unsharded manifest (no shard) or as shard k of n.
  void write(const dm::Manifest& m, std::optional<dm::Shard> shard = std::nullopt) const {
    dmtest::write_text(out() / dm::manifest_name(shard), m.to_json());
  }

  dm::DatasetStatus status(bool listed = true, bool verify = false, bool with_settings = true) const {
    dm::StatusOptions o;
    if (listed) o.frames = &frames_;
    if (with_settings) o.settings = kSettings;
    o.verify = verify;
    return dm::compute_status(out(), o);
  }

  static constexpr const char* kSettings = "0123456789abcdef";
  TempDir tmp_;
  std::vector<dm::FrameEntry> frames_;
};

const dm::ManifestStatus& named(const dm::DatasetStatus& s, const std::string& file) {
  for (const dm::ManifestStatus& m : s.manifests)
    if (m.file == file) return m;
  static const dm::ManifestStatus none;
  ADD_FAILURE() << "no manifest " << file;
  return none;
}

// ---------------------------------------------------------------------------------------------------
// Names

TEST(ManifestNames, ShardNamesRoundTripAndOddNamesAreListedApart) {
  EXPECT_EQ(dm::manifest_name(std::nullopt), "depthmask-manifest.json");
  EXPECT_EQ(dm::manifest_name(dm::Shard{3, 16}), "depthmask-manifest.shard-3-of-16.json");
  TempDir tmp;
  for (const char* name :
       {"depthmask-manifest.shard-1-of-2.json", "depthmask-manifest.shard-10-of-12.json",
        "depthmask-manifest.shard-0-of-2.json", "depthmask-manifest.json",
        "depthmask-manifest.shard-2-of-2.json",   // K >= N
        "depthmask-manifest.shard-01-of-2.json",  // a leading zero
        "depthmask-manifest.old.json", "depthmask-manifest.json.tmp", "other.json", ".depthmask-manifest.json.tmp-1-2"})
    dmtest::write_text(tmp / name, "{}");
  fs::create_directories(tmp / "depthmask-manifest.dir.json");  // a folder: not a manifest
  const auto got = dm::list_manifests(tmp.path());
  std::vector<std::string> names;
  for (const auto& m : got) names.push_back(m.path.filename().string());
  EXPECT_EQ(names,
            (std::vector<std::string>{"depthmask-manifest.json", "depthmask-manifest.shard-0-of-2.json",
                                      "depthmask-manifest.shard-1-of-2.json", "depthmask-manifest.shard-10-of-12.json",
                                      "depthmask-manifest.old.json", "depthmask-manifest.shard-01-of-2.json",
                                      "depthmask-manifest.shard-2-of-2.json"}));
  ASSERT_EQ(got.size(), 7u);
  EXPECT_TRUE(got[0].recognised);
  EXPECT_FALSE(got[0].shard);
  ASSERT_TRUE(got[3].shard);
  EXPECT_EQ(got[3].shard->index, 10u);
  EXPECT_EQ(got[3].shard->count, 12u);
  for (size_t i = 4; i < 7; ++i) EXPECT_FALSE(got[i].recognised) << names[i];
  EXPECT_TRUE(dm::list_manifests(tmp / "nowhere").empty());
  EXPECT_THROW(dm::list_manifests(tmp / "other.json"), dm::InputError);
}

// ---------------------------------------------------------------------------------------------------
// Counting

TEST_F(Status, ShardsAreTotalledAndAFrameInSeveralManifestsCountsOnce) {
  dm::Manifest plain = manifest(), s0 = manifest(), s1 = manifest();
  for (int i : {0, 2, 4}) s0.frames[key(i)] = record(i);
  for (int i : {1, 3, 5}) s1.frames[key(i)] = record(i);
  plain.frames[key(0)] = record(0);  // also recorded unsharded (an earlier run)
  s1.frames[key(2)] = record(2);     // and by the other shard
  write(plain);
  write(s0, dm::Shard{0, 2});
  write(s1, dm::Shard{1, 2});

  const dm::DatasetStatus s = status();
  ASSERT_EQ(s.manifests.size(), 3u);
  EXPECT_EQ(s.manifests[0].file, "depthmask-manifest.json");
  EXPECT_FALSE(s.manifests[0].shard);
  EXPECT_EQ(s.manifests[0].done, 1u);
  EXPECT_EQ(s.manifests[1].file, "depthmask-manifest.shard-0-of-2.json");
  EXPECT_EQ(s.manifests[1].done, 2u) << "frame 0 is counted by the unsharded manifest, read first";
  EXPECT_EQ(s.manifests[1].duplicates, 1u);
  EXPECT_EQ(s.manifests[2].done, 3u);
  EXPECT_EQ(s.manifests[2].duplicates, 1u);
  EXPECT_EQ(s.done, 6u);
  EXPECT_TRUE(s.missing.empty());
  EXPECT_TRUE(s.failures.empty());
  EXPECT_TRUE(s.complete());
  EXPECT_EQ(s.exit_code(), 0);
  EXPECT_EQ(s.missing_shard_count, 0u);
  EXPECT_TRUE(Contains(s.to_text(), "total: 6 frame(s) listed: 6 done, 0 failed, 0 missing"));
  EXPECT_TRUE(Contains(s.to_text(), "status: complete\n"));

  // Without the frame list: the same totals, and the text says what could not be judged.
  const dm::DatasetStatus u = status(false, false, false);
  EXPECT_EQ(u.done, 6u);
  EXPECT_TRUE(u.complete());
  EXPECT_TRUE(Contains(u.to_text(), "cannot be judged without --config or --input"));
  EXPECT_TRUE(Contains(u.to_text(), "status: complete as far as the manifests tell"));
}

TEST_F(Status, AFailureDoneInAnotherManifestCountsAsDoneAndOneThatStandsIsListed) {
  dm::Manifest s0 = manifest(), s1 = manifest();
  for (int i : {0, 1, 2}) s0.frames[key(i)] = record(i);
  s0.failures[key(4)] = {"000004", dm::Failure::Input, "frame 000004 (#5): 'depth/000004.png' is truncated"};
  s1.failures[key(1)] = {"000001", dm::Failure::Resource, "frame 000001 (#2): disk full"};  // done in shard 0
  s1.frames[key(3)] = record(3);
  s1.frames[key(5)] = record(5);
  write(s0, dm::Shard{0, 2});
  write(s1, dm::Shard{1, 2});

  const dm::DatasetStatus s = status();
  EXPECT_EQ(s.done, 5u);
  ASSERT_EQ(s.failures.size(), 1u);
  EXPECT_EQ(s.failures[0].key, key(4));
  EXPECT_EQ(s.failures[0].id, "000004");
  EXPECT_EQ(s.failures[0].failure, dm::Failure::Input);
  EXPECT_TRUE(Contains(s.failures[0].message, "is truncated"));
  EXPECT_EQ(s.failures[0].manifest, "depthmask-manifest.shard-0-of-2.json");
  EXPECT_TRUE(s.missing.empty()) << "a failed frame is failed, not missing";
  EXPECT_EQ(named(s, "depthmask-manifest.shard-0-of-2.json").failed, 1u);
  EXPECT_EQ(named(s, "depthmask-manifest.shard-1-of-2.json").superseded, 1u);
  EXPECT_EQ(named(s, "depthmask-manifest.shard-1-of-2.json").failed, 0u);
  EXPECT_FALSE(s.complete());
  EXPECT_EQ(s.exit_code(), 1);
  EXPECT_EQ(s.rerun_keys(), std::vector<std::string>{key(4)});
  const std::string text = s.to_text();
  EXPECT_TRUE(Contains(text,
                       "failed (1):\n  depth/000004.png [input]: frame 000004 (#5): 'depth/000004.png' is "
                       "truncated (depthmask-manifest.shard-0-of-2.json)"));
  EXPECT_TRUE(Contains(text, "status: incomplete (1 failed)"));
}

TEST_F(Status, WithSettingsOnlyTheirRecordsCountAndMixedSettingsWithoutThemAreNotComplete) {
  dm::Manifest mine = manifest(), theirs = manifest("fedcba9876543210");
  for (int i : {0, 1, 2, 3}) mine.frames[key(i)] = record(i);
  for (int i : {0, 1, 2, 3, 4, 5}) theirs.frames[key(i)] = record(i);
  theirs.failures[key(0)] = {"000000", dm::Failure::Input, "bad"};
  write(mine, dm::Shard{0, 2});
  write(theirs, dm::Shard{1, 2});

  const dm::DatasetStatus s = status();
  const dm::ManifestStatus& t = named(s, "depthmask-manifest.shard-1-of-2.json");
  EXPECT_TRUE(t.other_settings);
  EXPECT_EQ(t.records, 6u);
  EXPECT_EQ(t.done, 0u);
  EXPECT_EQ(s.done, 4u);
  EXPECT_TRUE(s.failures.empty()) << "a failure of other settings does not count";
  ASSERT_EQ(s.missing.size(), 2u);
  EXPECT_EQ(s.missing[0].key, key(4));
  EXPECT_EQ(s.missing[0].reason, "recorded only by manifests of other settings");
  EXPECT_EQ(s.settings_seen.size(), 2u);
  EXPECT_TRUE(Contains(s.to_text(), "other settings (fedcba9876543210), not counted: 6 record(s)"));
  EXPECT_EQ(s.exit_code(), 1);

  // Without a configuration the first readable manifest's settings count (ManifestSet's rule, as the
  // report and resume count), and the folder is not called complete.
  const dm::DatasetStatus u = status(false, false, false);
  EXPECT_EQ(u.done, 4u);
  EXPECT_EQ(u.counted_settings, named(u, "depthmask-manifest.shard-0-of-2.json").settings);
  EXPECT_TRUE(named(u, "depthmask-manifest.shard-1-of-2.json").other_settings);
  EXPECT_TRUE(u.failures.empty()) << "a failure of other settings does not count";
  EXPECT_FALSE(u.complete());
  EXPECT_TRUE(Contains(u.to_text(), "manifests of 2 different settings"));
  EXPECT_TRUE(Contains(u.to_text(), "status: incomplete (manifests of different settings)"));
}

TEST_F(Status, ACorruptManifestIsNamedAndCountsForNothing) {
  dm::Manifest s0 = manifest(), s1 = manifest();
  for (int i : {0, 1, 2}) s0.frames[key(i)] = record(i);
  for (int i : {3, 4, 5}) s1.frames[key(i)] = record(i);
  write(s0, dm::Shard{0, 2});
  const std::string good = s1.to_json();
  for (const std::string& text : {good.substr(0, good.size() - 10), std::string(), std::string("garbage \x01\xff"),
                                  std::string("{\"format\": \"depthmask-manifest\", \"version\": 7}")}) {
    SCOPED_TRACE(text.substr(0, 40));
    dmtest::write_text(out() / dm::manifest_name(dm::Shard{1, 2}), text);
    const dm::DatasetStatus s = status();
    const dm::ManifestStatus& bad = named(s, "depthmask-manifest.shard-1-of-2.json");
    EXPECT_FALSE(bad.error.empty());
    EXPECT_TRUE(Contains(bad.error, "depthmask-manifest.shard-1-of-2.json")) << "the message names the file";
    EXPECT_EQ(bad.done, 0u);
    EXPECT_EQ(s.done, 3u) << "not even the records before the fault count";
    EXPECT_EQ(s.missing.size(), 3u);
    EXPECT_FALSE(s.complete());
    EXPECT_TRUE(Contains(s.to_text(), "UNREADABLE, nothing of it counts"));
    EXPECT_TRUE(Contains(s.to_text(), "1 unreadable manifest(s)"));
    // Even with every frame done elsewhere the folder is not called complete.
    dm::Manifest all = s0;
    for (int i : {3, 4, 5}) all.frames[key(i)] = record(i);
    write(all);
    EXPECT_EQ(status().done, 6u);
    EXPECT_FALSE(status().complete());
    fs::remove(out() / "depthmask-manifest.json");
  }
}

TEST_F(Status, MissingOrResizedOutputsAndChangedInputsMakeAFrameMissingWithTheReason) {
  dm::Manifest m = manifest();
  for (int i = 0; i < 6; ++i) m.frames[key(i)] = record(i);
  m.frames[key(5)].inputs = "00000000deadbeef";  // recorded before its inputs changed
  write(m);
  fs::remove(out() / "000001.tiff");
  dmtest::write_text(out() / "000003.tiff", "short");

  const dm::DatasetStatus s = status();
  EXPECT_EQ(s.done, 3u);
  ASSERT_EQ(s.missing.size(), 3u);
  EXPECT_EQ(s.missing[0].key, key(1));
  EXPECT_EQ(s.missing[0].reason, "output '000001.tiff' is missing (recorded in depthmask-manifest.json)");
  EXPECT_EQ(s.missing[1].key, key(3));
  EXPECT_EQ(s.missing[1].reason,
            "output '000003.tiff' has 5 bytes, the manifest records 20 (recorded in depthmask-manifest.json)");
  EXPECT_EQ(s.missing[2].key, key(5));
  EXPECT_EQ(s.missing[2].reason, "its inputs changed since depthmask-manifest.json recorded it");
  EXPECT_EQ(s.manifests[0].invalid, 2u);
  EXPECT_EQ(s.manifests[0].stale, 1u);
  EXPECT_EQ(s.rerun_keys(), (std::vector<std::string>{key(1), key(3), key(5)}));

  // Without the frame list the inputs are not compared; the outputs still are.
  const dm::DatasetStatus u = status(false);
  EXPECT_EQ(u.done, 4u);
  ASSERT_EQ(u.missing.size(), 2u);
  EXPECT_EQ(u.missing[0].key, key(1));
  EXPECT_EQ(u.missing[1].key, key(3));
  EXPECT_FALSE(u.complete());
}

TEST_F(Status, VerifyComparesCrcsWhereTheDefaultComparesSizes) {
  dm::Manifest m = manifest();
  for (int i = 0; i < 6; ++i) m.frames[key(i)] = record(i);
  write(m);
  auto bytes = dmtest::read_bytes(out() / "000002.tiff");
  bytes[bytes.size() / 2] ^= 0x01;
  dmtest::write_bytes(out() / "000002.tiff", bytes);

  EXPECT_TRUE(status().complete()) << "same size: a stat cannot tell";
  const dm::DatasetStatus v = status(true, true);
  EXPECT_EQ(v.done, 5u);
  ASSERT_EQ(v.missing.size(), 1u);
  EXPECT_EQ(v.missing[0].key, key(2));
  EXPECT_TRUE(Contains(v.missing[0].reason, "does not match its recorded CRC-32"));
  EXPECT_EQ(v.exit_code(), 1);
}

TEST_F(Status, RecordsTheInputDoesNotListAndUnrecordedFrames) {
  dm::Manifest m = manifest();
  for (int i : {0, 1}) m.frames[key(i)] = record(i);
  m.frames["depth/999999.png"] = record(0);
  m.failures["depth/999998.png"] = {"999998", dm::Failure::Input, "gone"};
  write(m, dm::Shard{0, 3});

  const dm::DatasetStatus s = status();
  EXPECT_EQ(s.manifests[0].not_listed, 1u);
  EXPECT_EQ(s.not_listed, 1u);
  EXPECT_EQ(s.done, 2u);
  EXPECT_TRUE(s.failures.empty()) << "not the input's frame";
  ASSERT_EQ(s.missing.size(), 4u);
  for (const auto& mf : s.missing) EXPECT_EQ(mf.reason, "not recorded") << mf.key;
  EXPECT_EQ(s.missing_shard_count, 2u);
  ASSERT_EQ(s.missing_shards.size(), 2u);
  EXPECT_EQ(s.missing_shards[0].index, 1u);
  EXPECT_EQ(s.missing_shards[1].index, 2u);
  EXPECT_TRUE(Contains(s.to_text(), "no manifest for 2 shard(s): 1/3 2/3"));
  EXPECT_TRUE(Contains(s.to_text(), "1 recorded frame(s) the input does not list"));

  // Without a frame list a missing shard manifest leaves the folder incomplete.
  for (int i : {2, 3, 4, 5}) m.frames[key(i)] = record(i);
  m.failures.clear();
  write(m, dm::Shard{0, 3});
  const dm::DatasetStatus u = status(false, false, false);
  EXPECT_TRUE(u.failures.empty() && u.missing.empty());
  EXPECT_FALSE(u.complete());
  EXPECT_TRUE(Contains(u.to_text(), "status: incomplete (2 shard manifest(s) missing)"));
  EXPECT_TRUE(status().complete()) << "with the frame list every frame is done";
}

TEST_F(Status, AFolderWithoutManifestsOrThatDoesNotExist) {
  const dm::DatasetStatus none = status();
  EXPECT_TRUE(none.manifests.empty());
  EXPECT_EQ(none.missing.size(), 6u);
  EXPECT_FALSE(none.complete());
  EXPECT_TRUE(Contains(none.to_text(), "manifests: none"));
  const dm::DatasetStatus empty = status(false, false, false);
  EXPECT_FALSE(empty.complete()) << "nothing recorded is not complete";
  EXPECT_TRUE(Contains(empty.to_text(), "status: incomplete (nothing done)"));

  const dm::DatasetStatus gone = dm::compute_status(tmp_ / "not-yet");
  EXPECT_FALSE(gone.dir_exists);
  EXPECT_FALSE(gone.complete());
  EXPECT_TRUE(Contains(gone.to_text(), "the folder does not exist"));
  dmtest::write_text(tmp_ / "a-file", "x");
  EXPECT_THROW(dm::compute_status(tmp_ / "a-file"), dm::InputError);
}

TEST_F(Status, TextListsAreCappedAndTheJsonHoldsEveryNumber) {
  dm::Manifest s0 = manifest();
  s0.frames[key(0)] = record(0);
  s0.failures[key(2)] = {"000002", dm::Failure::Input, "bad \"quoted\" \xff byte"};
  write(s0, dm::Shard{0, 2});
  dm::Manifest s1 = manifest();
  s1.frames[key(1)] = record(1);
  write(s1, dm::Shard{1, 2});

  const dm::DatasetStatus s = status();
  EXPECT_EQ(s.rerun_keys(), (std::vector<std::string>{key(2), key(3), key(4), key(5)})) << "in frame order";
  const std::string capped = s.to_text(2);
  EXPECT_TRUE(Contains(capped,
                       "missing (3):\n  depth/000003.png: not recorded\n  depth/000004.png: not recorded\n"
                       "  … and 1 more (--all lists every one)\n"));
  EXPECT_TRUE(Contains(s.to_text(0), "  depth/000005.png: not recorded\n"));
  EXPECT_FALSE(Contains(s.to_text(0), "more (--all"));

  const nlohmann::json j = nlohmann::json::parse(s.to_json(true));
  EXPECT_EQ(j["format"], "depthmask-status");
  EXPECT_EQ(j["version"], 1);
  EXPECT_EQ(j["complete"], false);
  EXPECT_EQ(j["exit_code"], 1);
  EXPECT_EQ(j["judged_against_input"], true);
  EXPECT_EQ(j["settings"], kSettings);
  ASSERT_EQ(j["manifests"].size(), 2u);
  EXPECT_EQ(j["manifests"][0]["file"], "depthmask-manifest.shard-0-of-2.json");
  EXPECT_EQ(j["manifests"][0]["shard"]["index"], 0);
  EXPECT_EQ(j["manifests"][0]["shard"]["count"], 2);
  EXPECT_EQ(j["manifests"][0]["done"], 1);
  EXPECT_EQ(j["manifests"][0]["failed"], 1);
  EXPECT_EQ(j["manifests"][0]["counted"], true);
  EXPECT_TRUE(j["manifests"][0]["error"].is_null());
  EXPECT_EQ(j["totals"]["frames"], 6);
  EXPECT_EQ(j["totals"]["done"], 2);
  EXPECT_EQ(j["totals"]["failed"], 1);
  EXPECT_EQ(j["totals"]["missing"], 3);
  EXPECT_EQ(j["totals"]["rerun"], 4);
  ASSERT_EQ(j["failures"].size(), 1u);
  EXPECT_EQ(j["failures"][0]["key"], key(2));
  EXPECT_EQ(j["failures"][0]["class"], "input");
  EXPECT_TRUE(Contains(j["failures"][0]["message"].get<std::string>(), "bad \"quoted\""));
  ASSERT_EQ(j["missing_frames"].size(), 3u);
  EXPECT_EQ(j["missing_frames"][0]["key"], key(3));
  EXPECT_EQ(j["missing_frames"][0]["reason"], "not recorded");
  EXPECT_EQ(j["rerun"], nlohmann::json(s.rerun_keys()));
  const nlohmann::json short_doc = nlohmann::json::parse(s.to_json(false));
  EXPECT_FALSE(short_doc.contains("missing_frames"));
  EXPECT_FALSE(short_doc.contains("rerun"));
  EXPECT_EQ(short_doc["totals"]["missing"], 3);
}

TEST_F(Status, AHeadFieldItDoesNotKnowSuchAsTheShardsOwnIsIgnored) {
  dm::Manifest m = manifest();
  for (int i = 0; i < 6; ++i) m.frames[key(i)] = record(i);
  std::string text = m.to_json();
  const std::string at = "\"version\":2,";
  ASSERT_NE(text.find(at), std::string::npos);
  text.insert(text.find(at) + at.size(), "\"shard\":{\"index\":0,\"count\":1},");
  dmtest::write_text(out() / dm::manifest_name(dm::Shard{0, 1}), text);
  const dm::DatasetStatus s = status();
  EXPECT_TRUE(s.manifests.at(0).error.empty()) << s.manifests.at(0).error;
  EXPECT_TRUE(s.complete());
}

TEST_F(Status, AStopRequestEndsItWithInterruptedError) {
  dm::Manifest m = manifest();
  m.frames[key(0)] = record(0);
  write(m);
  std::atomic<bool> stop{true};
  dm::StatusOptions o;
  o.stop = &stop;
  EXPECT_THROW(dm::compute_status(out(), o), dm::InterruptedError) << "not an unreadable manifest";
  stop = false;
  EXPECT_EQ(dm::compute_status(out(), o).done, 1u);
}

// ---------------------------------------------------------------------------------------------------
// Memory

// Kibibytes of a "VmRSS"/"VmHWM" line of /proc/self/status; -1 when absent.
long proc_kib(const std::string& field) {
  std::ifstream in("/proc/self/status");
  std::string line;
  while (std::getline(in, line))
    if (line.rfind(field + ":", 0) == 0) return std::stol(line.substr(field.size() + 1));
  return -1;
}

// AddressSanitizer's allocator pads every allocation with redzones and keeps freed blocks in its
// quarantine, so resident sizes under it say nothing about the release build's (CI measured 144 MB
// where the release build holds 44 MB). The bound is checked by the release builds' test runs.
#if defined(__SANITIZE_ADDRESS__)
#define DM_UNDER_ASAN 1
#elif defined(__has_feature)
#if __has_feature(address_sanitizer)
#define DM_UNDER_ASAN 1
#endif
#endif

TEST(StatusMemory, AManifestOf300000RecordsIsNeverHeldWhole) {
#ifdef DM_UNDER_ASAN
  GTEST_SKIP() << "AddressSanitizer's redzones and quarantine inflate the resident size; the 120 MB bound "
                  "is checked in the release build";
#endif
  // The peak resident size is reset to the current one (clear_refs 5, Linux 4.0+) so that the peak
  // measured is compute_status's own, not an earlier test's.
  TempDir tmp;
  const fs::path out = tmp / "out";
  fs::create_directories(out);
  const std::string bytes = "one output every record names";
  dmtest::write_text(out / "shared.tiff", bytes);
  const dm::OutputFile file{"shared.tiff", bytes.size(), dm::crc32_of(bytes.data(), bytes.size())};
  constexpr size_t kRecords = 300000;
  {
    // Written line by line with the writer's own pieces: the test holds no document either.
    std::ofstream m(out / dm::manifest_name(dm::Shard{0, 1}), std::ios::binary);
    m << dm::Manifest::head_text("0123456789abcdef", dm::HistogramSpec{0.0, 10.0, 32});
    const dm::FrameStats stats{1000, 307200, std::vector<uint64_t>(32, 31)};
    for (size_t i = 0; i < kRecords; ++i) {
      char key[48];
      std::snprintf(key, sizeof key, "scene_%03zu/depth/%06zu.png", i / 1000, i);
      m << (i ? ",\n" : "\n") << dm::Manifest::line_text(key, {std::to_string(i), "00000000000000aa", {file}, stats});
    }
    m << dm::Manifest::middle_text() << "\n"
      << dm::Manifest::failure_line_text("scene_999/depth/x.png", {"x", dm::Failure::Input, "bad"})
      << dm::Manifest::tail_text();
  }
  const auto manifest_mb =
      static_cast<double>(fs::file_size(out / dm::manifest_name(dm::Shard{0, 1}))) / (1024.0 * 1024.0);
  {
    std::ofstream clear("/proc/self/clear_refs");
    clear << "5";
    clear.flush();
    if (!clear) GTEST_SKIP() << "/proc/self/clear_refs cannot reset the peak resident size here";
  }
  const long before = proc_kib("VmRSS");
  if (before < 0 || proc_kib("VmHWM") < 0) GTEST_SKIP() << "no VmRSS/VmHWM in /proc/self/status";
  const auto t0 = std::chrono::steady_clock::now();
  const dm::DatasetStatus s = dm::compute_status(out);
  const double seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
  const double peak_mb = static_cast<double>(proc_kib("VmHWM") - before) / 1024.0;
  std::printf("status of %zu records (a %.0f MB manifest): %.2f s, peak resident growth %.1f MB\n", kRecords,
              manifest_mb, seconds, peak_mb);
  EXPECT_EQ(s.done, kRecords);
  EXPECT_EQ(s.failures.size(), 1u);
  // Measured 44 MB (one small entry per key); the records held as a Manifest (Manifest::read) add
  // 180 MB more, as JSON values more still.
  EXPECT_LT(peak_mb, 120.0) << "compute_status should hold keys, not the manifest";
}

}  // namespace
