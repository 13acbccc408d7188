// End-to-end tests of sharded runs (issue 19): `depthmask run --shard K/N` processes, alone or many at
// once into one output folder, give together the bytes of one unsharded run; a shard already running
// refuses a second process (exit 5); sharded and unsharded runs in one folder keep each other's
// records; SIGKILLs at random moments followed by re-runs change nothing; a re-run with another N
// skips what is done; SIGTERM exits 143 with the manifest flushed; `--shard auto` reads the job
// engines' variables; CUDA_VISIBLE_DEVICES="" runs on the CPU and says so.
#include <gtest/gtest.h>

#include <signal.h>
#include <sys/types.h>
#include <sys/wait.h>
#include <unistd.h>

#include <chrono>
#include <cstdio>
#include <fstream>
#include <map>
#include <random>
#include <regex>
#include <set>
#include <string>
#include <thread>
#include <vector>

#include "cli_helpers.h"
#include "depthmask/dataset.h"
#include "depthmask/manifest.h"
#include "depthmask/run_record.h"
#include "depthmask/shard.h"
#include "test_support.h"

namespace {

namespace dm = depthmask;
namespace fs = std::filesystem;
using dmcli::contains;
using dmtest::q;
using dmtest::TempDir;
using Clock = std::chrono::steady_clock;

const std::string kAllFormats = " --set 'output.format=[tiff,npy,exr,png16,ply,json]'";
// The runs here choose their shards themselves: a job engine's variables in the tests' own
// environment (the suite run as a Slurm job) must not change them.
const std::string kCleanEnv = "env -u SLURM_ARRAY_TASK_ID -u JOB_COMPLETION_INDEX -u DEPTHMASK_SHARD_COUNT ";

// Every file under `dir` that a run writes as an output, by path relative to it: not the run's
// bookkeeping (manifests, their locks, the run records: depthmask-run.json and each shard's).
std::map<std::string, std::vector<uint8_t>> outputs(const fs::path& dir) {
  std::map<std::string, std::vector<uint8_t>> out;
  for (const auto& e : fs::recursive_directory_iterator(dir)) {
    if (!e.is_regular_file()) continue;
    const std::string name = e.path().filename().string();
    if (dm::is_manifest_name(name) || name.rfind("depthmask-run", 0) == 0 ||
        (name.size() > 5 && name.compare(name.size() - 5, 5, ".lock") == 0))
      continue;
    out[e.path().lexically_relative(dir).generic_string()] = dmtest::read_bytes(e.path());
  }
  return out;
}

// Same names, same bytes (the first few differences named).
void expect_same_outputs(const std::map<std::string, std::vector<uint8_t>>& want,
                         const std::map<std::string, std::vector<uint8_t>>& got) {
  std::vector<std::string> wn, gn;
  for (const auto& kv : want) wn.push_back(kv.first);
  for (const auto& kv : got) gn.push_back(kv.first);
  ASSERT_EQ(gn, wn);
  size_t differ = 0;
  for (const auto& [name, bytes] : want)
    if (got.at(name) != bytes && ++differ <= 5) ADD_FAILURE() << name << " differs";
  EXPECT_EQ(differ, 0u);
}

// The frames each manifest in `dir` records, by manifest file name.
std::map<std::string, std::set<std::string>> manifests(const fs::path& dir) {
  std::map<std::string, std::set<std::string>> out;
  for (const auto& e : fs::directory_iterator(dir)) {
    const std::string name = e.path().filename().string();
    if (!dm::is_manifest_name(name)) continue;
    std::set<std::string>& keys = out[name];
    for (const auto& kv : dm::Manifest::read(e.path()).frames) keys.insert(kv.first);
  }
  return out;
}

std::set<std::string> recorded_anywhere(const fs::path& dir) {
  std::set<std::string> all;
  for (const auto& [name, keys] : manifests(dir)) all.insert(keys.begin(), keys.end());
  return all;
}

// Hidden files anywhere under `dir` (temporaries, probes).
std::vector<std::string> hidden_files(const fs::path& dir) {
  std::vector<std::string> out;
  for (const auto& e : fs::recursive_directory_iterator(dir))
    if (e.path().filename().string().front() == '.') out.push_back(e.path().lexically_relative(dir).string());
  return out;
}

int skipped_done(const std::string& output) {
  std::smatch m;
  return std::regex_search(output, m, std::regex(R"((\d+) skipped \(done\))")) ? std::stoi(m[1].str()) : 0;
}

// The manifest keys of the synthetic dataset's frames and their shares, computed as the run does.
std::vector<dm::FrameEntry> synth_frames(int n) {
  std::vector<dm::FrameEntry> frames(static_cast<size_t>(n));
  for (int i = 0; i < n; ++i) {
    char id[16];
    std::snprintf(id, sizeof id, "%06d", i);
    frames[static_cast<size_t>(i)].id = id;
    frames[static_cast<size_t>(i)].relative = fs::path("depth") / (std::string(id) + ".png");
  }
  return frames;
}
std::set<std::string> share_keys(int n, const dm::Shard& s) {
  std::set<std::string> keys;
  for (const auto& f : dm::shard_frames(synth_frames(n), s)) keys.insert(dm::manifest_key(f));
  return keys;
}

// Starts `[env] depthmask <args>` in the tests' clean environment (dmcli::start_background).
pid_t start_background(const std::string& args, const fs::path& log, const std::string& env = "") {
  return dmcli::start_background(args, log, kCleanEnv + env);
}

// The exit code of a finished process (128 + the signal when one killed it).
int wait_code(pid_t pid) {
  int status = 0;
  ::waitpid(pid, &status, 0);
  if (WIFEXITED(status)) return WEXITSTATUS(status);
  return WIFSIGNALED(status) ? 128 + WTERMSIG(status) : -1;
}

std::string read_text(const fs::path& p) {
  const auto b = dmtest::read_bytes(p);
  return {b.begin(), b.end()};
}

// Polls until `done()` or `seconds` pass; false on the timeout.
template <class F>
bool wait_for(F done, double seconds = 30) {
  const auto until = Clock::now() + std::chrono::duration<double>(seconds);
  while (Clock::now() < until) {
    if (done()) return true;
    std::this_thread::sleep_for(std::chrono::milliseconds(2));
  }
  return false;
}

class Shards : public ::testing::Test {
 protected:
  void make(int frames, const std::string& size) {
    frames_ = frames;
    const auto r = dmtest::run_depthmask("synth --output " + q(data()) + " --frames " + std::to_string(frames) +
                                         " --size " + size);
    ASSERT_EQ(r.exit_code, 0) << r.output;
  }
  fs::path data() const { return tmp_ / "data"; }
  fs::path out() const { return tmp_ / "out"; }
  std::string args(const std::string& extra, const fs::path& dir) const {
    return "run --config " + q(data() / "depthmask.yaml") + " --output " + q(dir) + kAllFormats + " " + extra;
  }
  dmtest::CmdResult run(const std::string& extra = "", const fs::path& dir = {}, const std::string& env = "") const {
    return dmtest::run_shell(kCleanEnv + env + dmtest::depthmask_cmd() + " " + args(extra, dir.empty() ? out() : dir));
  }
  // The outputs of one unsharded run, written once per test into `reference`.
  std::map<std::string, std::vector<uint8_t>> reference() {
    const auto r = run("", tmp_ / "reference");
    EXPECT_EQ(r.exit_code, 0) << r.output;
    return outputs(tmp_ / "reference");
  }
  std::set<std::string> all_keys() const { return share_keys(frames_, dm::Shard{0, 1}); }

