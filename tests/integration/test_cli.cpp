// End-to-end tests of the depthmask command line: the binary is run through the shell (or forked,
// for SIGINT) on copies of the committed sample, synthetic datasets and, when present, the real APC
// captures of ../shared/data. Nothing is ever written into the repository: every run gets --output
// (or a config) pointing into a TempDir.
#include <gtest/gtest.h>

#include <signal.h>
#include <sys/types.h>
#include <sys/wait.h>
#include <unistd.h>

#include <opencv2/core.hpp>
#include <opencv2/imgcodecs.hpp>
#include <opencv2/imgproc.hpp>

#include <chrono>
#include <cmath>
#include <limits>
#include <memory>
#include <thread>

#include "cli_helpers.h"
#include "depthmask/version.h"
#include "test_support.h"

namespace {

namespace fs = std::filesystem;
using dmcli::contains;
using dmcli::count_with_suffix;
using dmcli::file_names;
using dmcli::read_bytes;
using dmcli::Rule;
using dmtest::q;
using dmtest::run_depthmask;
using dmtest::TempDir;

const std::string kBadId = "000003";  // the frame the bad-input tests break: not the first one

// A clean run of the committed sample (tiff + npy + preview), shared by the tests that compare with it.
class Reference {
 public:
  static Reference& get() {
    static Reference r;
    return r;
  }
  fs::path out() const { return tmp_.path() / "out"; }
  const dmtest::CmdResult& result() const { return result_; }
  std::vector<uint8_t> tiff(const std::string& id) const { return read_bytes(out() / (id + ".tiff")); }

