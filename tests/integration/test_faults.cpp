// Fault injection (issue 7, "Bad input, faults and load"): the output disk fills up, the output folder
// is removed or turns read-only mid-run, the manifest cannot be saved at the end, inputs are truncated
// or deleted after the listing, the memory budget is smaller than a frame, a GPU backend cannot start.
// In every case the process ends with the documented exit code (no crash; issue 14's taxonomy: 4 for
// a resource, 1 for input), the frames that fail say why and of which class, the others are written,
// every output the manifest records is intact (size, CRC-32 and bytes equal to a clean run's), no
// temporary file is left, and a re-run once the fault is gone completes the batch with a clean run's
// bytes. SIGKILL at random moments is test_cli_resume.cpp's SigkillAtRandomMoments... test.
//
// Mid-run faults act from the batch's observer (run_batch's RunObserver), at a fixed frame, with one
// frame in flight: deterministic, no sleeps. Real disk-full and read-only faults need a tmpfs mount
// (root or CAP_SYS_ADMIN; chmod does not stop root): without one those tests skip and say why.
#include <gtest/gtest.h>

#include <opencv2/core.hpp>
#include <opencv2/imgcodecs.hpp>
#include <opencv2/imgproc.hpp>

#include <functional>
#include <map>
#include <memory>
#include <string>
#include <vector>

#include "cli_helpers.h"
#include "depthmask/backend.h"
#include "depthmask/config.h"
#include "depthmask/encoders.h"
#include "depthmask/errors.h"
#include "depthmask/manifest.h"
#include "depthmask/pipeline.h"
#include "depthmask/platform.h"
#include "depthmask/report.h"
#include "depthmask/synth.h"
#include "test_support.h"

namespace {

namespace fs = std::filesystem;
namespace dm = depthmask;
using dmcli::contains;
using dmtest::q;
using dmtest::read_bytes;
using dmtest::TempDir;

using Files = std::map<std::string, std::vector<uint8_t>>;

// Every regular file under `dir` by relative path (the manifest included; not the run record, which
// holds the run's date and times).
Files snapshot(const fs::path& dir) {
  Files out;
  std::error_code ec;
  if (!fs::is_directory(dir, ec)) return out;
  for (const auto& e : fs::recursive_directory_iterator(dir))
    if (e.is_regular_file() && e.path().filename() != dm::kRunRecordName)
      out[e.path().lexically_relative(dir).generic_string()] = read_bytes(e.path());
  return out;
}

std::vector<std::string> hidden_files(const Files& files) {
  std::vector<std::string> out;
  for (const auto& kv : files)
    if (fs::path(kv.first).filename().string().front() == '.') out.push_back(kv.first);
  return out;
}

// Checks that every output the manifest in `dir` records is there with its recorded size and CRC-32
// and the bytes of the clean run `clean`; returns the recorded frame ids (none without a manifest).
std::set<std::string> expect_manifest_holds(const fs::path& dir, const Files& clean) {
  std::set<std::string> ids;
  const fs::path path = dir / dm::kManifestName;
  std::error_code ec;
  if (!fs::exists(path, ec)) return ids;
  const std::vector<uint8_t> text = read_bytes(path);
  const dm::Manifest m = dm::Manifest::parse(std::string(text.begin(), text.end()), path.string());
  for (const auto& [key, rec] : m.frames) {
    ids.insert(rec.id);
    for (const dm::OutputFile& f : rec.files) {
      SCOPED_TRACE("frame " + rec.id + ", output " + f.name);
      const fs::path p = dir / f.name;
      if (!fs::is_regular_file(p)) {
        ADD_FAILURE() << "recorded but missing";
        continue;
      }
      const std::vector<uint8_t> bytes = read_bytes(p);
      EXPECT_EQ(bytes.size(), f.size);
      EXPECT_EQ(dm::crc32_of(bytes.data(), bytes.size()), f.crc32);
      EXPECT_TRUE(clean.count(f.name) && bytes == clean.at(f.name)) << "differs from the clean run's bytes";
    }
  }
  return ids;
}

// Output files (not the manifest, nor the run's lock file: a read-only folder keeps the run from
// removing it) in `dir` must be byte-equal to the clean run's: a fault never leaves a torn or partial
// file under a final name.
void expect_outputs_intact(const fs::path& dir, const Files& clean) {
  for (const auto& [name, bytes] : snapshot(dir)) {
    if (name == dm::kManifestName || name == std::string(dm::kManifestName) + ".lock") continue;
    SCOPED_TRACE(name);
    ASSERT_TRUE(clean.count(name)) << "a file the clean run does not write";
    EXPECT_TRUE(bytes == clean.at(name)) << "differs from the clean run's bytes";
  }
}

// A tmpfs of `bytes` mounted on `dir` (created), unmounted when this goes.
class Tmpfs {
 public:
  Tmpfs(const fs::path& dir, size_t bytes) : dir_(dir) {
    fs::create_directories(dir);
    const auto r = dmtest::run_shell("mount -t tmpfs -o size=" + std::to_string(bytes) + " depthmask-test " + q(dir));
    if (r.exit_code == 0)
      mounted_ = true;
    else
      why_not_ = "cannot mount a tmpfs (needs root or CAP_SYS_ADMIN): " + r.output;
  }
  ~Tmpfs() {
    if (mounted_) (void)dmtest::run_shell("umount -l " + q(dir_));
  }
  Tmpfs(const Tmpfs&) = delete;
  Tmpfs& operator=(const Tmpfs&) = delete;
  bool mounted() const { return mounted_; }
  const std::string& why_not() const { return why_not_; }
  // mount -o remount,<options>: "ro", "rw", "size=..."
  bool remount(const std::string& options) const {
    const auto r = dmtest::run_shell("mount -o remount," + options + " " + q(dir_));
    EXPECT_EQ(r.exit_code, 0) << r.output;
    return r.exit_code == 0;
  }