  TempDir tmp_;
  int frames_ = 0;
};

// ---------------------------------------------------------------------------------------------------

TEST_F(Shards, FourShardsAtOnceTogetherEqualOneUnshardedRun) {
  make(40, "64x48");
  const auto want = reference();
  ASSERT_EQ(want.size(), 40u * 7u) << "six formats and the preview per frame";
  std::vector<pid_t> pids;
  for (int k = 0; k < 4; ++k)
    pids.push_back(start_background(args("--shard " + std::to_string(k) + "/4", out()),
                                    tmp_ / ("shard" + std::to_string(k) + ".log")));
  for (int k = 0; k < 4; ++k) {
    const fs::path log = tmp_ / ("shard" + std::to_string(k) + ".log");
    EXPECT_EQ(wait_code(pids[static_cast<size_t>(k)]), 0) << read_text(log);
    const std::string text = read_text(log);
    EXPECT_TRUE(contains(text, "10 frame(s): 10 ok, 0 failed, 0 skipped")) << text;
    EXPECT_TRUE(contains(text, "shard:   " + std::to_string(k) + "/4 (manifest depthmask-manifest.shard-" +
                                   std::to_string(k) + "-of-4.json)"))
        << text;
  }
  expect_same_outputs(want, outputs(out()));
  EXPECT_EQ(hidden_files(out()), std::vector<std::string>{});

  // One manifest per shard, each recording exactly its share; no unsharded manifest, no lock left.
  const auto m = manifests(out());
  ASSERT_EQ(m.size(), 4u);
  for (size_t k = 0; k < 4; ++k) {
    const std::string name = dm::manifest_name(dm::Shard{k, 4});
    ASSERT_TRUE(m.count(name)) << name;
    EXPECT_EQ(m.at(name), share_keys(40, dm::Shard{k, 4})) << name;
    EXPECT_EQ(dm::Manifest::read(out() / name).head.shard, (dm::Shard{k, 4}));
    EXPECT_FALSE(fs::exists(out() / (name + ".lock")));
  }
  EXPECT_EQ(recorded_anywhere(out()), all_keys());
  // A run record per shard beside its manifest: no shard overwrites another's.
  EXPECT_FALSE(fs::exists(out() / dm::kRunRecordName));
  for (size_t k = 0; k < 4; ++k)
    EXPECT_TRUE(fs::exists(out() / dm::run_record_name(dm::Shard{k, 4}))) << dm::run_record_name(dm::Shard{k, 4});
  // The QA report reads every shard's manifest and record: the whole dataset, each frame once.
  const auto report = dmtest::run_depthmask("report " + dmtest::q(out()));
  ASSERT_EQ(report.exit_code, 0) << report.output;
  const std::string page = read_text(out() / dm::kReportName);
  EXPECT_TRUE(contains(page,
                       "4 manifests (depthmask-manifest.shard-0-of-4.json ... "
                       "depthmask-manifest.shard-3-of-4.json), version 2: 40 frame(s) done, 0 failed"))
      << page.substr(0, 4000);
  EXPECT_TRUE(contains(page, "<tr><th>frames listed</th><td>40</td></tr>")) << page.substr(0, 4000);
  EXPECT_TRUE(contains(page, "<tr><th>ok</th><td>40</td></tr>")) << page.substr(0, 4000);
  EXPECT_TRUE(contains(page, "4 shard(s)&#39; (depthmask-run.shard-K-of-N.json), counts summed"))
      << page.substr(0, 4000);
  // The records are the unsharded run's, output by output (same sizes and CRC-32s).
  const dm::Manifest ref = dm::Manifest::read(tmp_ / "reference" / dm::kManifestName);
  for (size_t k = 0; k < 4; ++k)
    for (const auto& [key, rec] : dm::Manifest::read(out() / dm::manifest_name(dm::Shard{k, 4})).frames) {
      ASSERT_EQ(rec.files.size(), ref.frames.at(key).files.size()) << key;
      for (size_t i = 0; i < rec.files.size(); ++i) {
        EXPECT_EQ(rec.files[i].name, ref.frames.at(key).files[i].name);
        EXPECT_EQ(rec.files[i].crc32, ref.frames.at(key).files[i].crc32) << key;
      }
    }
}

TEST_F(Shards, ASecondProcessOfTheSameShardIsRefusedWithExitFive) {
  make(8, "32x24");
  fs::create_directories(out());
  {
    // The lock held here, deterministically, as a running shard holds it.
    const dm::ShardLock held(out(), dm::Shard{1, 4});
    const auto busy = run("--shard 1/4");
    EXPECT_EQ(busy.exit_code, 5) << busy.output;
    EXPECT_TRUE(contains(busy.output, "shard busy")) << busy.output;
    EXPECT_TRUE(contains(busy.output, out().string())) << "names the folder: " << busy.output;
    EXPECT_TRUE(contains(busy.output, "shard 1/4")) << busy.output;
    EXPECT_TRUE(contains(busy.output, "host " + dm::host_name() + ", pid " + std::to_string(::getpid())))
        << "names the holder: " << busy.output;
    EXPECT_FALSE(fs::exists(out() / dm::manifest_name(dm::Shard{1, 4}))) << "the refused run wrote nothing";
    EXPECT_EQ(outputs(out()).size(), 0u);
    // Another shard, another N and the unsharded run are not held up.
    const auto other = run("--shard 2/4");
    EXPECT_EQ(other.exit_code, 0) << other.output;
    const auto other_n = run("--shard 1/3");
    EXPECT_EQ(other_n.exit_code, 0) << other_n.output;
  }
  const auto after = run("--shard 1/4");
  EXPECT_EQ(after.exit_code, 0) << after.output;
}

TEST_F(Shards, TwoProcessesOfOneShardAtOnceExactlyOneIsRefused) {
  make(150, "160x120");
  // One slow process (one thread, every format): it holds its lock for seconds.
  const pid_t first = start_background(args("--shard 0/1 --set run.threads=1", out()), tmp_ / "first.log");
  ASSERT_TRUE(wait_for([&] { return fs::exists(out() / "depthmask-manifest.shard-0-of-1.json.lock"); }))
      << read_text(tmp_ / "first.log");
  const auto second = run("--shard 0/1");
  int status = 0;
  const bool first_still_running = ::waitpid(first, &status, WNOHANG) == 0;
  const int first_code = first_still_running ? wait_code(first) : (WIFEXITED(status) ? WEXITSTATUS(status) : -1);
  if (!first_still_running) GTEST_SKIP() << "the first run ended before the second started; nothing to tell";
  // Whichever took the lock first runs; the other is refused at once.
  EXPECT_EQ(std::multiset<int>({first_code, second.exit_code}), std::multiset<int>({0, 5}))
      << read_text(tmp_ / "first.log") << "\n---\n"
      << second.output;
  EXPECT_EQ(recorded_anywhere(out()), all_keys());
}

TEST_F(Shards, UnshardedAndShardedRunsAtOnceInOneFolderLoseNoRecords) {
  make(120, "64x48");
  const auto want = reference();
  const std::vector<std::string> runs{"", "--shard 0/2", "--shard 1/2", "--shard 2/3"};
  std::vector<pid_t> pids;
  for (size_t i = 0; i < runs.size(); ++i)
    pids.push_back(start_background(args(runs[i], out()), tmp_ / ("run" + std::to_string(i) + ".log")));
  for (size_t i = 0; i < runs.size(); ++i)
    EXPECT_EQ(wait_code(pids[i]), 0) << read_text(tmp_ / ("run" + std::to_string(i) + ".log"));
  expect_same_outputs(want, outputs(out()));
  // Each run's manifest holds its whole share: what it processed and what it found done.
  const auto m = manifests(out());
  ASSERT_EQ(m.size(), 4u);
  EXPECT_EQ(m.at(dm::kManifestName), all_keys());
  EXPECT_EQ(m.at(dm::manifest_name(dm::Shard{0, 2})), share_keys(120, dm::Shard{0, 2}));
  EXPECT_EQ(m.at(dm::manifest_name(dm::Shard{1, 2})), share_keys(120, dm::Shard{1, 2}));
  EXPECT_EQ(m.at(dm::manifest_name(dm::Shard{2, 3})), share_keys(120, dm::Shard{2, 3}));
  const auto again = run();
  EXPECT_EQ(again.exit_code, 0) << again.output;
  EXPECT_EQ(skipped_done(again.output), 120) << again.output;
}

TEST_F(Shards, ARerunWithAnotherShardCountSkipsTheFramesDone) {
  make(30, "32x24");
  const auto want = reference();
  const auto first = run("--shard 0/2");
  ASSERT_EQ(first.exit_code, 0) << first.output;
  const std::set<std::string> done = share_keys(30, dm::Shard{0, 2});
  // Shard 1 of 3 finds the frames of its share that shard 0 of 2 did.
  const std::set<std::string> mine = share_keys(30, dm::Shard{1, 3});
  int overlap = 0;
  for (const auto& k : mine) overlap += static_cast<int>(done.count(k));
  ASSERT_GT(overlap, 0);
  const auto r = run("--shard 1/3");
  ASSERT_EQ(r.exit_code, 0) << r.output;
  EXPECT_EQ(skipped_done(r.output), overlap) << r.output;
  EXPECT_EQ(dmcli::summary_counts(r.output).ok, static_cast<int>(mine.size()) - overlap) << r.output;
  EXPECT_TRUE(contains(r.output, "recorded by another run's manifest")) << r.output;
  // The unsharded run skips every frame either did; the earlier manifests are left as they were.
  const auto before = read_text(out() / dm::manifest_name(dm::Shard{0, 2}));
  std::set<std::string> either = done;
  either.insert(mine.begin(), mine.end());
  const auto all = run();
  ASSERT_EQ(all.exit_code, 0) << all.output;
  EXPECT_EQ(skipped_done(all.output), static_cast<int>(either.size())) << all.output;
  EXPECT_EQ(dmcli::summary_counts(all.output).ok, 30 - static_cast<int>(either.size()));
  EXPECT_EQ(read_text(out() / dm::manifest_name(dm::Shard{0, 2})), before) << "another run's manifest is not rewritten";
  expect_same_outputs(want, outputs(out()));
  // And four shards now have nothing left to do.
  for (int k = 0; k < 4; ++k) {
    const auto s = run("--shard " + std::to_string(k) + "/4");
    EXPECT_EQ(s.exit_code, 0) << s.output;
    EXPECT_EQ(dmcli::summary_counts(s.output).ok, 0) << s.output;
  }
}

TEST_F(Shards, AnUnreadableManifestOfAnotherRunIsAWarningAndIgnored) {
  make(6, "32x24");
  fs::create_directories(out());
  dmtest::write_text(out() / "depthmask-manifest.shard-0-of-2.json", "{ not json");
  const auto r = run("--shard 1/2");
  EXPECT_EQ(r.exit_code, 0) << r.output;
  EXPECT_TRUE(contains(r.output, "ignoring the resume manifest")) << r.output;
  EXPECT_TRUE(contains(r.output, "depthmask-manifest.shard-0-of-2.json")) << "names the file: " << r.output;
  EXPECT_EQ(read_text(out() / "depthmask-manifest.shard-0-of-2.json"), "{ not json") << "and leaves it alone";
}

// ---------------------------------------------------------------------------------------------------
// SIGKILL at random moments, four shards at once

TEST_F(Shards, ChaosFourShardsKilledAtRandomThenRerunEqualOneRun) {
  constexpr int kFrames = 200;
  make(kFrames, "96x72");
  const auto want = reference();
  const unsigned seed = std::random_device{}();
  SCOPED_TRACE("random seed " + std::to_string(seed));
  std::mt19937 rng(seed);
  std::uniform_int_distribution<int> kill_after_ms(0, 700);
  std::bernoulli_distribution kill_it(0.6);
  // Rounds: every shard not yet finished starts at once; in the first rounds some are killed at a
  // random moment, later rounds run them out. A shard is finished when a run of it exits 0.
  std::set<int> unfinished{0, 1, 2, 3};
  int kills = 0, rounds = 0;
  for (int round = 0; !unfinished.empty() && round < 12; ++round, ++rounds) {
    std::map<int, pid_t> running;
    for (int k : unfinished)
      running[k] = start_background(args("--shard " + std::to_string(k) + "/4 --set run.threads=1", out()),
                                    tmp_ / ("chaos" + std::to_string(k) + ".log"));
    const bool chaos = round < 4;
    std::map<int, int> kill_at;  // shard -> ms after the start
    for (const auto& [k, pid] : running)
      if (chaos && kill_it(rng)) kill_at[k] = kill_after_ms(rng);
    if (round == 0 && kill_at.empty()) kill_at[static_cast<int>(rng() % 4)] = kill_after_ms(rng);  // one at least
    std::map<int, int> codes;  // shard -> exit code, as each is reaped
    const auto t0 = Clock::now();
    for (const auto& [k, at] : kill_at) {
      std::this_thread::sleep_until(t0 + std::chrono::milliseconds(at));
      int status = 0;
      if (::waitpid(running[k], &status, WNOHANG) == running[k]) {
        codes[k] = WIFEXITED(status) ? WEXITSTATUS(status) : -1;  // it ended before its kill
        continue;
      }
      ::kill(-running[k], SIGKILL);
      ++kills;
    }
    for (const auto& [k, pid] : running)
      if (!codes.count(k)) codes[k] = wait_code(pid);
    for (const auto& [k, code] : codes) {
      if (code == 0) {
        unfinished.erase(k);
        continue;
      }
      EXPECT_TRUE(kill_at.count(k) && code == 128 + SIGKILL)
          << "shard " << k << " exited " << code << ": " << read_text(tmp_ / ("chaos" + std::to_string(k) + ".log"));
    }
  }
  std::printf("chaos: %d kill(s) over %d round(s)\n", kills, rounds);
  ASSERT_TRUE(unfinished.empty()) << "shards still unfinished after 12 rounds";
  expect_same_outputs(want, outputs(out()));
  EXPECT_EQ(recorded_anywhere(out()), all_keys()) << "every frame recorded in some manifest";
  EXPECT_EQ(hidden_files(out()), std::vector<std::string>{}) << "temporary files left behind";
  // A last unsharded run finds everything done.
  const auto fin = run();
  EXPECT_EQ(fin.exit_code, 0) << fin.output;
  EXPECT_EQ(skipped_done(fin.output), kFrames) << fin.output;
}

// ---------------------------------------------------------------------------------------------------
// SIGTERM, the job engines' variables, CUDA_VISIBLE_DEVICES

TEST_F(Shards, SigtermMidRunExits143WithTheFinishedFramesRecorded) {
  make(150, "160x120");
  const fs::path log = tmp_ / "term.log";
  const pid_t pid = start_background(args("--shard 0/1 --set run.threads=1", out()), log);
  // Some frames written (their sidecars are the last file of each), then SIGTERM.
  const bool started = wait_for([&] {
    std::error_code ec;
    return fs::exists(out() / "000003.json", ec);
  });
  ASSERT_TRUE(started) << read_text(log);
  ::kill(pid, SIGTERM);
  const int code = wait_code(pid);
  const std::string text = read_text(log);
  if (code == 0) GTEST_SKIP() << "the run ended before SIGTERM reached it: " << text;
  EXPECT_EQ(code, 143) << text;
  EXPECT_TRUE(contains(text, "interrupted")) << text;
  const auto c = dmcli::summary_counts(text);
  EXPECT_GT(c.ok, 0) << text;
  EXPECT_LT(c.ok, 150) << text;
  const auto m = manifests(out());
  ASSERT_TRUE(m.count("depthmask-manifest.shard-0-of-1.json"));
  EXPECT_EQ(static_cast<int>(m.at("depthmask-manifest.shard-0-of-1.json").size()), c.ok)
      << "the manifest records every frame the run finished";
  const auto again = run("--shard 0/1");
  EXPECT_EQ(again.exit_code, 0) << again.output;
  EXPECT_EQ(skipped_done(again.output), c.ok) << again.output;
}

TEST_F(Shards, AutoTakesTheShardFromTheJobEnginesVariables) {
  make(8, "32x24");
  const auto slurm = run("--shard auto", {},
                         "SLURM_ARRAY_TASK_ID=12 SLURM_ARRAY_TASK_MIN=10 SLURM_ARRAY_TASK_MAX=13 "
                         "SLURM_ARRAY_TASK_STEP=1 SLURM_ARRAY_TASK_COUNT=4 ");
  EXPECT_EQ(slurm.exit_code, 0) << slurm.output;
  EXPECT_TRUE(contains(slurm.output, "run.shard auto: shard 2/4 from Slurm's SLURM_ARRAY_TASK_ID=12")) << slurm.output;
  EXPECT_TRUE(fs::exists(out() / "depthmask-manifest.shard-2-of-4.json"));
  const auto kube = run("--shard auto --shard-count 4", {}, "JOB_COMPLETION_INDEX=3 ");
  EXPECT_EQ(kube.exit_code, 0) << kube.output;
  EXPECT_TRUE(contains(kube.output, "shard 3/4 from Kubernetes' JOB_COMPLETION_INDEX=3")) << kube.output;
  const auto kube_env = run("--shard auto", {}, "JOB_COMPLETION_INDEX=1 DEPTHMASK_SHARD_COUNT=4 ");
  EXPECT_EQ(kube_env.exit_code, 0) << kube_env.output;
  EXPECT_TRUE(fs::exists(out() / "depthmask-manifest.shard-1-of-4.json"));

  const auto sparse = run("--shard auto", {},
                          "SLURM_ARRAY_TASK_ID=5 SLURM_ARRAY_TASK_MIN=1 SLURM_ARRAY_TASK_MAX=9 "
                          "SLURM_ARRAY_TASK_COUNT=3 ");
  EXPECT_EQ(sparse.exit_code, 2) << sparse.output;
  EXPECT_TRUE(contains(sparse.output, "not evenly spaced")) << sparse.output;
  const auto no_count = run("--shard auto", {}, "JOB_COMPLETION_INDEX=1 ");
  EXPECT_EQ(no_count.exit_code, 2) << no_count.output;
  EXPECT_TRUE(contains(no_count.output, "DEPTHMASK_SHARD_COUNT")) << no_count.output;
  const auto none = run("--shard auto");
  EXPECT_EQ(none.exit_code, 2) << none.output;
  EXPECT_TRUE(contains(none.output, "SLURM_ARRAY_TASK_ID")) << none.output;
  const auto bad = run("--shard 4/4");
  EXPECT_EQ(bad.exit_code, 2) << bad.output;
  EXPECT_TRUE(contains(bad.output, "run.shard")) << bad.output;

  // Without auto: every frame, and a note.
  const auto plain = run("", tmp_ / "plain", "SLURM_ARRAY_TASK_ID=3 ");
  EXPECT_EQ(plain.exit_code, 0) << plain.output;
  EXPECT_EQ(dmcli::summary_counts(plain.output).total, 8) << plain.output;
  EXPECT_TRUE(contains(plain.output, "SLURM_ARRAY_TASK_ID is set, but this run is not sharded")) << plain.output;
  EXPECT_TRUE(contains(plain.output, "--shard auto")) << plain.output;
}

TEST_F(Shards, CudaVisibleDevicesEmptyRunsOnTheCpuAndSaysSo) {
  make(4, "32x24");
  const auto want = reference();
  const auto r = run("--shard 0/1", {}, "CUDA_VISIBLE_DEVICES= ");
  ASSERT_EQ(r.exit_code, 0) << r.output;
  EXPECT_TRUE(contains(r.output, "CUDA_VISIBLE_DEVICES=\"\"")) << "the run names the variable: " << r.output;
  EXPECT_TRUE(contains(r.output, "backend: cpu")) << r.output;
  // A CUDA build's auto says the variable hid every device; a build without CUDA says it has none (the
  // binary under test may be either: DEPTHMASK_BIN).
  EXPECT_TRUE(contains(r.output, "CUDA_VISIBLE_DEVICES=\"\" hides every CUDA device") ||
              contains(r.output, "this build has no CUDA"))
      << r.output;
  // The .json sidecars name the backend: a CUDA build's reference ran on the GPU, this run on the CPU.
  auto frames_only = [](std::map<std::string, std::vector<uint8_t>> m) {
    for (auto it = m.begin(); it != m.end();)
      it = it->first.size() > 5 && it->first.compare(it->first.size() - 5, 5, ".json") == 0 ? m.erase(it)
                                                                                            : std::next(it);
    return m;
  };
  expect_same_outputs(frames_only(want), frames_only(outputs(out())));
}

}  // namespace
