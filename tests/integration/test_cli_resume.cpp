// End-to-end tests of resume (issue 3, "Batch robustness"): the manifest in the output folder lets a
// re-run skip finished frames, "skipped (done)" in the summary; a changed setting, a changed input, a
// deleted or damaged output, --force or a corrupt manifest redo what they must; and SIGKILL at random
// moments followed by re-runs gives byte for byte the outputs of an uninterrupted run, with no
// temporary file left behind.
#include <gtest/gtest.h>

#include <signal.h>
#include <sys/stat.h>
#include <sys/types.h>
#include <sys/wait.h>
#include <unistd.h>

#include <opencv2/core.hpp>
#include <opencv2/imgcodecs.hpp>

#include <chrono>
#include <cstdio>
#include <map>
#include <random>
#include <regex>
#include <string>
#include <thread>
#include <vector>

#include "cli_helpers.h"
#include "test_support.h"

namespace {

namespace fs = std::filesystem;
using dmcli::contains;
using dmtest::q;
using dmtest::read_bytes;
using dmtest::run_depthmask;
using dmtest::TempDir;

const std::string kManifest = "depthmask-manifest.json";
// Every output format at once (the synthetic dataset's config adds the preview and the intrinsics).
const std::string kAllFormats = " --set 'output.format=[tiff,npy,exr,png16,ply,json]'";

struct FileState {
  std::vector<uint8_t> bytes;
  ino_t inode = 0;  // a rewrite (temporary file + rename) gives a new inode, even with the same bytes
};

// Every regular file under `dir`, by path relative to it, but the run record (depthmask-run.json:
// what the last run did, rewritten by every run with its date and times).
std::map<std::string, FileState> snapshot(const fs::path& dir) {
  std::map<std::string, FileState> out;
  std::error_code ec;
  if (!fs::is_directory(dir, ec)) return out;
  for (const auto& e : fs::recursive_directory_iterator(dir)) {
    if (!e.is_regular_file() || e.path().filename() == "depthmask-run.json") continue;
    struct stat st {};
    ::stat(e.path().c_str(), &st);
    out[e.path().lexically_relative(dir).generic_string()] = {read_bytes(e.path()), st.st_ino};
  }
  return out;
}

// Names in the snapshot that look like temporary files (a leading dot, in any folder).
std::vector<std::string> hidden_files(const std::map<std::string, FileState>& s) {
  std::vector<std::string> out;
  for (const auto& [name, st] : s)
    if (fs::path(name).filename().string().front() == '.') out.push_back(name);
  return out;
}

int skipped_done(const std::string& output) {
  std::smatch m;
  return std::regex_search(output, m, std::regex(R"((\d+) skipped \(done\))")) ? std::stoi(m[1].str()) : 0;
}

// A synthetic dataset of `frames` frames and its output folder, run through its own config.
class Resume : public ::testing::Test {
 protected:
  void make(int frames, const std::string& size) {
    const auto r =
        run_depthmask("synth --output " + q(data()) + " --frames " + std::to_string(frames) + " --size " + size);
    ASSERT_EQ(r.exit_code, 0) << r.output;
  }
  fs::path data() const { return tmp_ / "data"; }
  fs::path out() const { return tmp_ / "out"; }
  dmtest::CmdResult run(const std::string& extra = "", const fs::path& dir = {}) const {
    return run_depthmask("run --config " + q(data() / "depthmask.yaml") + " --output " + q(dir.empty() ? out() : dir) +
                         kAllFormats + " " + extra);
  }
  // Runs and checks the summary: `ok` frames processed, `done` skipped as finished, none failed.
  dmtest::CmdResult expect_run(int ok, int done, const std::string& extra = "") const {
    const auto r = run(extra);
    EXPECT_EQ(r.exit_code, 0) << r.output;
    const auto c = dmcli::summary_counts(r.output);
    EXPECT_EQ(c.ok, ok) << r.output;
    EXPECT_EQ(c.failed, 0) << r.output;
    EXPECT_EQ(c.skipped, 0) << r.output;
    EXPECT_EQ(skipped_done(r.output), done) << r.output;
    return r;
  }