 private:
  fs::path dir_;
  bool mounted_ = false;
  std::string why_not_;
};

// The observer the faults act from: at the start (after listing and planning) and after a frame.
struct Hooks : dm::RunObserver {
  std::function<void()> start;
  std::function<void(size_t done)> frame;
  void on_start(const dm::DatasetListing&) override {
    if (start) start();
  }
  void on_frame(const dm::FrameEntry&, size_t done, size_t, const dm::FrameFailure*) override {
    if (frame) frame(done);
  }
};

std::unique_ptr<dm::MemoryBackend> cpu_backend() {
  return dm::make_backend(dm::BackendChoice{dm::BackendKind::Cpu, 0, "test", false}, dm::PlatformInfo{});
}

// Every output format, one frame in flight (so an observer acts between two frames, none being written).
const std::vector<std::string> kSettings = {"output.format=[tiff,npy,exr,png16,ply,json]", "output.preview=true",
                                            "backend.kind=cpu", "run.frames_in_flight=1"};

class Faults : public ::testing::Test {
 protected:
  void SetUp() override {
    dmcli::copy_sample(data());
    clean_ = run(tmp_ / "clean").second;
    ASSERT_FALSE(clean_.empty());
  }
  fs::path data() const { return tmp_ / "data"; }
  dm::Config config(const fs::path& out) const {
    std::vector<dm::Override> ov;
    for (const auto& s : kSettings) ov.push_back(dm::parse_override(s));
    ov.push_back({"output.dir", out.string(), "test", true});
    return dm::load_config(data() / "depthmask.yaml", ov);
  }
  // Runs the batch in this process; returns the summary and the files written.
  std::pair<dm::RunSummary, Files> run(const fs::path& out, dm::RunObserver* observer = nullptr) const {
    auto backend = cpu_backend();
    const dm::RunSummary s =
        dm::run_batch(config(out), *backend, dm::BackendChoice{dm::BackendKind::Cpu, 0, "test", false}, observer);
    return {s, snapshot(out)};
  }
  // After the fault is gone: a re-run resumes and ends with the clean run's files, byte for byte.
  void expect_rerun_completes(const fs::path& out, size_t recorded) const {
    const auto [s, files] = run(out);
    EXPECT_EQ(s.failed, 0u);
    EXPECT_EQ(s.skipped_done, recorded) << "frames the manifest recorded are not redone";
    EXPECT_EQ(s.ok + s.skipped_done, s.total);
    EXPECT_TRUE(s.manifest_error.empty()) << s.manifest_error;
    EXPECT_TRUE(files == clean_) << "the completed output folder differs from a clean run's";
  }