 private:
  Reference() {
    result_ = run_depthmask("run --config " + q(dmtest::sample_dir() / "depthmask.yaml") + " --output " + q(out()) +
                            " --backend cpu --set 'output.format=[tiff,npy]' output.preview=true");
  }
  TempDir tmp_;
  dmtest::CmdResult result_;
};

cv::Mat sample_depth(const std::string& id) {
  return cv::imread((dmtest::sample_dir() / "depth" / (id + ".png")).string(), cv::IMREAD_UNCHANGED);
}
cv::Mat sample_mask(const std::string& id) {
  return cv::imread((dmtest::sample_dir() / "mask" / (id + ".png")).string(), cv::IMREAD_UNCHANGED);
}

// Runs the (possibly modified) copy of the sample at `data` into `out`, with extra arguments.
dmtest::CmdResult run_dataset(const fs::path& data, const fs::path& out, const std::string& extra = "") {
  return run_depthmask("run --config " + q(data / "depthmask.yaml") + " --output " + q(out) + " " + extra);
}

// Checks one frame's TIFF against the rule computed from the sample's PNGs.
void expect_frame_matches_rule(const fs::path& tiff, const std::string& id, const Rule& rule) {
  SCOPED_TRACE("frame " + id + ": " + tiff.string());
  const cv::Mat got = dmcli::read_tiff(tiff);
  ASSERT_FALSE(got.empty()) << "cannot read " << tiff;
  ASSERT_EQ(got.type(), CV_32FC1);
  const cv::Mat depth = sample_depth(id), mask = sample_mask(id);
  ASSERT_EQ(depth.type(), CV_16UC1);
  ASSERT_EQ(mask.type(), CV_8UC1);
  const cv::Mat want = dmcli::expected_output(depth, mask, rule);
  std::string first;
  EXPECT_EQ(dmcli::count_differences(got, want, &first), 0u) << "first difference " << first;
}

// After a run with one bad frame (kBadId): exit 1, the message names the file and the frame, every
// other frame was processed and its TIFF equals the clean reference run's, the bad frame wrote nothing.
void expect_one_bad_frame(const dmtest::CmdResult& r, const fs::path& out, const fs::path& bad_file,
                          const std::vector<std::string>& message_parts) {
  SCOPED_TRACE(r.output);
  EXPECT_EQ(r.exit_code, 1);
  const dmcli::Counts c = dmcli::summary_counts(r.output);
  EXPECT_EQ(c.total, 8);
  EXPECT_EQ(c.ok, 7);
  EXPECT_EQ(c.failed, 1);
  EXPECT_EQ(c.skipped, 0);
  EXPECT_TRUE(contains(r.output, "failed:  frame " + kBadId)) << "the summary should list the failed frame id";
  EXPECT_TRUE(contains(r.output, bad_file.string())) << "the message should name " << bad_file;
  for (const auto& part : message_parts)
    EXPECT_TRUE(contains(r.output, part)) << "expected '" << part << "' in the message";
  ASSERT_EQ(Reference::get().result().exit_code, 0) << Reference::get().result().output;
  for (const auto& id : dmcli::sample_ids()) {
    const fs::path t = out / (id + ".tiff");
    if (id == kBadId) {
      EXPECT_FALSE(fs::exists(t)) << "the failed frame must not produce an output";
    } else {
      ASSERT_TRUE(fs::exists(t)) << "frame " << id << " should have been processed";
      EXPECT_EQ(read_bytes(t), Reference::get().tiff(id)) << "frame " << id << " differs from the clean run";
    }
  }
}

// ---------------------------------------------------------------------------------------------------
// run on the committed sample

TEST(CliRun, SampleWritesAllFormatsAndSummary) {
  const auto& ref = Reference::get();
  const auto& r = ref.result();
  SCOPED_TRACE(r.output);
  ASSERT_EQ(r.exit_code, 0);
  EXPECT_TRUE(contains(r.output, "8 frame(s): 8 ok, 0 failed, 0 skipped"));
  EXPECT_TRUE(std::regex_search(r.output, std::regex(R"(backend: (cpu|copy|zero_copy|managed) \(.{10,}\))")))
      << "expected the backend line with a reason";
  EXPECT_TRUE(contains(r.output, "output:  " + ref.out().string()));
  const auto names = file_names(ref.out());
  EXPECT_EQ(count_with_suffix(names, ".tiff"), 8u);
  EXPECT_EQ(count_with_suffix(names, ".npy"), 8u);
  EXPECT_EQ(count_with_suffix(names, ".preview.png"), 8u);
  EXPECT_EQ(names.size(), 24u) << "nothing but the outputs (no temporary or probe files)";
  for (const auto& id : dmcli::sample_ids()) {
    SCOPED_TRACE(id);
    const cv::Mat t = dmcli::read_tiff(ref.out() / (id + ".tiff"));
    ASSERT_EQ(t.type(), CV_32FC1);
    EXPECT_EQ(t.cols, 320);
    EXPECT_EQ(t.rows, 240);
    std::string err;
    const cv::Mat n = dmcli::read_npy(ref.out() / (id + ".npy"), &err);
    ASSERT_FALSE(n.empty()) << err;
    EXPECT_EQ(dmcli::count_differences(n, t), 0u) << ".npy and .tiff must hold the same values";
    const cv::Mat p = cv::imread((ref.out() / (id + ".preview.png")).string(), cv::IMREAD_UNCHANGED);
    ASSERT_FALSE(p.empty());
    EXPECT_EQ(p.type(), CV_8UC3);
    EXPECT_EQ(p.cols, 3 * 320) << "color | mask | depth side by side";
    EXPECT_EQ(p.rows, 240);
  }
}

TEST(CliRun, TiffMatchesPerPixelRuleFromPngs) {
  const auto& ref = Reference::get();
  ASSERT_EQ(ref.result().exit_code, 0) << ref.result().output;
  for (const auto& id : dmcli::sample_ids()) {
    expect_frame_matches_rule(ref.out() / (id + ".tiff"), id, dmcli::sample_rule());
    const cv::Mat t = dmcli::read_tiff(ref.out() / (id + ".tiff"));
    EXPECT_GT(cv::countNonZero(t), 1000) << "frame " << id << ": the sample's objects should survive masking";
  }
}

TEST(CliRun, OutputsDefaultToTiffOnlyWithoutPreview) {
  TempDir tmp;
  const auto r =
      run_depthmask("run --input " + q(dmtest::sample_dir()) + " --output " + q(tmp / "out") + " --set depth.max=2");
  ASSERT_EQ(r.exit_code, 0) << r.output;
  const auto names = file_names(tmp / "out");
  EXPECT_EQ(names.size(), 8u);
  EXPECT_EQ(count_with_suffix(names, ".tiff"), 8u);
  EXPECT_EQ(read_bytes(tmp / "out" / "000005.tiff"), Reference::get().tiff("000005"));
}

// ---------------------------------------------------------------------------------------------------
// backends

TEST(CliBackend, CpuBackendWorks) {
  TempDir tmp;
  const auto r = run_dataset(dmtest::sample_dir(), tmp / "out", "--backend cpu");
  SCOPED_TRACE(r.output);
  ASSERT_EQ(r.exit_code, 0);
  EXPECT_TRUE(contains(r.output, "8 ok, 0 failed, 0 skipped"));
  EXPECT_TRUE(contains(r.output, "backend: cpu (backend.kind is cpu"));
  for (const auto& id : dmcli::sample_ids())
    expect_frame_matches_rule(tmp / "out" / (id + ".tiff"), id, dmcli::sample_rule());
}

class CliGpuBackend : public ::testing::TestWithParam<std::string> {};

TEST_P(CliGpuBackend, WithoutGpuExitsWithPlatformError) {
  if (dmtest::gpu_unavailable_reason().empty())
    GTEST_SKIP() << "a GPU is present: this case is for machines without one";
  TempDir tmp;
  const auto r = run_dataset(dmtest::sample_dir(), tmp / "out", "--backend " + GetParam());
  SCOPED_TRACE(r.output);
  EXPECT_EQ(r.exit_code, 3);
  EXPECT_TRUE(contains(r.output, "'" + GetParam() + "'")) << "the message should name the backend";
  EXPECT_TRUE(contains(r.output, "needs a CUDA GPU"));
  EXPECT_EQ(count_with_suffix(file_names(tmp / "out"), ".tiff"), 0u) << "no silent fallback to the CPU";
}

TEST_P(CliGpuBackend, OnGpuMatchesCpuByteForByte) {
  DM_REQUIRE_GPU();
  TempDir tmp;
  const std::string args = "--set 'output.format=[tiff,npy]' output.preview=false";
  const auto cpu = run_dataset(dmtest::sample_dir(), tmp / "cpu", "--backend cpu " + args);
  ASSERT_EQ(cpu.exit_code, 0) << cpu.output;
  const auto gpu = run_dataset(dmtest::sample_dir(), tmp / "gpu", "--backend " + GetParam() + " " + args);
  SCOPED_TRACE(gpu.output);
  ASSERT_EQ(gpu.exit_code, 0);
  EXPECT_TRUE(contains(gpu.output, "backend: " + GetParam() + " ("));
  const auto names = file_names(tmp / "cpu");
  ASSERT_EQ(names.size(), 16u);
  EXPECT_EQ(file_names(tmp / "gpu"), names);
  for (const auto& n : names) EXPECT_EQ(read_bytes(tmp / "gpu" / n), read_bytes(tmp / "cpu" / n)) << n;
}

INSTANTIATE_TEST_SUITE_P(Kinds, CliGpuBackend, ::testing::Values("copy", "zero_copy", "managed"),
                         [](const ::testing::TestParamInfo<std::string>& i) { return i.param; });

TEST(CliBackend, UnknownBackendIsAConfigError) {
  const auto r = run_depthmask("run --input " + q(dmtest::sample_dir()) + " --backend vulkan --print-config");
  EXPECT_EQ(r.exit_code, 2) << r.output;
  EXPECT_TRUE(contains(r.output, "backend.kind")) << r.output;
  EXPECT_TRUE(contains(r.output, "auto, copy, zero_copy, managed, cpu")) << r.output;
}

// ---------------------------------------------------------------------------------------------------
// configuration precedence and paths

TEST(CliConfig, PrintConfigPrecedenceDefaultsFileSetFlags) {
  TempDir tmp;
  const fs::path data = dmcli::copy_sample(tmp / "data");
  const std::string cfg = q(data / "depthmask.yaml");
  auto printed = [](const dmtest::CmdResult& r, const std::string& s, const std::string& k) {
    EXPECT_EQ(r.exit_code, 0) << r.output;
    return dmcli::printed_value(r.output, s, k).value_or("<missing>");
  };
  // Defaults (no file): depth.max 10, on_error skip, backend auto.
  const auto d = run_depthmask("run --input " + q(data) + " --print-config");
  EXPECT_EQ(printed(d, "depth", "max"), "10");
  EXPECT_EQ(printed(d, "run", "on_error"), "skip");
  EXPECT_EQ(printed(d, "backend", "kind"), "auto");
  EXPECT_EQ(printed(d, "output", "preview"), "false");
  // File over defaults: the sample's file says max 2 and preview true.
  const auto f = run_depthmask("run --config " + cfg + " --print-config");
  EXPECT_EQ(printed(f, "depth", "max"), "2");
  EXPECT_EQ(printed(f, "output", "preview"), "true");
  EXPECT_EQ(printed(f, "run", "on_error"), "skip");
  // --set over the file.
  const auto s = run_depthmask("run --config " + cfg + " --set run.on_error=stop --print-config");
  EXPECT_EQ(printed(s, "run", "on_error"), "stop");
  // A dedicated flag over --set, wherever it stands on the line.
  const auto a = run_depthmask("run --config " + cfg + " --set run.on_error=stop --on-error skip --print-config");
  EXPECT_EQ(printed(a, "run", "on_error"), "skip");
  const auto b = run_depthmask("run --config " + cfg + " --on-error skip --set run.on_error=stop --print-config");
  EXPECT_EQ(printed(b, "run", "on_error"), "skip");
  const auto k = run_depthmask("run --config " + cfg + " --set backend.kind=cpu --backend auto --print-config");
  EXPECT_EQ(printed(k, "backend", "kind"), "auto");
  const auto k2 = run_depthmask("run --config " + cfg + " --backend cpu --set backend.kind=copy --print-config");
  EXPECT_EQ(printed(k2, "backend", "kind"), "cpu");
  // --output over --set output.dir over the file.
  const auto o =
      run_depthmask("run --config " + cfg + " --set output.dir=/x/from-set --output /x/from-flag --print-config");
  EXPECT_EQ(printed(o, "output", "dir"), "/x/from-flag");
  const auto o2 = run_depthmask("run --config " + cfg + " --set output.dir=/x/from-set --print-config");
  EXPECT_EQ(printed(o2, "output", "dir"), "/x/from-set");
  // A file that changes on_error is itself over the defaults.
  std::string text;
  {
    const auto bytes = read_bytes(data / "depthmask.yaml");
    text.assign(bytes.begin(), bytes.end());
  }
  // The sample's file names only what differs from the defaults (run.on_error is not among them).
  ASSERT_EQ(text.find("on_error"), std::string::npos);
  text += "run:\n  on_error: stop\n";
  dmcli::write_text(data / "stop.yaml", text);
  const auto fs2 = run_depthmask("run --config " + q(data / "stop.yaml") + " --print-config");
  EXPECT_EQ(printed(fs2, "run", "on_error"), "stop");
  const auto fs3 = run_depthmask("run --config " + q(data / "stop.yaml") + " --on-error skip --print-config");
  EXPECT_EQ(printed(fs3, "run", "on_error"), "skip");
}

TEST(CliConfig, SetLabelsAndSeveralSetsAppearInPrintedConfig) {
  const auto r =
      run_depthmask("run --input " + q(dmtest::sample_dir()) +
                    " --set 'mask.labels=[1,3]' --set mask.invert=true --set output.invalid=nan --print-config");
  ASSERT_EQ(r.exit_code, 0) << r.output;
  EXPECT_EQ(dmcli::printed_value(r.output, "mask", "labels").value_or(""), "[1, 3]") << r.output;
  EXPECT_EQ(dmcli::printed_value(r.output, "mask", "invert").value_or(""), "true") << r.output;
  EXPECT_EQ(dmcli::printed_value(r.output, "output", "invalid").value_or(""), ".nan") << r.output;
  // The later of two --set for one key wins.
  const auto r2 = run_depthmask("run --input " + q(dmtest::sample_dir()) +
                                " --set 'mask.labels=[1,3]' --set 'mask.labels=[4]' --print-config");
  ASSERT_EQ(r2.exit_code, 0) << r2.output;
  EXPECT_EQ(dmcli::printed_value(r2.output, "mask", "labels").value_or(""), "[4]") << r2.output;
}

TEST(CliConfig, RelativeInputAndOutputResolveAgainstWorkingDir) {
  TempDir tmp;
  dmcli::copy_sample(tmp / "data");
  const auto p = dmcli::run_in(tmp.path(), "run -i data -o rel --print-config");
  ASSERT_EQ(p.exit_code, 0) << p.output;
  EXPECT_EQ(dmcli::canon(dmcli::printed_value(p.output, "input", "root").value_or("")), dmcli::canon(tmp / "data"));
  EXPECT_EQ(dmcli::canon(dmcli::printed_value(p.output, "output", "dir").value_or("")), dmcli::canon(tmp / "rel"));

  const auto r = dmcli::run_in(tmp.path(), "run -i data -o rel --set depth.max=2");
  ASSERT_EQ(r.exit_code, 0) << r.output;
  EXPECT_EQ(count_with_suffix(file_names(tmp / "rel"), ".tiff"), 8u);
  EXPECT_EQ(read_bytes(tmp / "rel" / "000000.tiff"), Reference::get().tiff("000000"));

  // A relative --output goes to the working dir even with a config file elsewhere; the file's own
  // relative paths resolve against the file's folder.
  fs::create_directories(tmp / "work");
  const auto c = dmcli::run_in(tmp / "work", "run -c ../data/depthmask.yaml -o out2");
  ASSERT_EQ(c.exit_code, 0) << c.output;
  EXPECT_EQ(count_with_suffix(file_names(tmp / "work" / "out2"), ".tiff"), 8u);
  EXPECT_FALSE(fs::exists(tmp / "data" / "out2"));
  EXPECT_FALSE(fs::exists(tmp / "data" / "out")) << "--output must win over the file's output.dir";
}

// ---------------------------------------------------------------------------------------------------
// label masks and invalid values

void run_and_check_rule(const std::string& sets, const Rule& rule) {
  TempDir tmp;
  const auto r = run_dataset(dmtest::sample_dir(), tmp / "out", "--backend cpu " + sets);
  ASSERT_EQ(r.exit_code, 0) << r.output;
  for (const auto& id : dmcli::sample_ids()) expect_frame_matches_rule(tmp / "out" / (id + ".tiff"), id, rule);
}

TEST(CliMask, LabelsKeepOnlyThoseLabels) {
  Rule rule = dmcli::sample_rule();
  rule.labels = {3};
  run_and_check_rule("--set 'mask.labels=[3]'", rule);
  // And the result really is narrower than "any object": the spheres (1, 2, 4) are gone.
  TempDir tmp;
  const auto r = run_dataset(dmtest::sample_dir(), tmp / "out", "--set 'mask.labels=[3]'");
  ASSERT_EQ(r.exit_code, 0) << r.output;
  const cv::Mat t = dmcli::read_tiff(tmp / "out" / "000000.tiff");
  const cv::Mat m = sample_mask("000000");
  int kept3 = 0, kept_other = 0;
  for (int y = 0; y < t.rows; ++y)
    for (int x = 0; x < t.cols; ++x)
      if (t.at<float>(y, x) != 0.0f) (m.at<uint8_t>(y, x) == 3 ? kept3 : kept_other)++;
  EXPECT_GT(kept3, 100);
  EXPECT_EQ(kept_other, 0);
}

TEST(CliMask, SeveralLabels) {
  Rule rule = dmcli::sample_rule();
  rule.labels = {1, 4};
  run_and_check_rule("--set 'mask.labels=[1,4]'", rule);
}

TEST(CliMask, InvertKeepsTheComplement) {
  Rule rule = dmcli::sample_rule();
  rule.invert = true;
  run_and_check_rule("--set mask.invert=true", rule);
}

TEST(CliMask, InvertWithLabels) {
  Rule rule = dmcli::sample_rule();
  rule.labels = {3};
  rule.invert = true;
  run_and_check_rule("--set 'mask.labels=[3]' mask.invert=true", rule);
}

TEST(CliMask, InvalidNanWhereNotKept) {
  Rule rule = dmcli::sample_rule();
  rule.invalid = std::numeric_limits<float>::quiet_NaN();
  run_and_check_rule("--set output.invalid=nan", rule);
  TempDir tmp;
  const auto r = run_dataset(dmtest::sample_dir(), tmp / "out", "--set output.invalid=nan");
  ASSERT_EQ(r.exit_code, 0) << r.output;
  const cv::Mat t = dmcli::read_tiff(tmp / "out" / "000000.tiff");
  int nan = 0, zero = 0;
  for (int y = 0; y < t.rows; ++y)
    for (int x = 0; x < t.cols; ++x) {
      const float v = t.at<float>(y, x);
      if (std::isnan(v))
        ++nan;
      else if (v == 0.0f)
        ++zero;
    }
  EXPECT_GT(nan, 1000);
  EXPECT_EQ(zero, 0) << "with invalid=nan no pixel should be 0";
}

TEST(CliMask, InvalidMinusOne) {
  Rule rule = dmcli::sample_rule();
  rule.invalid = -1.0f;
  run_and_check_rule("--set output.invalid=-1", rule);
}

TEST(CliMask, ThresholdAndDepthRange) {
  Rule rule = dmcli::sample_rule();
  rule.threshold = 2;
  rule.min_m = 1.2f;
  rule.max_m = 1.6f;
  run_and_check_rule("--set mask.threshold=2 depth.min=1.2 depth.max=1.6", rule);
}

// ---------------------------------------------------------------------------------------------------
// bad inputs: the batch goes on, the message names file and frame, exit code 1

class CliBadInput : public ::testing::Test {
 protected:
  void SetUp() override { data_ = dmcli::copy_sample(tmp_ / "data"); }
  fs::path depth(const std::string& id = kBadId) const { return data_ / "depth" / (id + ".png"); }
  fs::path mask(const std::string& id = kBadId) const { return data_ / "mask" / (id + ".png"); }
  fs::path out() const { return tmp_ / "out"; }
  dmtest::CmdResult run(const std::string& extra = "") const { return run_dataset(data_, out(), extra); }

