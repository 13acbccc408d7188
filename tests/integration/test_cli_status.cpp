// `depthmask status` end to end: a real run's manifest split into two shards' manifests is totalled
// once per frame; a folder with a shard's manifest gone and an output deleted exits 1 and --missing
// prints exactly the frames to rerun; --json parses with the right numbers; a failed frame is listed
// with its class; a corrupt manifest is named; other settings do not count; usage errors exit 2. The
// counting itself: tests/unit/test_status.cpp.
#include <gtest/gtest.h>

#include <nlohmann/json.hpp>

#include <filesystem>
#include <fstream>
#include <sstream>
#include <string>
#include <vector>

#include "cli_helpers.h"
#include "depthmask/manifest.h"

namespace {

namespace fs = std::filesystem;
namespace dm = depthmask;
using dmcli::contains;
using dmtest::q;
using dmtest::TempDir;

const std::string kShard0 = "depthmask-manifest.shard-0-of-2.json";
const std::string kShard1 = "depthmask-manifest.shard-1-of-2.json";

std::string read_text(const fs::path& p) {
  const auto b = dmtest::read_bytes(p);
  return std::string(b.begin(), b.end());
}

std::vector<std::string> lines_of(const std::string& text) {
  std::vector<std::string> out;
  std::istringstream in(text);
  for (std::string l; std::getline(in, l);) out.push_back(l);
  return out;
}

// The committed sample run into out/ on the CPU.
class CliStatus : public ::testing::Test {
 protected:
  void SetUp() override {
    dmcli::copy_sample(tmp_ / "data");
    const auto r = run("run --config data/depthmask.yaml --output out --backend cpu");
    ASSERT_EQ(r.exit_code, 0) << r.output;
  }
  dmtest::CmdResult run(const std::string& args) const { return dmcli::run_in(tmp_.path(), args); }
  // `depthmask <args>` with stdout alone in a file, returned with the exit code.
  dmtest::CmdResult run_stdout(const std::string& args) const {
    const fs::path file = tmp_ / "stdout.txt";
    dmtest::CmdResult r = dmcli::run_in(tmp_.path(), args + " > " + q(file));
    r.output = read_text(file);
    return r;
  }
  fs::path out() const { return tmp_ / "out"; }

  // Splits the run's manifest into two shards' manifests (even frames, odd frames) and removes it.
  void split() const {
    const dm::Manifest all = dm::Manifest::read(out() / dm::kManifestName);
    ASSERT_EQ(all.frames.size(), 8u);
    dm::Manifest part[2];
    part[0].head = part[1].head = all.head;
    size_t i = 0;
    for (const auto& [key, rec] : all.frames) part[i++ % 2].frames.emplace(key, rec);
    dmtest::write_text(out() / kShard0, part[0].to_json());
    dmtest::write_text(out() / kShard1, part[1].to_json());
    fs::remove(out() / dm::kManifestName);
  }

