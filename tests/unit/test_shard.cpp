// Sharded runs (issue 19), the parts that need no CLI: the partition of a listing into shards, the
// job engines' variables behind run.shard auto, the manifests' and temporary files' names, the lock
// of a shard, the exit code of a busy shard, and CUDA_VISIBLE_DEVICES in the backend's reason.
#include <gtest/gtest.h>

#include <signal.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <map>
#include <random>
#include <set>
#include <string>
#include <vector>

#include "depthmask/config.h"
#include "depthmask/encoders.h"
#include "depthmask/errors.h"
#include "depthmask/manifest.h"
#include "depthmask/platform.h"
#include "depthmask/shard.h"
#include "test_support.h"

namespace dm = depthmask;
namespace fs = std::filesystem;
using dm::Shard;

namespace {

// A listing of `n` frames over a few sequences, as a dataset's folders give it.
std::vector<dm::FrameEntry> listing(size_t n) {
  std::vector<dm::FrameEntry> frames;
  for (size_t i = 0; i < n; ++i) {
    dm::FrameEntry f;
    f.index = i;
    f.id = std::to_string(i);
    f.relative = fs::path("seq-" + std::to_string(i % 7)) / "depth" / ("frame-" + std::to_string(i) + ".png");
    f.depth = "/data" / f.relative;
    frames.push_back(f);
  }
  return frames;
}

std::set<std::string> keys_of(const std::vector<dm::FrameEntry>& frames) {
  std::set<std::string> keys;
  for (const auto& f : frames) keys.insert(dm::manifest_key(f));
  return keys;
}

// ---------------------------------------------------------------------------------------------------
// The partition

TEST(ShardPartition, SharesAreDisjointCoverEveryFrameAndBalanceToOne) {
  for (const size_t frames : {0u, 1u, 5u, 97u, 1000u}) {
    for (const size_t n : {1u, 2u, 3u, 4u, 16u, 200u}) {
      SCOPED_TRACE(std::to_string(frames) + " frames, " + std::to_string(n) + " shards");
      const auto all = listing(frames);
      std::set<std::string> seen;
      size_t smallest = frames, largest = 0;
      for (size_t k = 0; k < n; ++k) {
        const auto share = dm::shard_frames(all, Shard{k, n});
        smallest = std::min(smallest, share.size());
        largest = std::max(largest, share.size());
        for (const auto& key : keys_of(share)) EXPECT_TRUE(seen.insert(key).second) << key << " in two shards";
      }
      EXPECT_EQ(seen, keys_of(all)) << "the union is every frame";
      EXPECT_LE(largest - smallest, 1u) << "balanced to one frame";
    }
  }
}

TEST(ShardPartition, ShuffledListingsGiveTheSameShares) {
  const auto all = listing(500);
  std::map<size_t, std::set<std::string>> want;
  for (size_t k = 0; k < 4; ++k) want[k] = keys_of(dm::shard_frames(all, Shard{k, 4}));
  std::mt19937 rng(19);
  for (int round = 0; round < 5; ++round) {
    auto shuffled = all;
    std::shuffle(shuffled.begin(), shuffled.end(), rng);
    for (size_t k = 0; k < 4; ++k) EXPECT_EQ(keys_of(dm::shard_frames(shuffled, Shard{k, 4})), want[k]) << k;
  }
}

TEST(ShardPartition, RoundRobinOverTheKeysSortedBytewiseInListingOrderWithinAShare) {
  // Keys "a/1" < "a/10" < "a/2" < "b/0" byte-wise (not in natural order): positions 0..3, so shard 0 of
  // 2 gets a/1 and a/2 (listing positions 3 and 1), shard 1 a/10 and b/0 (2 and 0).
  std::vector<dm::FrameEntry> frames(4);
  const char* rel[] = {"b/0", "a/2", "a/10", "a/1"};  // a listing in some other order
  for (size_t i = 0; i < 4; ++i) {
    frames[i].id = std::to_string(i);
    frames[i].index = i;
    frames[i].relative = rel[i];
  }
  EXPECT_EQ(dm::shard_positions(frames, Shard{0, 2}), (std::vector<size_t>{1, 3})) << "a/2 and a/1";
  EXPECT_EQ(dm::shard_positions(frames, Shard{1, 2}), (std::vector<size_t>{0, 2})) << "b/0 and a/10";
  const auto share = dm::shard_frames(frames, Shard{1, 2});
  ASSERT_EQ(share.size(), 2u);
  EXPECT_EQ(share[0].id, "0") << "the listing's order within the share";
  EXPECT_EQ(share[1].id, "2");
  EXPECT_EQ(share[1].index, 2u) << "frames keep their index";
}

TEST(ShardPartition, EachSequenceIsSpreadOverEveryShard) {
  const auto all = listing(700);  // 7 sequences of 100
  for (size_t k = 0; k < 4; ++k) {
    std::set<std::string> sequences;
    for (const auto& f : dm::shard_frames(all, Shard{k, 4})) sequences.insert(f.relative.begin()->string());
    EXPECT_EQ(sequences.size(), 7u) << "shard " << k;
  }
}

TEST(ShardSpec, ParsesKOfNAndRefusesTheRest) {
  EXPECT_EQ(dm::parse_shard("0/1"), (Shard{0, 1}));
  EXPECT_EQ(dm::parse_shard("3/4"), (Shard{3, 4}));
  EXPECT_EQ(dm::parse_shard("999999/1000000"), (Shard{999999, 1000000}));
  for (const char* bad : {"", "4/4", "5/4", "1/0", "-1/4", "+1/4", " 1/4", "1/4 ", "1//4", "1", "a/b", "1/1000001",
                          "auto", "1/4/5", "0x1/4"})
    EXPECT_FALSE(dm::parse_shard(bad).has_value()) << "'" << bad << "'";
  EXPECT_EQ(dm::to_string(Shard{2, 8}), "2/8");
  EXPECT_TRUE(dm::is_shard_spec(""));
  EXPECT_TRUE(dm::is_shard_spec("auto"));
  EXPECT_TRUE(dm::is_shard_spec("1/2"));
  EXPECT_FALSE(dm::is_shard_spec("Auto"));
  EXPECT_FALSE(dm::is_shard_spec("2/2"));
}

TEST(ShardSpec, TheConfigurationChecksRunShardAndLeavesTheSettingsHashAlone) {
  const dm::Config plain = dm::load_config(std::nullopt, {});
  const dm::Config sharded =
      dm::load_config(std::nullopt, {dm::parse_override("run.shard=1/4"), dm::parse_override("run.shard_count=4")});
  EXPECT_EQ(sharded.run.shard, "1/4");
  EXPECT_EQ(sharded.run.shard_count, 4);
  EXPECT_EQ(dm::settings_hash(sharded), dm::settings_hash(plain)) << "shards of one run resume each other";
  EXPECT_EQ(dm::load_config(std::nullopt, {dm::parse_override("run.shard=auto")}).run.shard, "auto");
  for (const char* bad : {"run.shard=4/4", "run.shard=every", "run.shard_count=-1"}) {
    const std::string m =
        dmtest::message_of<dm::ConfigError>([&] { dm::load_config(std::nullopt, {dm::parse_override(bad)}); });
    EXPECT_TRUE(m.find(std::string(bad).substr(0, std::string(bad).find('='))) != std::string::npos) << m;
  }
}

// ---------------------------------------------------------------------------------------------------
// run.shard auto: the job engines' variables

struct Env {
  std::map<std::string, std::string> vars;
  dm::EnvGetter getter() const {
    return [this](const char* name) -> std::optional<std::string> {
      const auto it = vars.find(name);
      if (it == vars.end()) return std::nullopt;
      return it->second;
    };
  }
};

dm::RunConfig run_with(const std::string& shard, int count = 0) {
  dm::RunConfig r;
  r.shard = shard;
  r.shard_count = count;
  return r;
}

Env slurm(const std::string& id, const std::string& min, const std::string& max, const std::string& count,
          const std::optional<std::string>& step = std::nullopt) {
  Env e;
  e.vars = {{"SLURM_ARRAY_TASK_ID", id},
            {"SLURM_ARRAY_TASK_MIN", min},
            {"SLURM_ARRAY_TASK_MAX", max},
            {"SLURM_ARRAY_TASK_COUNT", count}};
  if (step) e.vars["SLURM_ARRAY_TASK_STEP"] = *step;
  return e;
}

// The ConfigError resolve_shard throws (empty when it does not throw).
std::string refusal(const dm::RunConfig& r, const Env& e) {
  try {
    dm::resolve_shard(r, e.getter());
  } catch (const dm::ConfigError& err) {
    return err.what();
  }
  return "";
}

TEST(ShardAuto, SlurmArrays) {
  auto resolved = [](const Env& e) { return dm::resolve_shard(run_with("auto"), e.getter()); };
  const auto a = resolved(slurm("0", "0", "3", "4", "1"));
  EXPECT_EQ(a.shard, (Shard{0, 4}));
  EXPECT_NE(a.log.find("SLURM_ARRAY_TASK_ID=0"), std::string::npos) << a.log;
  EXPECT_NE(a.log.find("0/4"), std::string::npos) << a.log;
  EXPECT_EQ(resolved(slurm("7", "4", "7", "4")).shard, (Shard{3, 4})) << "--array=4-7, STEP unset: 1";
  EXPECT_EQ(resolved(slurm("5", "1", "9", "5", "2")).shard, (Shard{2, 5})) << "--array=1-9:2";
  EXPECT_EQ(resolved(slurm("9", "1", "9", "3", "4")).shard, (Shard{2, 3})) << "1,5,9 as --array=1-9:4";
  const auto one = resolved(slurm("3", "3", "3", "1"));
  EXPECT_EQ(one.shard, (Shard{0, 1}));
  EXPECT_EQ(dm::resolve_shard(run_with("auto", 8), slurm("2", "0", "7", "8").getter()).shard, (Shard{2, 8}))
      << "a matching --shard-count is fine";
}

TEST(ShardAuto, SlurmArraysThatCannotBeShardsAreConfigErrors) {
  const auto r = run_with("auto");
  auto refused = [&](const Env& e, const std::string& says) {
    const std::string m = refusal(r, e);
    EXPECT_NE(m.find(says), std::string::npos) << "'" << m << "' should say " << says;
  };
  refused(slurm("5", "1", "9", "3", "1"), "not evenly spaced");   // --array=1,5,9
  refused(slurm("5", "1", "9", "3"), "not evenly spaced");        // the same without STEP
  refused(slurm("4", "1", "9", "3", "4"), "not evenly spaced");   // an id between the steps
  refused(slurm("1", "0", "10", "4", "3"), "not evenly spaced");  // MAX off the steps
  refused(slurm("8", "0", "7", "8"), "outside");
  refused(slurm("1", "2", "7", "6"), "outside");
  refused(slurm("1", "0", "3", "4", "0"), "SLURM_ARRAY_TASK_STEP is 0");
  refused(slurm("1", "0", "3", "0"), "SLURM_ARRAY_TASK_COUNT");
  refused(slurm("x", "0", "3", "4"), "SLURM_ARRAY_TASK_ID='x'");
  refused(slurm("1", "-1", "3", "4"), "SLURM_ARRAY_TASK_MIN='-1'");
  refused(slurm("1", "0", "3", "4", "two"), "SLURM_ARRAY_TASK_STEP='two'");
  for (const char* missing : {"SLURM_ARRAY_TASK_MIN", "SLURM_ARRAY_TASK_MAX", "SLURM_ARRAY_TASK_COUNT"}) {
    Env e = slurm("1", "0", "3", "4");
    e.vars.erase(missing);
    refused(e, std::string(missing) + " is not set");
  }
  const std::string m = refusal(run_with("auto", 3), slurm("1", "0", "3", "4"));
  EXPECT_NE(m.find("--shard-count"), std::string::npos) << m;
}

TEST(ShardAuto, KubernetesIndexedJobs) {
  Env e;
  e.vars = {{"JOB_COMPLETION_INDEX", "2"}};
  const auto from_flag = dm::resolve_shard(run_with("auto", 5), e.getter());
  EXPECT_EQ(from_flag.shard, (Shard{2, 5}));
  EXPECT_NE(from_flag.log.find("JOB_COMPLETION_INDEX=2"), std::string::npos) << from_flag.log;
  EXPECT_NE(from_flag.log.find("--shard-count"), std::string::npos) << from_flag.log;
  e.vars["DEPTHMASK_SHARD_COUNT"] = "3";
  const auto from_env = dm::resolve_shard(run_with("auto"), e.getter());
  EXPECT_EQ(from_env.shard, (Shard{2, 3}));
  EXPECT_NE(from_env.log.find("DEPTHMASK_SHARD_COUNT=3"), std::string::npos) << from_env.log;
  EXPECT_EQ(dm::resolve_shard(run_with("auto", 4), e.getter()).shard, (Shard{2, 4})) << "the flag wins";
}

TEST(ShardAuto, KubernetesErrorsNameTheVariable) {
  auto refused = [](const dm::RunConfig& r, const std::map<std::string, std::string>& vars, const std::string& says) {
    Env e;
    e.vars = vars;
    const std::string m = refusal(r, e);
    EXPECT_NE(m.find(says), std::string::npos) << "'" << m << "' should say " << says;
  };
  refused(run_with("auto"), {{"JOB_COMPLETION_INDEX", "1"}}, "DEPTHMASK_SHARD_COUNT");
  refused(run_with("auto"), {{"JOB_COMPLETION_INDEX", "1"}}, "--shard-count");
  refused(run_with("auto", 4), {{"JOB_COMPLETION_INDEX", "4"}}, "out of range");
  refused(run_with("auto"), {{"JOB_COMPLETION_INDEX", "3"}, {"DEPTHMASK_SHARD_COUNT", "3"}}, "out of range");
  refused(run_with("auto", 4), {{"JOB_COMPLETION_INDEX", "one"}}, "JOB_COMPLETION_INDEX='one'");
  refused(run_with("auto"), {{"JOB_COMPLETION_INDEX", "1"}, {"DEPTHMASK_SHARD_COUNT", "0"}},
          "DEPTHMASK_SHARD_COUNT='0'");
  refused(run_with("auto"), {{"JOB_COMPLETION_INDEX", "1"}, {"DEPTHMASK_SHARD_COUNT", "many"}},
          "DEPTHMASK_SHARD_COUNT='many'");
}

TEST(ShardAuto, NoVariableBothEnginesOrAnExplicitShard) {
  const std::string none = refusal(run_with("auto"), Env{});
  for (const char* named : {"SLURM_ARRAY_TASK_ID", "JOB_COMPLETION_INDEX", "DEPTHMASK_SHARD_COUNT", "--shard K/N"})
    EXPECT_NE(none.find(named), std::string::npos) << none << " should name " << named;
  Env both = slurm("1", "0", "3", "4");
  both.vars["JOB_COMPLETION_INDEX"] = "1";
  EXPECT_NE(refusal(run_with("auto"), both).find("ambiguous"), std::string::npos);

  // K/N: the variables do not matter; run.shard_count must agree with N.
  const auto k = dm::resolve_shard(run_with("1/3"), both.getter());
  EXPECT_EQ(k.shard, (Shard{1, 3}));
  EXPECT_EQ(k.log, "");
  EXPECT_NE(refusal(run_with("1/3", 4), Env{}).find("run.shard_count"), std::string::npos);
  EXPECT_NE(refusal(run_with("3/3"), Env{}).find("run.shard"), std::string::npos) << "for C++ callers' configs";
  EXPECT_NE(refusal(run_with("", 4), Env{}).find("--shard auto"), std::string::npos) << "a count without auto";
}

TEST(ShardAuto, WithoutAutoARunNeverShardsItselfButSaysSo) {
  EXPECT_EQ(dm::resolve_shard(run_with(""), Env{}.getter()).shard, std::nullopt);
  EXPECT_EQ(dm::resolve_shard(run_with(""), Env{}.getter()).log, "");
  for (const auto& vars : std::vector<std::map<std::string, std::string>>{
           {{"SLURM_ARRAY_TASK_ID", "3"}}, {{"JOB_COMPLETION_INDEX", "0"}, {"DEPTHMASK_SHARD_COUNT", "2"}}}) {
    Env e;
    e.vars = vars;
    const auto c = dm::resolve_shard(run_with(""), e.getter());
    EXPECT_EQ(c.shard, std::nullopt);
    const char* named = vars.count("JOB_COMPLETION_INDEX") ? "JOB_COMPLETION_INDEX" : "SLURM_ARRAY_TASK_ID";
    EXPECT_NE(c.log.find(named), std::string::npos) << c.log;
    EXPECT_NE(c.log.find("--shard auto"), std::string::npos) << c.log;
  }
}

// ---------------------------------------------------------------------------------------------------
// Names

TEST(ShardNames, ManifestsOfEachShard) {
  EXPECT_EQ(dm::manifest_name(std::nullopt), "depthmask-manifest.json");
  EXPECT_EQ(dm::manifest_name(Shard{3, 16}), "depthmask-manifest.shard-3-of-16.json");
  EXPECT_EQ(dm::manifest_shard("depthmask-manifest.shard-3-of-16.json"), (Shard{3, 16}));
  EXPECT_EQ(dm::manifest_shard("depthmask-manifest.json"), std::nullopt);
  for (const char* not_a_shard : {"depthmask-manifest.shard-16-of-16.json", "depthmask-manifest.shard-03-of-16.json",
                                  "depthmask-manifest.shard-3of16.json", "depthmask-manifest.shard-3-of-16.json.lock"})
    EXPECT_EQ(dm::manifest_shard(not_a_shard), std::nullopt) << not_a_shard;
  for (const char* yes :
       {"depthmask-manifest.json", "depthmask-manifest.shard-0-of-2.json", "depthmask-manifest.x.json"})
    EXPECT_TRUE(dm::is_manifest_name(yes)) << yes;
  for (const char* no : {"depthmask-manifest.json.lock", ".depthmask-manifest.json.tmp@h-1-all-0", "depthmask-run.json",
                         "000001.json", "depthmask-manifest"})
    EXPECT_FALSE(dm::is_manifest_name(no)) << no;
  EXPECT_EQ(dm::shard_tag(std::nullopt), "all");
  EXPECT_EQ(dm::shard_tag(Shard{1, 4}), "1of4");
}

TEST(ShardNames, ManifestHeadCarriesTheShard) {
  dm::Manifest m;
  m.head.settings = "abc";
  m.head.shard = Shard{1, 4};
  const std::string text = m.to_json();
  EXPECT_NE(text.find("\"shard\":{\"index\":1,\"count\":4}"), std::string::npos) << text;
  EXPECT_EQ(dm::Manifest::parse(text, "m").head.shard, (Shard{1, 4}));
  m.head.shard.reset();
  EXPECT_EQ(dm::Manifest::parse(m.to_json(), "m").head.shard, std::nullopt) << "optional when reading";
  const std::string bad = R"({"format":"depthmask-manifest","version":2,"settings":"x","shard":{"index":4,"count":4},)"
                          R"("frames":{}})";
  EXPECT_NE(dmtest::message_of<dm::InputError>([&] { dm::Manifest::parse(bad, "m"); }).find("\"shard\""),
            std::string::npos);
}

TEST(TempFileNames, HostsWithDashesAndDotsParseUnambiguously) {
  struct Case {
    std::string name, host, shard;
    pid_t pid;
  };
  const std::vector<Case> cases{
      {".000001.tiff.tmp@node-7-2.cluster.example-5-123-0of4-17", "node-7-2.cluster.example-5", "0of4", 123},
      {".a-b@c.tmp-9.json.tmp@gpu-01-4711-all-0", "gpu-01", "all", 4711},
      {".x.tmp@h-1-2-3-12of16-99", "h-1-2", "12of16", 3},
      {".depth.tmp-1-2.png.tmp@host.local-42-3of8-5", "host.local", "3of8", 42},
      {".depthmask-write-test@node-3.rack-9-321", "node-3.rack-9", "", 321},
  };
  for (const Case& c : cases) {
    SCOPED_TRACE(c.name);
    const auto o = dm::temp_file_owner(c.name);
    ASSERT_TRUE(o.has_value());
    ASSERT_TRUE(o->host.has_value());
    EXPECT_EQ(*o->host, c.host);
    EXPECT_EQ(o->pid, c.pid);
    EXPECT_EQ(o->shard, c.shard);
  }
  // Earlier versions' names: no host.
  for (const char* old : {".000001.tiff.tmp-123-4", ".depthmask-write-test-55", ".a.tmp-b.tmp-7-0"}) {
    const auto o = dm::temp_file_owner(old);
    ASSERT_TRUE(o.has_value()) << old;
    EXPECT_FALSE(o->host.has_value()) << old;
  }
  for (const char* no :
       {".hidden", "000001.tiff", ".x.tmp@host-1-all", ".x.tmp@-1-all-0", ".x.tmp@h-0-all-0", ".x.tmp@h-x-all-0",
        ".x.tmp@h-1--0", ".x.tmp-abc-1", "@h-1-all-0", ".x.tmq@h-1-all-0", ".depthmask-write-test@h-"})
    EXPECT_FALSE(dm::temp_file_owner(no).has_value()) << no;
}

pid_t dead_pid() {
  const pid_t p = ::fork();
  if (p == 0) ::_exit(0);
  int status = 0;
  ::waitpid(p, &status, 0);
  return p;
}

TEST(TempFileNames, WriteFileAtomicNamesItsTemporaryWithHostPidAndShard) {
  dmtest::TempDir tmp;
  // What the writer is about to rename is not visible afterwards; a failed rename leaves nothing. The
  // name is checked through the parse of a name built as the writer builds it.
  dm::write_file_atomic(tmp / "a.txt", "x", 1, false, "2of4");
  EXPECT_TRUE(fs::exists(tmp / "a.txt"));
  const std::string name = ".a.txt.tmp@" + dm::host_name() + "-" + std::to_string(::getpid()) + "-2of4-0";
  const auto o = dm::temp_file_owner(name);
  ASSERT_TRUE(o.has_value());
  EXPECT_EQ(o->host, dm::host_name());
  const std::string host = dm::host_name();
  EXPECT_EQ(host.find('@'), std::string::npos);
  EXPECT_EQ(host.find('/'), std::string::npos);
  EXPECT_FALSE(host.empty());
}

TEST(TempFileNames, OnlyThisHostsTemporariesOfDeadProcessesAreRemoved) {
  dmtest::TempDir tmp;
  const std::string here = dm::host_name(), dead = std::to_string(dead_pid()), alive = std::to_string(::getpid());
  fs::create_directories(tmp / "sub");
  const std::vector<std::string> stale{
      ".000001.tiff.tmp@" + here + "-" + dead + "-0of4-0", "sub/.f.json.tmp@" + here + "-" + dead + "-all-3",
      ".depthmask-write-test@" + here + "-" + dead, ".000002.tiff.tmp-" + dead + "-1" /* an earlier version's */};
  const std::vector<std::string> kept{
      ".000003.tiff.tmp@" + here + "-" + alive + "-1of4-2",      // a live writer here
      ".000004.tiff.tmp@" + here + "x-" + dead + "-1of4-2",      // another host
      ".000005.tiff.tmp@other-node.example-" + dead + "-all-0",  // another host, any pid
      ".depthmask-write-test@other-node-" + dead,
      ".000006.tiff.tmp-" + alive + "-1",
      "000007.tiff"};
  for (const auto& n : stale) dmtest::write_text(tmp / n, "x");
  for (const auto& n : kept) dmtest::write_text(tmp / n, "x");
  EXPECT_EQ(dm::remove_stale_temp_files(tmp.path()), stale.size());
  for (const auto& n : stale) EXPECT_FALSE(fs::exists(tmp / n)) << n;
  for (const auto& n : kept) EXPECT_TRUE(fs::exists(tmp / n)) << n;
}

// ---------------------------------------------------------------------------------------------------
// The lock

// Each way of locking: flock() (local filesystems) and fcntl() (NFS and the rest), and the choice by
// the filesystem.
class ShardLockKinds : public ::testing::TestWithParam<dm::ShardLock::Kind> {
 protected:
  dm::ShardLock::Kind kind() const { return GetParam(); }
};

INSTANTIATE_TEST_SUITE_P(
    Kinds, ShardLockKinds,
    ::testing::Values(dm::ShardLock::Kind::Auto, dm::ShardLock::Kind::Flock, dm::ShardLock::Kind::Fcntl),
    [](const ::testing::TestParamInfo<dm::ShardLock::Kind>& param_info) {
      const dm::ShardLock::Kind k = param_info.param;
      return std::string(k == dm::ShardLock::Kind::Auto ? "Auto" : k == dm::ShardLock::Kind::Flock ? "Flock" : "Fcntl");
    });

TEST_P(ShardLockKinds, ASecondHolderOfTheSameShardIsRefusedWithExitCodeFive) {
  dmtest::TempDir tmp;
  const dm::ShardLock held(tmp.path(), Shard{1, 4}, kind());
  EXPECT_EQ(held.path(), tmp / "depthmask-manifest.shard-1-of-4.json.lock");
  EXPECT_TRUE(fs::exists(held.path()));
  try {
    const dm::ShardLock second(tmp.path(), Shard{1, 4}, kind());
    FAIL() << "a second lock of the same shard was granted";
  } catch (const dm::ShardBusyError& e) {
    const std::string m = e.what();
    EXPECT_NE(m.find(tmp.path().string()), std::string::npos) << m;
    EXPECT_NE(m.find("shard 1/4"), std::string::npos) << m;
    EXPECT_NE(m.find("host " + dm::host_name()), std::string::npos) << m;
    EXPECT_NE(m.find("pid " + std::to_string(::getpid())), std::string::npos) << m;
    EXPECT_EQ(e.failure(), dm::Failure::Busy);
    EXPECT_EQ(dm::exit_code(e.failure()), 5);
  }
  // Other shards, another N and the unsharded run take other locks.
  const dm::ShardLock other(tmp.path(), Shard{2, 4}, kind());
  const dm::ShardLock other_n(tmp.path(), Shard{1, 3}, kind());
  const dm::ShardLock unsharded(tmp.path(), std::nullopt, kind());
  EXPECT_THROW(dm::ShardLock(tmp.path(), std::nullopt, kind()), dm::ShardBusyError);
}

TEST_P(ShardLockKinds, ReleasedWithItsHolderAndRemoved) {
  dmtest::TempDir tmp;
  fs::path path;
  {
    const dm::ShardLock a(tmp.path(), Shard{0, 2}, kind());
    path = a.path();
  }
  EXPECT_FALSE(fs::exists(path)) << "the holder removes its lock file";
  { const dm::ShardLock again(tmp.path(), Shard{0, 2}, kind()); }

  // A holder that is SIGKILLed leaves its file, but no lock.
  int ready[2];
  ASSERT_EQ(::pipe(ready), 0);
  const pid_t child = ::fork();
  if (child == 0) {
    try {
      const dm::ShardLock held(tmp.path(), Shard{0, 2}, kind());
      (void)!::write(ready[1], "k", 1);
      ::pause();
    } catch (...) {
    }
    ::_exit(1);
  }
  char c = 0;
  ASSERT_EQ(::read(ready[0], &c, 1), 1);
  EXPECT_THROW(dm::ShardLock(tmp.path(), Shard{0, 2}, kind()), dm::ShardBusyError) << "held by the child";
  ::kill(child, SIGKILL);
  int status = 0;
  ::waitpid(child, &status, 0);
  ::close(ready[0]);
  ::close(ready[1]);
  EXPECT_TRUE(fs::exists(path)) << "a killed holder cannot remove its file";
  EXPECT_NO_THROW(dm::ShardLock(tmp.path(), Shard{0, 2}, kind())) << "but its lock died with it";
}

TEST_P(ShardLockKinds, AFolderThatCannotHoldTheLockIsAnOutputError) {
  dmtest::TempDir tmp;
  EXPECT_THROW(dm::ShardLock(tmp / "missing", Shard{0, 2}, kind()), dm::OutputError);
}

// ---------------------------------------------------------------------------------------------------
// Exit codes and CUDA_VISIBLE_DEVICES

TEST(ShardExitCodes, BusyIsFiveAndOrdered) {
  EXPECT_EQ(dm::exit_code(dm::Failure::Busy), 5);
  EXPECT_EQ(dm::to_string(dm::Failure::Busy), "busy");
  EXPECT_EQ(dm::most_severe(dm::Failure::Busy, dm::Failure::Internal), dm::Failure::Busy);
  EXPECT_EQ(dm::most_severe(dm::Failure::Busy, dm::Failure::Interrupted), dm::Failure::Interrupted);
  EXPECT_EQ(dm::failure_of(dm::ShardBusyError("x")), dm::Failure::Busy);
}

dm::PlatformInfo cuda_platform(size_t devices) {
  dm::PlatformInfo p;
  p.cuda_built = true;
  for (size_t i = 0; i < devices; ++i) {
    dm::DeviceInfo d;
    d.index = static_cast<int>(i);
    d.name = "GPU " + std::to_string(i);
    d.cc_major = 9;
    d.can_map_host_memory = true;
    p.devices.push_back(d);
  }
  return p;
}

TEST(ShardDevices, AutoSaysWhenCudaVisibleDevicesHidesEveryDevice) {
  dm::PlatformInfo p = cuda_platform(0);
  p.problem = "no usable CUDA device (cudaErrorNoDevice: no CUDA-capable device is detected)";
  p.cuda_visible_devices = "";
  const dm::BackendChoice c = dm::choose_backend(dm::BackendConfig{}, p);
  EXPECT_EQ(c.kind, dm::BackendKind::Cpu);
  EXPECT_NE(c.reason.find("CUDA_VISIBLE_DEVICES=\"\" hides every CUDA device"), std::string::npos) << c.reason;
  EXPECT_NE(dm::device_visibility(c, p).find("leaves no CUDA device visible"), std::string::npos);
  dm::BackendConfig copy;
  copy.kind = dm::BackendKind::Copy;
  const std::string m = dmtest::message_of<dm::PlatformError>([&] { dm::choose_backend(copy, p); });
  EXPECT_NE(m.find("CUDA_VISIBLE_DEVICES"), std::string::npos) << "an explicit GPU backend's error too: " << m;
  p.cuda_visible_devices.reset();
  EXPECT_EQ(dm::choose_backend(dm::BackendConfig{}, p).reason.find("CUDA_VISIBLE_DEVICES"), std::string::npos);
}

TEST(ShardDevices, TheRunSaysWhichVisibleDeviceItUses) {
  dm::PlatformInfo p = cuda_platform(2);
  EXPECT_EQ(dm::device_visibility(dm::choose_backend(dm::BackendConfig{}, p), p), "") << "not set: nothing";
  p.cuda_visible_devices = "3,5";
  dm::BackendConfig second;
  second.device = 1;
  const std::string v = dm::device_visibility(dm::choose_backend(second, p), p);
  EXPECT_EQ(v,
            "CUDA_VISIBLE_DEVICES=\"3,5\" leaves 2 CUDA device(s) visible; backend copy uses visible device 1 (GPU 1)")
      << v;
  dm::PlatformInfo cpu_only;
  cpu_only.cuda_visible_devices = "0";
  EXPECT_NE(dm::device_visibility(dm::choose_backend(dm::BackendConfig{}, cpu_only), cpu_only).find("no CUDA"),
            std::string::npos);
}

}  // namespace