  TempDir tmp_;
  fs::path data_;
};

TEST_F(CliBadInput, MissingMask) {
  fs::remove(mask());
  expect_one_bad_frame(run(), out(), mask(), {"does not exist"});
}

TEST_F(CliBadInput, CorruptDepthGarbageBytes) {
  std::vector<uint8_t> garbage(4096);
  uint32_t s = 12345;
  for (auto& b : garbage) {
    s = s * 1664525u + 1013904223u;
    b = static_cast<uint8_t>(s >> 24);
  }
  dmcli::write_bytes(depth(), garbage);
  expect_one_bad_frame(run(), out(), depth(), {"could not be decoded"});
}

TEST_F(CliBadInput, CorruptMaskGarbageBytes) {
  dmcli::write_text(mask(), "this is not a PNG file, just some text that OpenCV will not recognise\n");
  expect_one_bad_frame(run(), out(), mask(), {"could not be decoded"});
}

TEST_F(CliBadInput, CorruptDepthGarbageBytesInFirstFrame) {
  dmcli::write_text(depth("000000"), "garbage garbage garbage garbage garbage garbage garbage garbage\n");
  const auto r = run();
  SCOPED_TRACE(r.output);
  EXPECT_EQ(r.exit_code, 1);
  EXPECT_TRUE(contains(r.output, "7 ok, 1 failed, 0 skipped"));
  EXPECT_TRUE(contains(r.output, depth("000000").string()));
  EXPECT_FALSE(fs::exists(out() / "000000.tiff"));
}

TEST_F(CliBadInput, TruncatedDepthPng) {
  auto bytes = read_bytes(depth());
  ASSERT_GT(bytes.size(), 4000u);
  bytes.resize(bytes.size() / 3);
  dmcli::write_bytes(depth(), bytes);
  expect_one_bad_frame(run(), out(), depth(), {"could not be decoded"});
}

TEST_F(CliBadInput, TruncatedDepthPngInsideHeader) {
  // The PNG signature survives but the IHDR chunk is cut: the decoder is found, its header read fails.
  auto bytes = read_bytes(depth());
  bytes.resize(30);
  dmcli::write_bytes(depth(), bytes);
  expect_one_bad_frame(run(), out(), depth(), {"could not be decoded"});
}

TEST_F(CliBadInput, EmptyDepthFile) {
  dmcli::write_bytes(depth(), {});
  expect_one_bad_frame(run(), out(), depth(), {"empty"});
}

TEST_F(CliBadInput, DepthMaskSizeMismatch) {
  cv::Mat small;
  cv::resize(sample_mask(kBadId), small, cv::Size(160, 120), 0, 0, cv::INTER_NEAREST);
  ASSERT_TRUE(cv::imwrite(mask().string(), small));
  expect_one_bad_frame(run("--set registration.mode=none"), out(), mask(),
                       {depth().string(), "320x240", "160x120", "same size"});
}

TEST_F(CliBadInput, DepthMaskAspectMismatchIsNotResampled) {
  // registration.mode auto resamples one camera at two resolutions only: 320x240 vs 160x100 is not.
  cv::Mat other;
  cv::resize(sample_mask(kBadId), other, cv::Size(160, 100), 0, 0, cv::INTER_NEAREST);
  ASSERT_TRUE(cv::imwrite(mask().string(), other));
  expect_one_bad_frame(run(), out(), mask(), {depth().string(), "320x240", "160x100", "same size", "aspect ratio"});
}

TEST_F(CliBadInput, HalfResolutionMaskIsResampledOnto) {
  // registration.mode auto: a 160x120 mask with 320x240 depth resamples depth onto the mask's grid
  // (nearest: mask pixel (x, y) reads depth pixel (2x + 1, 2y + 1)); the output is 160x120. Color
  // shares the mask's grid.
  cv::Mat small, small_color;
  cv::resize(sample_mask(kBadId), small, cv::Size(160, 120), 0, 0, cv::INTER_NEAREST);
  ASSERT_TRUE(cv::imwrite(mask().string(), small));
  const fs::path color = data_ / "color" / (kBadId + ".png");
  cv::resize(cv::imread(color.string()), small_color, cv::Size(160, 120), 0, 0, cv::INTER_AREA);
  ASSERT_TRUE(cv::imwrite(color.string(), small_color));
  const auto r = run("--backend cpu");
  SCOPED_TRACE(r.output);
  ASSERT_EQ(r.exit_code, 0);
  const cv::Mat got = dmcli::read_tiff(out() / (kBadId + ".tiff"));
  ASSERT_EQ(got.size(), cv::Size(160, 120));
  const cv::Mat depth = sample_depth(kBadId);
  cv::Mat picked(120, 160, CV_16UC1);
  for (int y = 0; y < 120; ++y)
    for (int x = 0; x < 160; ++x) picked.at<uint16_t>(y, x) = depth.at<uint16_t>(2 * y + 1, 2 * x + 1);
  std::string first;
  EXPECT_EQ(dmcli::count_differences(got, dmcli::expected_output(picked, small, dmcli::sample_rule()), &first), 0u)
      << "first difference " << first;
}

TEST_F(CliBadInput, ReprojectWithoutGeometryIsAConfigError) {
  const auto r = run("--set registration.mode=reproject");
  SCOPED_TRACE(r.output);
  EXPECT_EQ(r.exit_code, 2);
  EXPECT_TRUE(contains(r.output, "registration.mode 'reproject' needs"));
}

TEST_F(CliBadInput, ThreeChannelMask) {
  cv::Mat bgr;
  cv::cvtColor(sample_mask(kBadId), bgr, cv::COLOR_GRAY2BGR);
  ASSERT_TRUE(cv::imwrite(mask().string(), bgr));
  expect_one_bad_frame(run(), out(), mask(), {"3 channels", "single-channel"});
}

TEST_F(CliBadInput, EightBitDepth) {
  cv::Mat d8;
  sample_depth(kBadId).convertTo(d8, CV_8U, 1.0 / 16.0);
  ASSERT_TRUE(cv::imwrite(depth().string(), d8));
  ASSERT_EQ(cv::imread(depth().string(), cv::IMREAD_UNCHANGED).type(), CV_8UC1);
  expect_one_bad_frame(run(), out(), depth(), {"8-bit", "16-bit"});
}

TEST_F(CliBadInput, SeveralBadFramesAllReported) {
  fs::remove(mask("000001"));
  auto bytes = read_bytes(depth("000006"));
  bytes.resize(bytes.size() / 2);
  dmcli::write_bytes(depth("000006"), bytes);
  const auto r = run();
  SCOPED_TRACE(r.output);
  EXPECT_EQ(r.exit_code, 1);
  EXPECT_TRUE(contains(r.output, "8 frame(s): 6 ok, 2 failed, 0 skipped"));
  EXPECT_TRUE(contains(r.output, "failed:  frame 000001"));
  EXPECT_TRUE(contains(r.output, "failed:  frame 000006"));
  EXPECT_EQ(count_with_suffix(file_names(out()), ".tiff"), 6u);
}

TEST_F(CliBadInput, OnErrorStopStopsAtFirstFailure) {
  fs::remove(mask());
  const auto r = run("--on-error stop");
  SCOPED_TRACE(r.output);
  EXPECT_EQ(r.exit_code, 1);
  EXPECT_TRUE(contains(r.output, "8 frame(s): 3 ok, 1 failed, 4 skipped"));
  EXPECT_TRUE(contains(r.output, mask().string()));
  std::set<std::string> tiffs;
  for (const auto& n : file_names(out()))
    if (count_with_suffix({n}, ".tiff")) tiffs.insert(n);
  EXPECT_EQ(tiffs, (std::set<std::string>{"000000.tiff", "000001.tiff", "000002.tiff"}));
  // The same through the config key.
  TempDir tmp2;
  const auto r2 = run_dataset(data_, tmp2 / "out", "--set run.on_error=stop");
  EXPECT_TRUE(contains(r2.output, "3 ok, 1 failed, 4 skipped")) << r2.output;
}

TEST_F(CliBadInput, EmptyInputFolderNamesTheDepthPattern) {
  fs::create_directories(tmp_ / "empty");
  const auto r = run_depthmask("run --input " + q(tmp_ / "empty") + " --output " + q(out()));
  SCOPED_TRACE(r.output);
  EXPECT_NE(r.exit_code, 0);
  EXPECT_TRUE(contains(r.output, "depth/{id}.png"));
  EXPECT_TRUE(contains(r.output, (tmp_ / "empty").string()));
  // A custom pattern is named as given.
  const auto r2 =
      run_depthmask("run --input " + q(data_) + " --output " + q(out()) + " --set 'input.depth=\"d/x-{id}.png\"'");
  EXPECT_NE(r2.exit_code, 0) << r2.output;
  EXPECT_TRUE(contains(r2.output, "d/x-{id}.png")) << r2.output;
}

TEST_F(CliBadInput, MissingInputFolder) {
  const auto r = run_depthmask("run --input " + q(tmp_ / "nope") + " --output " + q(out()));
  EXPECT_NE(r.exit_code, 0) << r.output;
  EXPECT_TRUE(contains(r.output, (tmp_ / "nope").string())) << r.output;
}

TEST_F(CliBadInput, UnwritableOutputFolderNamesIt) {
  dmcli::write_text(tmp_ / "afile", "a regular file\n");
  const fs::path bad = tmp_ / "afile" / "out";
  const auto r = run_depthmask("run --config " + q(data_ / "depthmask.yaml") + " --output " + q(bad));
  SCOPED_TRACE(r.output);
  EXPECT_NE(r.exit_code, 0);
  EXPECT_TRUE(contains(r.output, bad.string()));
  // An output path that is itself a regular file.
  const auto r2 = run_depthmask("run --config " + q(data_ / "depthmask.yaml") + " --output " + q(tmp_ / "afile"));
  EXPECT_NE(r2.exit_code, 0) << r2.output;
  EXPECT_TRUE(contains(r2.output, (tmp_ / "afile").string())) << r2.output;
}

// ---------------------------------------------------------------------------------------------------
// bad configuration and usage: exit code 2

TEST(CliBadConfig, YamlSyntaxErrorNamesFileAndLine) {
  TempDir tmp;
  dmcli::write_text(tmp / "bad.yaml", "input:\n  root: .\ndepth:\n  scale: 0.001\n   min: 0\n");
  const auto r = run_depthmask("run --config " + q(tmp / "bad.yaml") + " --print-config");
  SCOPED_TRACE(r.output);
  EXPECT_EQ(r.exit_code, 2);
  EXPECT_TRUE(contains(r.output, "bad.yaml"));
  EXPECT_TRUE(contains(r.output, "line 5"));
}

TEST(CliBadConfig, UnknownKeyNamesKeyAndLine) {
  TempDir tmp;
  dmcli::write_text(tmp / "bad.yaml", "input:\n  root: .\nmask:\n  treshold: 3\n");
  const auto r = run_depthmask("run --config " + q(tmp / "bad.yaml"));
  SCOPED_TRACE(r.output);
  EXPECT_EQ(r.exit_code, 2);
  EXPECT_TRUE(contains(r.output, "mask.treshold"));
  EXPECT_TRUE(contains(r.output, "line 4"));
  EXPECT_TRUE(contains(r.output, "threshold")) << "the allowed keys should be listed";
}

TEST(CliBadConfig, BadValueNamesKeyAndAllowedValues) {
  TempDir tmp;
  dmcli::write_text(tmp / "bad.yaml", "run:\n  on_error: retry\n");
  const auto r = run_depthmask("run --config " + q(tmp / "bad.yaml"));
  SCOPED_TRACE(r.output);
  EXPECT_EQ(r.exit_code, 2);
  EXPECT_TRUE(contains(r.output, "run.on_error"));
  EXPECT_TRUE(contains(r.output, "line 2"));
  EXPECT_TRUE(contains(r.output, "skip, stop"));
}

TEST(CliBadConfig, BadDedicatedFlagValue) {
  const auto r = run_depthmask("run --input " + q(dmtest::sample_dir()) + " --on-error maybe --print-config");
  EXPECT_EQ(r.exit_code, 2) << r.output;
  EXPECT_TRUE(contains(r.output, "run.on_error")) << r.output;
  EXPECT_TRUE(contains(r.output, "skip, stop")) << r.output;
}

TEST(CliBadConfig, BadSetOverride) {
  const auto r = run_depthmask("run --input " + q(dmtest::sample_dir()) + " --set nonsense --print-config");
  EXPECT_EQ(r.exit_code, 2) << r.output;
  EXPECT_TRUE(contains(r.output, "nonsense")) << r.output;
  const auto r2 = run_depthmask("run --input " + q(dmtest::sample_dir()) + " --set mask.bogus=1 --print-config");
  EXPECT_EQ(r2.exit_code, 2) << r2.output;
  EXPECT_TRUE(contains(r2.output, "mask.bogus")) << r2.output;
}

TEST(CliBadConfig, MissingConfigFile) {
  TempDir tmp;
  const auto r = run_depthmask("run --config " + q(tmp / "nope.yaml"));
  EXPECT_EQ(r.exit_code, 2) << r.output;
  EXPECT_TRUE(contains(r.output, "nope.yaml")) << r.output;
}

TEST(CliUsage, UnknownSubcommandExits2) {
  const auto r = run_depthmask("frobnicate");
  EXPECT_EQ(r.exit_code, 2) << r.output;
  const auto r2 = run_depthmask("");
  EXPECT_EQ(r2.exit_code, 2) << r2.output;
}

TEST(CliUsage, BadFlagExits2) {
  const auto r = run_depthmask("run --bogus-flag");
  EXPECT_EQ(r.exit_code, 2) << r.output;
  EXPECT_TRUE(contains(r.output, "--bogus-flag")) << r.output;
  const auto r2 = run_depthmask("synth");  // --output is required
  EXPECT_EQ(r2.exit_code, 2) << r2.output;
}

TEST(CliUsage, HelpAndVersionExit0) {
  const auto h = run_depthmask("--help");
  EXPECT_EQ(h.exit_code, 0) << h.output;
  EXPECT_TRUE(contains(h.output, "run")) << h.output;
  const auto v = run_depthmask("--version");
  EXPECT_EQ(v.exit_code, 0) << v.output;
  EXPECT_TRUE(contains(v.output, DEPTHMASK_VERSION)) << v.output;
}

// ---------------------------------------------------------------------------------------------------
// finished work is not lost

TEST(CliResume, RerunWithACorruptInputKeepsEarlierOutputs) {
  TempDir tmp;
  const fs::path data = dmcli::copy_sample(tmp / "data");
  const fs::path out = tmp / "out";
  const std::string args = "--set 'output.format=[tiff,npy]' output.preview=true";
  const auto first = run_dataset(data, out, args);
  ASSERT_EQ(first.exit_code, 0) << first.output;
  std::map<std::string, std::vector<uint8_t>> before;
  for (const auto& n : file_names(out)) before[n] = read_bytes(out / n);
  ASSERT_EQ(before.size(), 24u);

  const fs::path bad = data / "depth" / (kBadId + ".png");
  auto bytes = read_bytes(bad);
  bytes.resize(bytes.size() / 2);
  dmcli::write_bytes(bad, bytes);
  // --force: every frame is redone (without it the seven intact ones resume as done; see test_cli_resume).
  const auto second = run_dataset(data, out, args + " --force");
  SCOPED_TRACE(second.output);
  EXPECT_EQ(second.exit_code, 1);
  EXPECT_TRUE(contains(second.output, "7 ok, 1 failed, 0 skipped"));

  const auto names = file_names(out);
  for (const auto& n : names) EXPECT_NE(n.front(), '.') << "temporary file left behind: " << n;
  EXPECT_EQ(names.size(), 24u);
  for (const auto& [n, b] : before) {
    ASSERT_TRUE(fs::exists(out / n)) << n;
    EXPECT_EQ(read_bytes(out / n), b) << n << (n.rfind(kBadId, 0) == 0 ? " (the failed frame's old output)" : "");
  }
}

// ---------------------------------------------------------------------------------------------------
// synth

TEST(CliSynth, WritesDatasetThatRunsAsIs) {
  TempDir tmp;
  const fs::path d = tmp / "syn";
  const auto r = run_depthmask("synth --output " + q(d) + " --frames 3 --size 64x48");
  ASSERT_EQ(r.exit_code, 0) << r.output;
  for (const char* id : {"000000", "000001", "000002"}) {
    SCOPED_TRACE(id);
    const cv::Mat dep = cv::imread((d / "depth" / (std::string(id) + ".png")).string(), cv::IMREAD_UNCHANGED);
    const cv::Mat col = cv::imread((d / "color" / (std::string(id) + ".png")).string(), cv::IMREAD_UNCHANGED);
    const cv::Mat msk = cv::imread((d / "mask" / (std::string(id) + ".png")).string(), cv::IMREAD_UNCHANGED);
    ASSERT_FALSE(dep.empty());
    ASSERT_FALSE(col.empty());
    ASSERT_FALSE(msk.empty());
    EXPECT_EQ(dep.type(), CV_16UC1);
    EXPECT_EQ(col.type(), CV_8UC3);
    EXPECT_EQ(msk.type(), CV_8UC1);
    for (const cv::Mat* m : {&dep, &col, &msk}) {
      EXPECT_EQ(m->cols, 64);
      EXPECT_EQ(m->rows, 48);
    }
    double lo = 0, hi = 0;
    cv::minMaxLoc(msk, &lo, &hi);
    EXPECT_GE(hi, 1.0) << "some object pixels";
    EXPECT_LE(hi, 4.0) << "labels 0..4";
  }
  EXPECT_FALSE(fs::exists(d / "depth" / "000003.png"));
  ASSERT_TRUE(fs::exists(d / "intrinsics.yaml"));
  ASSERT_TRUE(fs::exists(d / "depthmask.yaml"));
  const auto k = read_bytes(d / "intrinsics.yaml");
  const std::string ktext(k.begin(), k.end());
  EXPECT_TRUE(contains(ktext, "fx:"));
  EXPECT_TRUE(contains(ktext, "width: 64"));
  EXPECT_TRUE(contains(ktext, "height: 48"));

  const auto run = run_depthmask("run --config " + q(d / "depthmask.yaml"));
  SCOPED_TRACE(run.output);
  ASSERT_EQ(run.exit_code, 0);
  EXPECT_TRUE(contains(run.output, "3 frame(s): 3 ok, 0 failed, 0 skipped"));
  EXPECT_EQ(count_with_suffix(file_names(d / "out"), ".tiff"), 3u) << "the config's output.dir is the dataset's out/";
  // The written config applies the synthetic rule: max 2 m, any object.
  const cv::Mat t = dmcli::read_tiff(d / "out" / "000001.tiff");
  const cv::Mat want = dmcli::expected_output(cv::imread((d / "depth" / "000001.png").string(), cv::IMREAD_UNCHANGED),
                                              cv::imread((d / "mask" / "000001.png").string(), cv::IMREAD_UNCHANGED),
                                              dmcli::sample_rule());
  EXPECT_EQ(dmcli::count_differences(t, want), 0u);
}

TEST(CliSynth, DatasetMovedElsewhereStillRuns) {
  TempDir tmp;
  ASSERT_EQ(run_depthmask("synth -o " + q(tmp / "a") + " -n 2 -s 32x24").exit_code, 0);
  fs::rename(tmp / "a", tmp / "b");
  const auto r = run_depthmask("run --config " + q(tmp / "b" / "depthmask.yaml"));
  EXPECT_EQ(r.exit_code, 0) << r.output;
  EXPECT_EQ(count_with_suffix(file_names(tmp / "b" / "out"), ".tiff"), 2u);
}

TEST(CliSynth, Deterministic) {
  TempDir tmp;
  ASSERT_EQ(run_depthmask("synth --output " + q(tmp / "a") + " --frames 3 --size 64x48").exit_code, 0);
  ASSERT_EQ(run_depthmask("synth --output " + q(tmp / "b") + " --frames 3 --size 64x48").exit_code, 0);
  size_t files = 0;
  for (const auto& e : fs::recursive_directory_iterator(tmp / "a")) {
    if (!e.is_regular_file()) continue;
    const fs::path rel = e.path().lexically_relative(tmp / "a");
    ASSERT_TRUE(fs::exists(tmp / "b" / rel)) << rel;
    EXPECT_EQ(read_bytes(e.path()), read_bytes(tmp / "b" / rel)) << rel;
    ++files;
  }
  EXPECT_EQ(files, 3u * 3u + 2u);
  // And the committed sample is what synth writes at 320x240 (same generator, same bytes).
  ASSERT_EQ(run_depthmask("synth --output " + q(tmp / "c") + " --frames 8 --size 320x240").exit_code, 0);
  for (const auto& id : dmcli::sample_ids())
    for (const char* sub : {"depth", "mask", "color"}) {
      const fs::path rel = fs::path(sub) / (id + ".png");
      EXPECT_EQ(read_bytes(tmp / "c" / rel), read_bytes(dmtest::sample_dir() / rel)) << rel;
    }
}

TEST(CliSynth, BadSizeExits2) {
  TempDir tmp;
  for (const char* size : {"64by48", "0x48", "64x", "x48", "-64x48", "99999x10"}) {
    const auto r = run_depthmask("synth --output " + q(tmp / "s") + " --frames 1 --size " + q(size));
    EXPECT_EQ(r.exit_code, 2) << size << ": " << r.output;
    EXPECT_TRUE(contains(r.output, "--size")) << size << ": " << r.output;
  }
  const auto f = run_depthmask("synth --output " + q(tmp / "s") + " --frames 0");
  EXPECT_EQ(f.exit_code, 2) << f.output;
  EXPECT_FALSE(fs::exists(tmp / "s" / "depth" / "000000.png"));
}

// ---------------------------------------------------------------------------------------------------
// info

TEST(CliInfo, PrintsAutoPickAndReason) {
  const auto r = run_depthmask("info");
  SCOPED_TRACE(r.output);
  EXPECT_EQ(r.exit_code, 0);
  EXPECT_TRUE(contains(r.output, "CUDA in this build:"));
  EXPECT_TRUE(
      std::regex_search(r.output, std::regex(R"(auto picks: (cpu|copy|zero_copy|managed)\n\s+why: auto: .{10,})")));
  if (!dmtest::gpu_unavailable_reason().empty()) {
    EXPECT_TRUE(contains(r.output, "auto picks: cpu"));
  }
  const auto c = run_depthmask("info --set backend.kind=cpu");
  EXPECT_EQ(c.exit_code, 0) << c.output;
  EXPECT_TRUE(contains(c.output, "configured: cpu (usable)")) << c.output;
}

TEST(CliInfo, ListsTheLiveSourcesAndWhichAreAvailable) {
  const auto r = run_depthmask("info");
  ASSERT_EQ(r.exit_code, 0) << r.output;
  EXPECT_TRUE(contains(r.output, "live sources:")) << r.output;
  for (const char* scheme : {"synthetic (", "replay (", "gst (", "v4l2 (", "openni2 ("})
    EXPECT_TRUE(contains(r.output, scheme)) << scheme << "\n" << r.output;
}

TEST(CliInfo, ExplicitGpuBackendWithoutGpuExits3) {
  if (dmtest::gpu_unavailable_reason().empty())
    GTEST_SKIP() << "a GPU is present: this case is for machines without one";
  const auto r = run_depthmask("info --set backend.kind=copy");
  SCOPED_TRACE(r.output);
  EXPECT_EQ(r.exit_code, 3);
  EXPECT_TRUE(contains(r.output, "auto picks:"));
  EXPECT_TRUE(contains(r.output, "NOT usable"));
  EXPECT_TRUE(contains(r.output, "needs a CUDA GPU"));
}

TEST(CliInfo, BadConfigExits2) {
  const auto r = run_depthmask("info --set backend.kind=quantum");
  EXPECT_EQ(r.exit_code, 2) << r.output;
  EXPECT_TRUE(contains(r.output, "backend.kind")) << r.output;
}

// ---------------------------------------------------------------------------------------------------
// real data

TEST(CliRealData, ApcFrame0KeepsGroundTruthObjectPixels) {
  const fs::path scene = dmtest::shared_data_dir() / "apc-vision-toolbox" / "scene-0000";
  const fs::path depth = scene / "frame-000000.depth.png", segm = scene / "segm" / "frame-000000.segm.png";
  if (!fs::exists(depth) || !fs::exists(segm))
    GTEST_SKIP() << "real data not present: " << depth << " (set DEPTHMASK_TEST_DATA to the shared data folder)";
  TempDir tmp;
  const fs::path root = tmp / "apc";
  fs::create_directories(root / "segm");
  fs::create_symlink(depth, root / "frame-000000.depth.png");
  fs::create_symlink(segm, root / "segm" / "frame-000000.segm.png");
  // The stored words are bit-rotated deci-millimetres (see the data README); depthmask does not decode
  // them, but a stored 0 is still "no measurement" and every other word is > 0 and below 6.6 m at
  // 1e-4 m per unit, so the kept set is exactly depth>0 AND segm>0.
  dmcli::write_text(tmp / "apc.yaml",
                    "input:\n"
                    "  root: apc\n"
                    "  depth: \"frame-{id}.depth.png\"\n"
                    "  mask: \"segm/frame-{id}.segm.png\"\n"
                    "  color: null\n"
                    "depth:\n"
                    "  scale: 0.0001\n"
                    "  max: 10\n"
                    "output:\n"
                    "  dir: out\n"
                    "  format: tiff\n");
  const auto r = run_depthmask("run --config " + q(tmp / "apc.yaml"));
  SCOPED_TRACE(r.output);
  ASSERT_EQ(r.exit_code, 0);
  EXPECT_TRUE(contains(r.output, "1 frame(s): 1 ok, 0 failed, 0 skipped"));
  const cv::Mat t = dmcli::read_tiff(tmp / "out" / "000000.tiff");
  ASSERT_EQ(t.type(), CV_32FC1);
  EXPECT_EQ(t.cols, 640);
  EXPECT_EQ(t.rows, 480);
  EXPECT_EQ(cv::countNonZero(t), 26485) << "README: depth>0 AND segm>0 has 26,485 px in frame-000000";
  Rule rule;
  rule.scale = static_cast<float>(0.0001);
  rule.max_m = 10.0f;
  const cv::Mat want = dmcli::expected_output(cv::imread(depth.string(), cv::IMREAD_UNCHANGED),
                                              cv::imread(segm.string(), cv::IMREAD_UNCHANGED), rule);
  std::string first;
  EXPECT_EQ(dmcli::count_differences(t, want, &first), 0u) << first;
  // One object only: the bunny book (label 114) has 12,851 px with depth.
  TempDir tmp2;
  const auto r2 = run_depthmask("run --config " + q(tmp / "apc.yaml") + " --output " + q(tmp2 / "out") +
                                " --set 'mask.labels=[114]'");
  ASSERT_EQ(r2.exit_code, 0) << r2.output;
  EXPECT_EQ(cv::countNonZero(dmcli::read_tiff(tmp2 / "out" / "000000.tiff")), 12851);
}

// ---------------------------------------------------------------------------------------------------
// SIGINT

TEST(CliSignal, SigintStopsBetweenFramesWithExit130) {
  TempDir tmp;
  const fs::path data = tmp / "big", out = tmp / "out";
  constexpr int kFrames = 200;
  const auto s =
      run_depthmask("synth --output " + q(data) + " --frames " + std::to_string(kFrames) + " --size 320x240");
  ASSERT_EQ(s.exit_code, 0) << s.output;

  const std::string log = (tmp / "run.log").string();
  const std::string cmd = "exec " + dmtest::depthmask_cmd() + " run --config " + q(data / "depthmask.yaml") +
                          " --output " + q(out) + " --set 'output.format=[tiff,npy]' > " + q(log) + " 2>&1";
  const pid_t pid = ::fork();
  ASSERT_GE(pid, 0);
  if (pid == 0) {
    ::setpgid(0, 0);
    ::signal(SIGINT, SIG_DFL);
    ::execl("/bin/sh", "sh", "-c", cmd.c_str(), static_cast<char*>(nullptr));
    ::_exit(127);
  }
  ::setpgid(pid, pid);
  using Clock = std::chrono::steady_clock;
  // Wait for the first finished frame: the signal handler is installed by then and many frames are left.
  const auto t0 = Clock::now();
  int status = 0;
  bool exited = false;
  while (Clock::now() - t0 < std::chrono::seconds(60)) {
    if (::waitpid(pid, &status, WNOHANG) == pid) {
      exited = true;
      break;
    }
    if (fs::exists(out / "000000.tiff")) break;
    std::this_thread::sleep_for(std::chrono::milliseconds(1));
  }
  if (exited) {
    const auto early = read_bytes(log);
    FAIL() << "depthmask ended before it wrote a frame:\n" << std::string(early.begin(), early.end());
  }
  const size_t done_at_signal = count_with_suffix(file_names(out), ".tiff");
  ASSERT_EQ(::kill(-pid, SIGINT), 0);
  while (!exited && Clock::now() - t0 < std::chrono::seconds(120)) {
    if (::waitpid(pid, &status, WNOHANG) == pid)
      exited = true;
    else
      std::this_thread::sleep_for(std::chrono::milliseconds(5));
  }
  if (!exited) {
    ::kill(-pid, SIGKILL);
    ::waitpid(pid, &status, 0);
    FAIL() << "depthmask did not stop after SIGINT";
  }
  const auto bytes = read_bytes(log);
  const std::string output(bytes.begin(), bytes.end());
  SCOPED_TRACE(output);
  if (done_at_signal >= static_cast<size_t>(kFrames) - 1)
    GTEST_SKIP() << "the run finished before SIGINT could arrive; not a meaningful interruption";
  ASSERT_TRUE(WIFEXITED(status)) << "killed by signal " << (WIFSIGNALED(status) ? WTERMSIG(status) : 0);
  EXPECT_EQ(WEXITSTATUS(status), 130);
  EXPECT_TRUE(contains(output, "interrupted"));
  const dmcli::Counts c = dmcli::summary_counts(output);
  EXPECT_EQ(c.total, kFrames);
  EXPECT_EQ(c.failed, 0);
  EXPECT_GT(c.skipped, 0);
  EXPECT_EQ(c.ok + c.skipped, kFrames);
  EXPECT_TRUE(contains(output, "interrupted: " + std::to_string(c.skipped) + " frame(s) not processed"));
  // Every frame counted ok was written completely, nothing else, and no temporary file remains.
  const auto names = file_names(out);
  EXPECT_EQ(count_with_suffix(names, ".tiff"), static_cast<size_t>(c.ok));
  EXPECT_EQ(count_with_suffix(names, ".npy"), static_cast<size_t>(c.ok));
  for (const auto& n : names) EXPECT_NE(n.front(), '.') << n;
}

}  // namespace