  TempDir tmp_;
};

TEST_F(CliStatus, TwoShardsManifestsAreTotalledAndAFinishedRunExits0) {
  split();
  const auto r = run("status out --config data/depthmask.yaml");
  EXPECT_EQ(r.exit_code, 0) << r.output;
  EXPECT_TRUE(contains(r.output, kShard0 + " (shard 0 of 2): 4 record(s): 4 done")) << r.output;
  EXPECT_TRUE(contains(r.output, kShard1 + " (shard 1 of 2): 4 record(s): 4 done")) << r.output;
  EXPECT_TRUE(contains(r.output, "total: 8 frame(s) listed: 8 done, 0 failed, 0 missing")) << r.output;
  EXPECT_TRUE(contains(r.output, "status: complete\n")) << r.output;

  const auto js = run_stdout("status out --config data/depthmask.yaml --json --verify");
  EXPECT_EQ(js.exit_code, 0) << js.output;
  const nlohmann::json j = nlohmann::json::parse(js.output);
  EXPECT_EQ(j["complete"], true);
  EXPECT_EQ(j["exit_code"], 0);
  ASSERT_EQ(j["manifests"].size(), 2u);
  EXPECT_EQ(j["manifests"][1]["file"], kShard1);
  EXPECT_EQ(j["manifests"][1]["shard"]["index"], 1);
  EXPECT_EQ(j["manifests"][1]["done"], 4);
  EXPECT_EQ(j["totals"]["frames"], 8);
  EXPECT_EQ(j["totals"]["done"], 8);
  EXPECT_EQ(j["totals"]["missing"], 0);
  EXPECT_EQ(j["failures"].size(), 0u);

  // The configuration's output.dir stands in for OUTPUT_DIR: data/out was never written.
  EXPECT_EQ(run("status --config data/depthmask.yaml").exit_code, 1);
  // Alone, the folder's run record names the input and the settings (issue 28): judged against them.
  const auto bare = run("status out");
  EXPECT_EQ(bare.exit_code, 0) << bare.output;
  EXPECT_TRUE(contains(bare.output, "from the run records: depthmask-run.json")) << bare.output;
  EXPECT_TRUE(contains(bare.output, "total: 8 frame(s) listed: 8 done")) << bare.output;
  // --input alone moves the recorded input (here: to where it is) and keeps the recorded settings.
  EXPECT_EQ(run("status out --input data").exit_code, 0);
  // A --set gives the settings: without the run's depth.max 2 they differ.
  const auto other = run("status out --input data --set output.preview=true");
  EXPECT_EQ(other.exit_code, 1) << other.output;
  EXPECT_TRUE(contains(other.output, "recorded only by manifests of other settings")) << other.output;
  // Without a run record, completeness against the input is not judged.
  fs::remove(out() / "depthmask-run.json");
  const auto unrecorded = run("status out");
  EXPECT_EQ(unrecorded.exit_code, 0) << unrecorded.output;
  EXPECT_TRUE(contains(unrecorded.output, "cannot be judged without --config or --input")) << unrecorded.output;
  EXPECT_TRUE(contains(unrecorded.output, "total: 8 frame(s) recorded: 8 done")) << unrecorded.output;
  EXPECT_EQ(run("status out --input data --set depth.max=2 --set output.preview=true").exit_code, 0);
}

TEST_F(CliStatus, AnIncompleteFolderExits1AndMissingListsExactlyTheFramesToRerun) {
  split();
  // Shard 1 (frames 1, 3, 5, 7) never wrote its manifest; frame 2 lost an output.
  fs::remove(out() / kShard1);
  const dm::Manifest s0 = dm::Manifest::read(out() / kShard0);
  const std::string lost = s0.frames.at("depth/000002.png").files.at(0).name;
  fs::remove(out() / lost);

  const auto r = run("status out --config data/depthmask.yaml");
  EXPECT_EQ(r.exit_code, 1) << r.output;
  EXPECT_TRUE(contains(r.output, "total: 8 frame(s) listed: 3 done, 0 failed, 5 missing")) << r.output;
  EXPECT_TRUE(contains(r.output, "depth/000002.png: output '" + lost + "' is missing (recorded in " + kShard0 + ")"))
      << r.output;
  EXPECT_TRUE(contains(r.output, "depth/000001.png: not recorded")) << r.output;
  EXPECT_TRUE(contains(r.output, "no manifest for 1 shard(s): 1/2")) << r.output;
  EXPECT_TRUE(contains(r.output, "status: incomplete (5 missing)")) << r.output;

  const std::vector<std::string> want{"depth/000001.png", "depth/000002.png", "depth/000003.png", "depth/000005.png",
                                      "depth/000007.png"};
  const auto m = run_stdout("status out --config data/depthmask.yaml --missing");
  EXPECT_EQ(m.exit_code, 1);
  EXPECT_EQ(lines_of(m.output), want) << "one key per line and nothing else:\n" << m.output;

  const auto js = run_stdout("status out --config data/depthmask.yaml --json --missing");
  EXPECT_EQ(js.exit_code, 1);
  const nlohmann::json j = nlohmann::json::parse(js.output);
  EXPECT_EQ(j["complete"], false);
  EXPECT_EQ(j["totals"]["done"], 3);
  EXPECT_EQ(j["totals"]["missing"], 5);
  EXPECT_EQ(j["missing_shard_count"], 1);
  EXPECT_EQ(j["rerun"], nlohmann::json(want));
  ASSERT_EQ(j["missing_frames"].size(), 5u);
  EXPECT_EQ(j["missing_frames"][1]["key"], "depth/000002.png");

  // A run finishes the frames (its own manifest: it redoes them all) and the folder is complete.
  ASSERT_EQ(run("run --config data/depthmask.yaml --output out --backend cpu").exit_code, 0);
  const auto after = run("status out --config data/depthmask.yaml");
  EXPECT_EQ(after.exit_code, 0) << after.output;
  EXPECT_TRUE(contains(after.output, "4 done in an earlier manifest")) << "shard 0's records count once:\n"
                                                                       << after.output;
  EXPECT_EQ(run_stdout("status out --config data/depthmask.yaml --missing").output, "");
}

TEST_F(CliStatus, AFailedFrameIsListedWithItsClassUntilARunDoesIt) {
  const fs::path mask = tmp_ / "data" / "mask" / "000003.png";
  const auto saved = dmtest::read_bytes(mask);
  fs::remove(mask);
  ASSERT_EQ(run("run --config data/depthmask.yaml --output out --backend cpu").exit_code, 1);

  const auto r = run("status out --config data/depthmask.yaml");
  EXPECT_EQ(r.exit_code, 1) << r.output;
  EXPECT_TRUE(contains(r.output, "total: 8 frame(s) listed: 7 done, 1 failed, 0 missing")) << r.output;
  EXPECT_TRUE(contains(r.output, "failed (1):\n  depth/000003.png [input]: ")) << r.output;
  EXPECT_EQ(run_stdout("status out --config data/depthmask.yaml --missing").output, "depth/000003.png\n");
  const nlohmann::json j = nlohmann::json::parse(run_stdout("status out --json").output);
  ASSERT_EQ(j["failures"].size(), 1u);
  EXPECT_EQ(j["failures"][0]["class"], "input");
  EXPECT_EQ(j["failures"][0]["id"], "000003");
  EXPECT_TRUE(contains(j["failures"][0]["message"].get<std::string>(), "000003")) << j.dump();

  dmtest::write_bytes(mask, saved);
  ASSERT_EQ(run("run --config data/depthmask.yaml --output out --backend cpu").exit_code, 0);
  EXPECT_EQ(run("status out --config data/depthmask.yaml").exit_code, 0);
}

TEST_F(CliStatus, ACorruptManifestIsNamedAndTheFolderIsIncomplete) {
  split();
  dmtest::write_text(out() / kShard1, "{\"format\": \"depthmask-manifest\", \"version\": 2, \"frames\": {\"x\"");
  const auto r = run("status out --config data/depthmask.yaml");
  EXPECT_EQ(r.exit_code, 1) << r.output;
  EXPECT_TRUE(contains(r.output, kShard1 + " (shard 1 of 2): UNREADABLE, nothing of it counts: ")) << r.output;
  EXPECT_TRUE(contains(r.output, "4 done, 0 failed, 4 missing")) << r.output;
  const nlohmann::json j = nlohmann::json::parse(run_stdout("status out --json").output);
  EXPECT_TRUE(j["manifests"][1]["error"].is_string());
  EXPECT_EQ(j["manifests"][1]["counted"], false);
  EXPECT_EQ(j["exit_code"], 1);
}

TEST_F(CliStatus, UsageAndConfigurationErrorsExit2) {
  EXPECT_EQ(run("status").exit_code, 2) << "OUTPUT_DIR, or a configuration naming it, is required";
  EXPECT_EQ(run("status out --bogus").exit_code, 2);
  EXPECT_EQ(run("status out --config missing.yaml").exit_code, 2);
  const auto key = run("status out --input data --set no.such_key=1");
  EXPECT_EQ(key.exit_code, 2) << key.output;
  EXPECT_TRUE(contains(key.output, "no.such_key")) << key.output;
  // An input folder that is not there is an input error: 1, like an incomplete folder.
  EXPECT_EQ(run("status out --input no-such-folder").exit_code, 1);
  const auto help = run("--help");
  EXPECT_EQ(help.exit_code, 0);
  EXPECT_TRUE(contains(help.output, "status")) << help.output;
  const auto own = run("status --help");
  EXPECT_EQ(own.exit_code, 0);
  EXPECT_TRUE(contains(own.output, "--missing")) << own.output;
}

}  // namespace