  TempDir tmp_;
};

// Which frame ids have a file whose inode changed (rewritten) between two snapshots, the manifest aside.
std::set<std::string> rewritten_frames(const std::map<std::string, FileState>& a,
                                       const std::map<std::string, FileState>& b) {
  std::set<std::string> ids;
  for (const auto& [name, st] : b) {
    if (name == kManifest) continue;
    const auto it = a.find(name);
    if (it == a.end() || it->second.inode != st.inode) ids.insert(name.substr(0, name.find('.')));
  }
  return ids;
}

// Same names, same bytes.
void expect_same_files(const std::map<std::string, FileState>& want, const std::map<std::string, FileState>& got) {
  std::vector<std::string> wn, gn;
  for (const auto& kv : want) wn.push_back(kv.first);
  for (const auto& kv : got) gn.push_back(kv.first);
  ASSERT_EQ(gn, wn);
  size_t differ = 0;
  for (const auto& [name, st] : want) {
    if (got.at(name).bytes == st.bytes) continue;
    if (++differ <= 5) ADD_FAILURE() << name << " differs";
  }
  EXPECT_EQ(differ, 0u) << "files that differ";
}

// ---------------------------------------------------------------------------------------------------

TEST_F(Resume, SecondRunSkipsEveryFrameAndTouchesNoOutput) {
  make(6, "64x48");
  const auto first = expect_run(6, 0);
  EXPECT_FALSE(contains(first.output, "skipped (done)")) << "a fresh run says nothing about resuming";
  const auto before = snapshot(out());
  ASSERT_EQ(before.size(), 6u * 7u + 1u) << "six formats and the preview per frame, and the manifest";
  ASSERT_TRUE(before.count(kManifest));

  const auto second = expect_run(0, 6);
  EXPECT_TRUE(contains(second.output, "6 frame(s): 0 ok, 0 failed, 0 skipped, 6 skipped (done)")) << second.output;
  EXPECT_TRUE(contains(second.output, "resumed: 6 frame(s) already done")) << second.output;
  EXPECT_TRUE(contains(second.output, "--force")) << "the summary says how to redo them";
  const auto after = snapshot(out());
  expect_same_files(before, after);
  EXPECT_EQ(rewritten_frames(before, after), std::set<std::string>{}) << "no output was rewritten";

  // Settings that cannot change an output byte keep finished frames: fsync, on_error, the backend.
  expect_run(0, 6, "--set output.fsync=true --on-error stop --backend cpu");
}

TEST_F(Resume, ChangedSettingRedoesEveryFrame) {
  make(5, "64x48");
  expect_run(5, 0);
  const auto before = snapshot(out());
  expect_run(5, 0, "--set depth.max=1.3");
  const auto narrower = snapshot(out());
  EXPECT_EQ(rewritten_frames(before, narrower).size(), 5u);
  EXPECT_NE(narrower.at("000001.tiff").bytes, before.at("000001.tiff").bytes) << "depth.max changes the output";
  expect_run(0, 5, "--set depth.max=1.3");
  // Back to the first settings: the manifest holds only the last run's, so everything is redone, and
  // the outputs are the first run's again, byte for byte.
  expect_run(5, 0);
  expect_same_files(before, snapshot(out()));
  // So is the invalid value.
  expect_run(5, 0, "--set output.invalid=-1");
}

TEST_F(Resume, ForceRedoesEveryFrameWithTheSameBytes) {
  make(4, "64x48");
  expect_run(4, 0);
  const auto before = snapshot(out());
  const auto r = expect_run(4, 0, "--force");
  EXPECT_TRUE(contains(r.output, "run.force")) << r.output;
  const auto after = snapshot(out());
  expect_same_files(before, after);
  EXPECT_EQ(rewritten_frames(before, after).size(), 4u) << "--force rewrote every frame";
  expect_run(4, 0, "--set run.force=true");
  expect_run(0, 4);
}

TEST_F(Resume, DeletedOrDamagedOutputRedoesOnlyThatFrame) {
  make(6, "64x48");
  expect_run(6, 0);
  const auto before = snapshot(out());

  fs::remove(out() / "000002.npy");
  expect_run(1, 5);
  auto after = snapshot(out());
  expect_same_files(before, after);
  EXPECT_EQ(rewritten_frames(before, after), std::set<std::string>{"000002"});

  // Same size, one byte flipped: the CRC-32 tells.
  auto tiff = read_bytes(out() / "000004.tiff");
  tiff[tiff.size() / 2] ^= 0x01;
  dmtest::write_bytes(out() / "000004.tiff", tiff);
  // Truncated.
  auto ply = read_bytes(out() / "000001.ply");
  ply.resize(ply.size() - 3);
  dmtest::write_bytes(out() / "000001.ply", ply);
  const auto mid = snapshot(out());
  expect_run(2, 4);
  after = snapshot(out());
  expect_same_files(before, after);
  EXPECT_EQ(rewritten_frames(mid, after), (std::set<std::string>{"000001", "000004"}));
}

TEST_F(Resume, ChangedInputRedoesThatFrame) {
  make(4, "64x48");
  expect_run(4, 0);
  const auto before = snapshot(out());
  // A re-computed mask for frame 3: nothing kept any more.
  const fs::path mask = data() / "mask" / "000003.png";
  const cv::Mat m = cv::imread(mask.string(), cv::IMREAD_UNCHANGED);
  ASSERT_TRUE(cv::imwrite(mask.string(), cv::Mat::zeros(m.size(), m.type())));
  expect_run(1, 3);
  const auto after = snapshot(out());
  EXPECT_EQ(rewritten_frames(before, after), std::set<std::string>{"000003"});
  EXPECT_NE(after.at("000003.tiff").bytes, before.at("000003.tiff").bytes);
}

TEST_F(Resume, FailedFrameIsNotRecordedAndIsRetried) {
  make(5, "64x48");
  const fs::path mask = data() / "mask" / "000002.png";
  const auto saved = read_bytes(mask);
  fs::remove(mask);
  const auto r1 = run();
  EXPECT_EQ(r1.exit_code, 1) << r1.output;
  EXPECT_TRUE(contains(r1.output, "5 frame(s): 4 ok, 1 failed, 0 skipped")) << r1.output;
  const auto r2 = run();
  EXPECT_EQ(r2.exit_code, 1) << r2.output;
  EXPECT_TRUE(contains(r2.output, "5 frame(s): 0 ok, 1 failed, 0 skipped, 4 skipped (done)")) << r2.output;
  dmtest::write_bytes(mask, saved);
  expect_run(1, 4);
  expect_run(0, 5);
}

TEST_F(Resume, CorruptManifestWarnsAndRedoesEverything) {
  make(4, "64x48");
  expect_run(4, 0);
  const auto before = snapshot(out());
  const std::string good(before.at(kManifest).bytes.begin(), before.at(kManifest).bytes.end());
  const std::vector<std::string> corrupt{
      "",                                                                         // empty
      "garbage \x01\x02\xff",                                                     // not JSON
      good.substr(0, good.size() / 2),                                            // truncated
      "{\"frames\": 12}",                                                         // JSON, not a manifest
      std::regex_replace(good, std::regex("\"size\":\\d+"), "\"size\":\"big\""),  // wrong types
  };
  for (const auto& text : corrupt) {
    SCOPED_TRACE("manifest: " + text.substr(0, 60));
    dmtest::write_text(out() / kManifest, text);
    const auto r = expect_run(4, 0);
    EXPECT_TRUE(contains(r.output, "ignoring the resume manifest")) << r.output;
    EXPECT_TRUE(contains(r.output, (out() / kManifest).string())) << "the warning names the file";
    expect_same_files(before, snapshot(out()));
  }
  expect_run(0, 4);  // and the manifest is whole again
}

TEST_F(Resume, MirrorLayoutResumesToo) {
  make(3, "64x48");
  expect_run(3, 0, "--set output.layout=mirror");
  const auto before = snapshot(out());
  EXPECT_TRUE(before.count("depth/000001.tiff")) << "mirror: the depth file's folder and stem";
  EXPECT_TRUE(before.count("depth/000001.json"));
  EXPECT_TRUE(before.count(kManifest));
  expect_run(0, 3, "--set output.layout=mirror");
  fs::remove(out() / "depth" / "000000.exr");
  expect_run(1, 2, "--set output.layout=mirror");
  expect_same_files(before, snapshot(out()));
}

TEST_F(Resume, StaleTemporaryFilesOfAKilledRunAreRemoved) {
  make(2, "32x24");
  // A pid that no longer runs.
  const pid_t gone = ::fork();
  if (gone == 0) ::_exit(0);
  int status = 0;
  ::waitpid(gone, &status, 0);
  fs::create_directories(out());
  const std::string stale = ".000000.tiff.tmp-" + std::to_string(gone) + "-4";
  dmtest::write_text(out() / stale, "half a tiff");
  const auto r = expect_run(2, 0);
  EXPECT_TRUE(contains(r.output, "removed 1 temporary file(s)")) << r.output;
  EXPECT_FALSE(fs::exists(out() / stale));
}

// ---------------------------------------------------------------------------------------------------
// SIGKILL at random moments

using dmcli::start_background;

ino_t inode_of(const fs::path& p) {
  struct stat st {};
  return ::stat(p.c_str(), &st) == 0 ? st.st_ino : 0;
}

// Waits until `pid` exits (true) or `until` passes (false); `poll` runs every millisecond meanwhile
// and stops the wait early by returning true.
template <class Poll>
bool wait_exit(pid_t pid, int& status, std::chrono::steady_clock::time_point until, Poll poll) {
  while (std::chrono::steady_clock::now() < until) {
    if (::waitpid(pid, &status, WNOHANG) == pid) return true;
    if (poll()) return false;
    std::this_thread::sleep_for(std::chrono::milliseconds(1));
  }
  return false;
}

// Kills the run at the moment chosen; returns true when the kill interrupted it (false: it had ended).
bool kill_run(pid_t pid) {
  int status = 0;
  if (::waitpid(pid, &status, WNOHANG) == pid) return false;
  ::kill(-pid, SIGKILL);
  ::waitpid(pid, &status, 0);
  return WIFSIGNALED(status) && WTERMSIG(status) == SIGKILL;
}

TEST_F(Resume, SigkillAtRandomMomentsThenRerunEqualsAnUninterruptedRun) {
  constexpr int kFrames = 150;
  make(kFrames, "320x240");
  const auto ref = run("", tmp_ / "reference");
  ASSERT_EQ(ref.exit_code, 0) << ref.output;
  const auto want = snapshot(tmp_ / "reference");
  ASSERT_EQ(want.size(), static_cast<size_t>(kFrames) * 7u + 1u);

  const unsigned seed = std::random_device{}();
  SCOPED_TRACE("random seed " + std::to_string(seed) + " (kill moments)");
  std::mt19937 rng(seed);
  // The manifest is rewritten about once a second, so a kill within the first second of work finds no
  // new record (every frame is redone), a later one finds some (finished frames are skipped): rounds
  // 1 and 2 kill late enough to cover the second case.
  std::uniform_int_distribution<int> from_launch_ms(50, 500), early_ms(0, 300), late_ms(1000, 2500);
  const std::string args = "run --config " + q(data() / "depthmask.yaml") + kAllFormats;
  int interrupted = 0, resumed_frames = 0;
  for (int round = 0; round < 3; ++round) {
    SCOPED_TRACE("round " + std::to_string(round));
    const fs::path o = tmp_ / ("out" + std::to_string(round));
    // Kill 1: at a random moment after launch (start-up, listing, planning or frames).
    {
      const pid_t pid = start_background(args + " --output " + q(o), tmp_ / "kill1.log");
      ASSERT_GT(pid, 0);
      std::this_thread::sleep_for(std::chrono::milliseconds(from_launch_ms(rng)));
      interrupted += kill_run(pid);
    }
    // Kill 2: the re-run, at a random moment after it has planned (rewritten the manifest), that is
    // while it skips finished frames or writes new ones.
    {
      const ino_t old_manifest = inode_of(o / kManifest);
      const pid_t pid = start_background(args + " --output " + q(o), tmp_ / "kill2.log");
      ASSERT_GT(pid, 0);
      int status = 0;
      const auto until = std::chrono::steady_clock::now() + std::chrono::seconds(60);
      const bool ended = wait_exit(pid, status, until, [&] {
        const ino_t now = inode_of(o / kManifest);
        return now != 0 && now != old_manifest;
      });
      if (!ended) {
        std::this_thread::sleep_for(std::chrono::milliseconds(round == 0 ? early_ms(rng) : late_ms(rng)));
        interrupted += kill_run(pid);
      }
    }
    // Then to completion.
    const auto fin = run_depthmask(args + " --output " + q(o));
    ASSERT_EQ(fin.exit_code, 0) << fin.output;
    const auto c = dmcli::summary_counts(fin.output);
    EXPECT_EQ(c.total, kFrames);
    EXPECT_EQ(c.failed, 0);
    EXPECT_EQ(c.ok + skipped_done(fin.output), kFrames) << fin.output;
    resumed_frames += skipped_done(fin.output);

    const auto got = snapshot(o);
    EXPECT_EQ(hidden_files(got), std::vector<std::string>{}) << "temporary files left behind";
    expect_same_files(want, got);  // every output and the manifest itself
  }
  std::printf("kills that interrupted a run: %d of 6; frames the final runs resumed: %d\n", interrupted,
              resumed_frames);
  EXPECT_GE(interrupted, 1) << "no kill landed while a run was working; the test proved nothing";
  EXPECT_GT(resumed_frames, 0) << "the final runs should have resumed finished frames, not redone all";
}

}  // namespace