  TempDir tmp_;
  Files clean_;
};

TEST_F(Faults, OutputFolderRemovedMidRunFailsTheRestAndKeepsGoing) {
  const fs::path out = tmp_ / "out";
  Hooks hooks;
  hooks.frame = [&](size_t done) {
    if (done == 3) fs::remove_all(out);
  };
  const auto [s, files] = run(out, &hooks);  // no throw: the batch ends normally
  EXPECT_EQ(s.total, 8u);
  EXPECT_EQ(s.ok, 3u);
  EXPECT_EQ(s.failed, 5u);
  for (const auto& f : s.failures) {
    EXPECT_TRUE(contains(f.message, "No such file or directory")) << f.message;
    EXPECT_EQ(f.failure, dm::Failure::Resource) << f.message;
  }
  EXPECT_FALSE(s.manifest_error.empty()) << "the manifest cannot be saved into a removed folder, and the run says so";
  EXPECT_EQ(dm::exit_code(s), 4) << "the output folder gone: a resource";
  EXPECT_TRUE(files.empty()) << "nothing recreated the removed folder";
  expect_rerun_completes(out, 0);
}

TEST_F(Faults, OutputFolderReadOnlyMidRunFailsTheRestAndKeepsWhatWasWritten) {
  Tmpfs fs_(tmp_ / "ro", 64u << 20);
  if (!fs_.mounted()) GTEST_SKIP() << fs_.why_not();
  const fs::path out = tmp_ / "ro" / "out";
  Hooks hooks;
  hooks.frame = [&](size_t done) {
    if (done == 3) fs_.remount("ro");
  };
  const auto [s, files] = run(out, &hooks);
  EXPECT_EQ(s.ok, 3u);
  EXPECT_EQ(s.failed, 5u);
  for (const auto& f : s.failures) {
    EXPECT_TRUE(contains(f.message, "Read-only file system")) << f.message;
    EXPECT_EQ(f.failure, dm::Failure::Resource) << f.message;
  }
  EXPECT_EQ(dm::exit_code(s), 4);
  EXPECT_EQ(hidden_files(files), std::vector<std::string>{}) << "temporary files left behind";
  expect_outputs_intact(out, clean_);
  const auto recorded = expect_manifest_holds(out, clean_);
  // The first three frames' outputs are there (7 files each), whatever the manifest got to record. The
  // run's lock file stays too: a read-only folder let the run not remove it (no lock is held on it).
  EXPECT_EQ(files.size() - files.count(dm::kManifestName) - files.count(std::string(dm::kManifestName) + ".lock"),
            3u * 7u);
  ASSERT_TRUE(fs_.remount("rw"));
  expect_rerun_completes(out, recorded.size());
}

TEST_F(Faults, DiskFullFailsFramesNotTheRunAndLeavesNoTornFile) {
  size_t clean_bytes = 0;
  for (const auto& kv : clean_) clean_bytes += kv.second.size();
  // Room for about a third of the outputs.
  Tmpfs fs_(tmp_ / "small", clean_bytes / 3);
  if (!fs_.mounted()) GTEST_SKIP() << fs_.why_not();
  const fs::path out = tmp_ / "small" / "out";
  const auto [s, files] = run(out);
  EXPECT_EQ(s.ok + s.failed, s.total) << "every frame was attempted";
  EXPECT_GE(s.ok, 1u);
  EXPECT_GE(s.failed, 1u);
  for (const auto& f : s.failures) {
    EXPECT_TRUE(contains(f.message, "No space left on device")) << f.message;
    EXPECT_EQ(f.failure, dm::Failure::Resource) << f.message;
  }
  EXPECT_EQ(dm::exit_code(s), 4) << "disk full: a resource";
  EXPECT_EQ(hidden_files(files), std::vector<std::string>{}) << "temporary files left behind";
  expect_outputs_intact(out, clean_);
  const auto recorded = expect_manifest_holds(out, clean_);
  EXPECT_LE(recorded.size(), s.ok);
  ASSERT_TRUE(fs_.remount("size=" + std::to_string(clean_bytes * 2)));
  expect_rerun_completes(out, recorded.size());
}

TEST_F(Faults, DiskFullThroughTheCliExitsFourWithTheSummary) {
  size_t clean_bytes = 0;
  for (const auto& kv : clean_) clean_bytes += kv.second.size();
  Tmpfs fs_(tmp_ / "small", clean_bytes / 3);
  if (!fs_.mounted()) GTEST_SKIP() << fs_.why_not();
  std::string sets;
  for (const auto& s : kSettings) sets += " --set " + q(s);
  const auto r = dmtest::run_depthmask("run --config " + q(data() / "depthmask.yaml") + " --output " +
                                       q(tmp_ / "small" / "out") + sets);
  SCOPED_TRACE(r.output);
  EXPECT_EQ(r.exit_code, 4) << "frames failed for a full disk: exit code 4 (resource), not a crash";
  const auto c = dmcli::summary_counts(r.output);
  EXPECT_EQ(c.total, 8);
  EXPECT_EQ(c.ok + c.failed, 8);
  EXPECT_GE(c.failed, 1);
  EXPECT_TRUE(contains(r.output, "No space left on device"));
}

// Every frame is written but the manifest cannot be saved at the end (its name is taken by a folder
// before the last frame): no frame failed, yet the run failed for a resource — exit code 4.
TEST_F(Faults, ManifestNotSavedAtTheEndIsAResourceFailure) {
  const fs::path out = tmp_ / "out";
  Hooks hooks;
  hooks.frame = [&](size_t done) {
    if (done != 7) return;
    fs::remove(out / dm::kManifestName);
    fs::create_directories(out / dm::kManifestName / "blocker");
  };
  const auto [s, files] = run(out, &hooks);
  EXPECT_EQ(s.ok, 8u);
  EXPECT_EQ(s.failed, 0u);
  EXPECT_TRUE(contains(s.manifest_error, dm::kManifestName)) << s.manifest_error;
  EXPECT_EQ(s.failure(), dm::Failure::Resource);
  EXPECT_EQ(dm::exit_code(s), 4) << "the manifest not saved: a resource";
  EXPECT_EQ(hidden_files(files), std::vector<std::string>{}) << "temporary files left behind";
  fs::remove_all(out / dm::kManifestName);
  expect_rerun_completes(out, 0);
}

TEST_F(Faults, InputTruncatedOrDeletedAfterListingFailsOnlyThoseFrames) {
  const fs::path out = tmp_ / "out";
  Hooks hooks;
  hooks.start = [&] {
    fs::resize_file(data() / "depth" / "000002.png", 100);
    fs::remove(data() / "mask" / "000005.png");
  };
  const auto [s, files] = run(out, &hooks);
  EXPECT_EQ(s.ok, 6u);
  ASSERT_EQ(s.failed, 2u);
  EXPECT_TRUE(contains(s.failures[0].message, "000002.png")) << s.failures[0].message;
  EXPECT_TRUE(contains(s.failures[1].message, "000005.png")) << s.failures[1].message;
  for (const auto& f : s.failures) EXPECT_EQ(f.failure, dm::Failure::Input) << f.message;
  EXPECT_EQ(dm::exit_code(s), 1) << "frames failed for input only: exit code 1";
  EXPECT_TRUE(s.manifest_error.empty()) << s.manifest_error;
  EXPECT_EQ(hidden_files(files), std::vector<std::string>{});
  expect_outputs_intact(out, clean_);
  const auto recorded = expect_manifest_holds(out, clean_);
  EXPECT_EQ(recorded, (std::set<std::string>{"000000", "000001", "000003", "000004", "000006", "000007"}));
}

// backend.memory_limit_mb: frames whose buffers do not fit fail with a message naming the budget; the
// ones that fit are written, also after a failed one (its buffers went back); the summary and exit code
// say so, and a re-run without the limit does only the failed frames.
// Six frames, 0, 2, 4 at 320x240 and 1, 3, 5 at 640x480, and faults.yaml (tiff, cpu, one in flight).
// Within 1 MiB the small ones fit (depth 150 KiB + mask 75 KiB + output 300 KiB), the large ones
// (600 + 300 + 1200 KiB) do not.
void write_mixed_size_dataset(const fs::path& data) {
  dm::write_synthetic_dataset(data, 6, 640, 480);
  for (const char* id : {"000000", "000002", "000004"})
    for (const char* kind : {"depth", "mask"}) {
      const fs::path p = data / kind / (std::string(id) + ".png");
      cv::Mat m = cv::imread(p.string(), cv::IMREAD_UNCHANGED), half;
      cv::resize(m, half, cv::Size(320, 240), 0, 0, cv::INTER_NEAREST);
      ASSERT_TRUE(cv::imwrite(p.string(), half));
    }
  dmtest::write_text(data / "faults.yaml",
                     "input: {root: ., depth: \"depth/{id}.png\", mask: \"mask/{id}.png\"}\n"
                     "output: {format: [tiff], preview: false}\n"
                     "backend: {kind: cpu}\nrun: {frames_in_flight: 1}\n");
}

TEST(FaultsCli, MemoryLimitSmallerThanAFrameFailsThatFrameAndTheBatchGoesOn) {
  TempDir tmp;
  const fs::path data = tmp / "data";
  write_mixed_size_dataset(data);
  const std::string base = "run --config " + q(data / "faults.yaml") + " --output " + q(tmp / "out");
  const auto r = dmtest::run_depthmask(base + " --set backend.memory_limit_mb=1");
  SCOPED_TRACE(r.output);
  EXPECT_EQ(r.exit_code, 4) << "frames out of memory: exit code 4 (resource)";
  const auto c = dmcli::summary_counts(r.output);
  EXPECT_EQ(c.ok, 3);
  EXPECT_EQ(c.failed, 3);
  EXPECT_TRUE(contains(r.output, "frame buffers are capped at 1 MiB"));
  for (const char* id : {"000001", "000003", "000005"}) {
    std::smatch m;
    const std::regex line(
        std::string("failed: +frame ") + id +
        R"( \(#\d+\): backend 'cpu': out of memory: cannot allocate \d+ bytes for a frame buffer: \d+ of the 1048576 bytes of backend.memory_limit_mb \(1 MiB\))");
    EXPECT_TRUE(std::regex_search(r.output, m, line)) << "no clear failure line for frame " << id;
  }
  const auto written = dmcli::file_names(tmp / "out");
  EXPECT_EQ(written, (std::set<std::string>{"000000.tiff", "000002.tiff", "000004.tiff"}));
  // Without the limit: the three recorded frames are skipped, the other three done.
  const auto again = dmtest::run_depthmask(base);
  EXPECT_EQ(again.exit_code, 0) << again.output;
  EXPECT_TRUE(contains(again.output, "6 frame(s): 3 ok, 0 failed, 0 skipped, 3 skipped (done)")) << again.output;
}

// The same in the process: the frames that ran out of memory fail with class resource; the batch's
// exit code is 4.
TEST(FaultsCli, MemoryLimitFailuresAreOfClassResource) {
  TempDir tmp;
  write_mixed_size_dataset(tmp / "data");
  std::vector<dm::Override> ov{{"output.dir", (tmp / "out").string(), "test", true}};
  const dm::Config c = dm::load_config(tmp / "data" / "faults.yaml", ov);
  auto backend = cpu_backend();
  backend->set_memory_limit(size_t{1} << 20);
  const dm::RunSummary s = dm::run_batch(c, *backend, dm::BackendChoice{dm::BackendKind::Cpu, 0, "test", false});
  EXPECT_EQ(s.ok, 3u);
  ASSERT_EQ(s.failures.size(), 3u);
  for (const auto& f : s.failures) {
    EXPECT_EQ(f.failure, dm::Failure::Resource) << f.message;
    EXPECT_TRUE(contains(f.message, "out of memory")) << f.message;
  }
  EXPECT_EQ(dm::exit_code(s), 4);
  EXPECT_EQ(backend->stats().live_bytes, 0u) << "the run gave every buffer back";
}

// A GPU backend that cannot start (a device that does not exist, on any machine): exit code 3, the
// reason, and nothing written, not even the manifest. (No GPU at all: test_cli.cpp's CliGpuBackend.)
TEST(FaultsCli, GpuBackendThatCannotStartExitsThreeAndWritesNothing) {
  TempDir tmp;
  for (const std::string kind : {"copy", "zero_copy", "managed"}) {
    SCOPED_TRACE(kind);
    const auto r = dmtest::run_depthmask("run --config " + q(dmtest::sample_dir() / "depthmask.yaml") + " --output " +
                                         q(tmp / "out") + " --backend " + kind + " --set backend.device=99");
    EXPECT_EQ(r.exit_code, 3) << r.output;
    EXPECT_TRUE(contains(r.output, "device 99") || contains(r.output, "needs a CUDA GPU")) << r.output;
    EXPECT_FALSE(fs::exists(tmp / "out")) << "a backend that failed to start must not touch the output folder";
  }
}

}  // namespace
