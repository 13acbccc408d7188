// `depthmask status OUT` and `depthmask report OUT` from the folder alone (issue 28): four shards run
// with --config and --set, then status with no option reports complete; a shard whose run record was
// written at its start and not since (killed) leaves its frames missing; run records of different
// settings exit 2 naming them; --input moves the recorded input (a moved dataset); --backend is taken
// and unused.
#include <gtest/gtest.h>

#include <nlohmann/json.hpp>

#include <filesystem>
#include <string>

#include "cli_helpers.h"
#include "depthmask/manifest.h"
#include "depthmask/run_record.h"

namespace {

namespace fs = std::filesystem;
namespace dm = depthmask;
using dmcli::contains;
using dmtest::q;
using dmtest::TempDir;

const std::string kCleanEnv = "env -u SLURM_ARRAY_TASK_ID -u JOB_COMPLETION_INDEX -u DEPTHMASK_SHARD_COUNT ";

std::string read_text(const fs::path& p) {
  const auto b = dmtest::read_bytes(p);
  return std::string(b.begin(), b.end());
}

class StatusFromFolder : public ::testing::Test {
 protected:
  void SetUp() override {
    const auto r = dm("synth --output " + q(data()) + " --frames 16 --size 32x24");
    ASSERT_EQ(r.exit_code, 0) << r.output;
  }
  dmtest::CmdResult dm(const std::string& args) const {
    return dmtest::run_shell("cd " + q(tmp_.path()) + " && " + kCleanEnv + dmtest::depthmask_cmd() + " " + args);
  }
  // One shard of the run, as a user types it: the configuration and a --set that changes the settings.
  void shard(size_t k) const {
    const auto r =
        dm("run --config data/depthmask.yaml --set output.preview=false --output out --backend cpu --shard " +
           std::to_string(k) + "/4");
    ASSERT_EQ(r.exit_code, 0) << r.output;
  }
  fs::path data() const { return tmp_ / "data"; }
  fs::path out() const { return tmp_ / "out"; }
  fs::path record(size_t k) const { return out() / dm::run_record_name(dm::Shard{k, 4}); }

  TempDir tmp_;
};

TEST_F(StatusFromFolder, FourShardsThenStatusAloneIsCompleteAndReportAloneReadsThem) {
  for (size_t k = 0; k < 4; ++k) shard(k);
  const nlohmann::json rec = nlohmann::json::parse(read_text(record(2)));
  EXPECT_EQ(rec["version"], 2);
  EXPECT_EQ(rec["state"], "finished");
  EXPECT_TRUE(rec["settings"].is_string());
  EXPECT_TRUE(rec["input"].is_string());

  const auto r = dm("status out");
  EXPECT_EQ(r.exit_code, 0) << r.output;
  EXPECT_TRUE(contains(r.output, "16 frame(s) listed")) << r.output;
  EXPECT_TRUE(contains(r.output, "total: 16 frame(s) listed: 16 done, 0 failed, 0 missing")) << r.output;
  EXPECT_TRUE(contains(r.output, "status: complete")) << r.output;
  EXPECT_TRUE(contains(r.output, "from the run records: depthmask-run.shard-0-of-4.json")) << r.output;
  // --backend as run took it: accepted, changes nothing.
  EXPECT_EQ(dm("status out --backend cpu").exit_code, 0);
  // The configuration alone (without the run's --set) still overrides the records: other settings.
  const auto other = dm("status out --config data/depthmask.yaml");
  EXPECT_EQ(other.exit_code, 1) << other.output;
  EXPECT_TRUE(contains(other.output, "recorded only by manifests of other settings")) << other.output;

  const auto report = dm("report out --backend cpu");
  ASSERT_EQ(report.exit_code, 0) << report.output;
  const std::string page = read_text(out() / dm::kReportName);
  EXPECT_TRUE(contains(page, "version 2: 16 frame(s) done, 0 failed")) << page.substr(0, 4000);
  EXPECT_TRUE(contains(page, "<tr><th>frames listed</th><td>16</td></tr>")) << page.substr(0, 4000);
}

TEST_F(StatusFromFolder, AShardKilledAfterItsStartRecordLeavesItsFramesMissing) {
  for (size_t k = 0; k < 4; ++k) shard(k);
  // Shard 3 as a kill right after its start leaves it: the record of its start, a manifest of no frame.
  nlohmann::json rec = nlohmann::json::parse(read_text(record(3)));
  rec["state"] = "running";
  rec["summary"] = nullptr;
  dmtest::write_text(record(3), rec.dump(2));
  const fs::path manifest = out() / dm::manifest_name(dm::Shard{3, 4});
  dm::Manifest m = dm::Manifest::read(manifest);
  const size_t lost = m.frames.size();
  ASSERT_GT(lost, 0u);
  m.frames.clear();
  dmtest::write_text(manifest, m.to_json());

  const auto r = dm("status out");
  EXPECT_EQ(r.exit_code, 1) << r.output;
  EXPECT_TRUE(contains(r.output, "16 done") == false) << r.output;
  EXPECT_TRUE(contains(r.output, std::to_string(16 - lost) + " done, 0 failed, " + std::to_string(lost) + " missing"))
      << r.output;
  EXPECT_TRUE(contains(r.output, "depthmask-run.shard-3-of-4.json (written at its start only")) << r.output;
  const auto missing = dm("status out --missing");
  EXPECT_EQ(missing.exit_code, 1);
  EXPECT_TRUE(contains(missing.output, "depth/")) << missing.output;
}

TEST_F(StatusFromFolder, RunRecordsOfDifferentSettingsExit2NamingThem) {
  for (size_t k = 0; k < 4; ++k) shard(k);
  nlohmann::json rec = nlohmann::json::parse(read_text(record(1)));
  rec["settings"] = "0123456789abcdef";
  dmtest::write_text(record(1), rec.dump(2));
  const auto r = dm("status out");
  EXPECT_EQ(r.exit_code, 2) << r.output;
  EXPECT_TRUE(contains(r.output, "depthmask-run.shard-0-of-4.json")) << r.output;
  EXPECT_TRUE(contains(r.output, "depthmask-run.shard-1-of-4.json (0123456789abcdef)")) << r.output;
  const auto report = dm("report out");
  EXPECT_EQ(report.exit_code, 2) << report.output;
  EXPECT_TRUE(contains(report.output, "depthmask-run.shard-1-of-4.json")) << report.output;
}

TEST_F(StatusFromFolder, InputOverridesTheRecordedRootOfAMovedDataset) {
  const auto run = dm("run --config data/depthmask.yaml --output out --backend cpu");
  ASSERT_EQ(run.exit_code, 0) << run.output;
  ASSERT_EQ(dm("status out").exit_code, 0);
  fs::rename(data(), tmp_ / "moved");
  const auto gone = dm("status out");
  EXPECT_NE(gone.exit_code, 0) << gone.output;
  const auto r = dm("status out --input moved");
  EXPECT_EQ(r.exit_code, 0) << r.output;
  EXPECT_TRUE(contains(r.output, "total: 16 frame(s) listed: 16 done")) << r.output;
  EXPECT_TRUE(contains(r.output, "moved")) << r.output;
}

}  // namespace
