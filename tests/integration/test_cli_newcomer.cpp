// A newcomer's first commands (issue 17's papercuts), end to end: depth stored in three equal channels
// is read; a `depthmask synth` configuration runs without a warning and `live --output` with it writes
// frames; a platform configuration pointed at a dataset of another layout says which key to drop; the
// shipped configurations mask the committed sample as they always did.
#include <gtest/gtest.h>

#include <opencv2/imgcodecs.hpp>

#include <regex>
#include <string>

#include "cli_helpers.h"
#include "layout_fixtures.h"

namespace {

namespace fs = std::filesystem;
using dmtest::Contains;
using dmtest::TempDir;

// `depthmask <args>` in `dir` with its stderr alone in `err` (stdout goes to the result).
dmtest::CmdResult run_split(const fs::path& dir, const std::string& args, std::string& err) {
  const fs::path err_file = dir / "stderr.txt";
  const auto r = dmtest::run_shell("cd " + dmtest::q(dir) + " && { " + dmtest::depthmask_cmd() + " " + args + " 2>" +
                                   dmtest::q(err_file) + "; }");
  std::ifstream in(err_file);
  err.assign(std::istreambuf_iterator<char>(in), {});
  return r;
}

// The warning lines of `err`, but the backend's fallback to the CPU (a CUDA build on a machine
// without a usable GPU: the machine's state, not the configuration's).
std::string warnings(const std::string& err) {
  std::istringstream in(err);
  std::string line, out;
  while (std::getline(in, line))
    if (line.find("[W]") != std::string::npos && line.find("so masking runs on the CPU") == std::string::npos)
      out += line + "\n";
  return out;
}

int count(const std::string& text, const std::string& part) {
  int n = 0;
  for (size_t at = text.find(part); at != std::string::npos; at = text.find(part, at + 1)) ++n;
  return n;
}

// The outputs of a run by name, with their bytes (the manifest aside).
std::map<std::string, std::vector<uint8_t>> outputs(const fs::path& dir) {
  std::map<std::string, std::vector<uint8_t>> m;
  for (const std::string& name : dmcli::file_names(dir)) m[name] = dmtest::read_bytes(dir / name);
  return m;
}

cv::Mat three(const cv::Mat& one) {
  cv::Mat out;
  cv::merge(std::vector<cv::Mat>{one, one, one}, out);
  return out;
}

// A synthetic dataset of `frames` frames whose depth is rewritten as `ext` (.png: 16-bit; .exr: float
// metres), in three equal channels when `rgb`.
fs::path synth(const fs::path& tmp, const std::string& name, int frames, const std::string& ext, bool rgb) {
  const fs::path dir = tmp / name;
  const auto r =
      dmcli::run_in(tmp, "synth --output " + dmtest::q(dir) + " --frames " + std::to_string(frames) + " --size 48x36");
  EXPECT_EQ(r.exit_code, 0) << r.output;
  dmtest::enable_opencv_exr();
  for (int i = 0; i < frames; ++i) {
    const fs::path png = dir / "depth" / ("00000" + std::to_string(i) + ".png");
    cv::Mat d = cv::imread(png.string(), cv::IMREAD_UNCHANGED);
    if (ext == ".exr") {
      d.convertTo(d, CV_32F, 1e-3);
      fs::remove(png);
    }
    const fs::path out = dir / "depth" / ("00000" + std::to_string(i) + ext);
    EXPECT_TRUE(cv::imwrite(out.string(), rgb ? three(d) : d)) << out;
  }
  return dir;
}

class CliThreeChannel : public ::testing::TestWithParam<const char*> {};

TEST_P(CliThreeChannel, RunReadsEqualChannelsAsTheSingleChannelFileAndSaysSoOnce) {
  TempDir tmp;
  const std::string ext = GetParam();
  const fs::path one = synth(tmp.path(), "one", 3, ext, false);
  const fs::path rgb = synth(tmp.path(), "rgb", 3, ext, true);
  const std::string args = " --backend cpu --set input.depth=depth/{id}" + ext + " --set output.preview=false";
  const auto a = dmcli::run_in(tmp.path(), "run --config " + dmtest::q(one / "depthmask.yaml") + " --output " +
                                               dmtest::q(tmp / "out-one") + args);
  ASSERT_EQ(a.exit_code, 0) << a.output;
  const auto b = dmcli::run_in(tmp.path(), "run --config " + dmtest::q(rgb / "depthmask.yaml") + " --output " +
                                               dmtest::q(tmp / "out-rgb") + args);
  ASSERT_EQ(b.exit_code, 0) << b.output;
  EXPECT_TRUE(Contains(b.output, "3 frame(s): 3 ok, 0 failed")) << b.output;
  EXPECT_EQ(outputs(tmp / "out-one"), outputs(tmp / "out-rgb"));
  EXPECT_EQ(count(b.output, "stores depth in three equal channels"), 1) << b.output;
  EXPECT_TRUE(Contains(b.output, "depth file '" + (rgb / "depth" / ("000000" + ext)).string() + "' stores depth"))
      << b.output;
  EXPECT_EQ(count(a.output, "three equal channels"), 0) << a.output;
}

TEST_P(CliThreeChannel, RunAndReplayNameTheFileAndPixelWhereChannelsDiffer) {
  TempDir tmp;
  const std::string ext = GetParam();
  const fs::path rgb = synth(tmp.path(), "rgb", 2, ext, true);
  const fs::path bad = rgb / "depth" / ("000001" + ext);
  cv::Mat d = cv::imread(bad.string(), cv::IMREAD_UNCHANGED);
  if (d.depth() == CV_16U)
    d.at<cv::Vec3w>(4, 9)[1] ^= 8;
  else
    d.at<cv::Vec3f>(4, 9)[1] += 0.5f;
  ASSERT_TRUE(cv::imwrite(bad.string(), d));
  const std::string args = " --backend cpu --set input.depth=depth/{id}" + ext;
  const auto r = dmcli::run_in(tmp.path(), "run --config " + dmtest::q(rgb / "depthmask.yaml") + " --output " +
                                               dmtest::q(tmp / "out") + args + " --set output.preview=false");
  EXPECT_EQ(r.exit_code, 1) << r.output;
  EXPECT_TRUE(Contains(r.output, "2 frame(s): 1 ok, 1 failed")) << r.output;
  EXPECT_TRUE(Contains(r.output, "depth file '" + bad.string() + "' is 3-channel")) << r.output;
  EXPECT_TRUE(Contains(r.output, "differ at pixel (x 9, y 4)")) << r.output;

  const auto live =
      dmcli::run_in(tmp.path(), "live --config " + dmtest::q(rgb / "depthmask.yaml") + args +
                                    " --set live.overflow=block --set live.reconnect_max=0.1" +
                                    " --duration 2 --source " + dmtest::q("replay://" + rgb.string() + "?fps=0"));
  EXPECT_TRUE(Contains(live.output, "replay source 'replay://")) << live.output;
  EXPECT_TRUE(Contains(live.output, "depth file '" + bad.string() + "' is 3-channel")) << live.output;
  EXPECT_TRUE(Contains(live.output, "differ at pixel (x 9, y 4)")) << live.output;
}

TEST_P(CliThreeChannel, ReplayReadsEqualChannelsAndSaysSoOnce) {
  TempDir tmp;
  const std::string ext = GetParam();
  const fs::path rgb = synth(tmp.path(), "rgb", 3, ext, true);
  const auto r = dmcli::run_in(tmp.path(), "live --config " + dmtest::q(rgb / "depthmask.yaml") +
                                               " --backend cpu --set input.depth=depth/{id}" + ext +
                                               " --set live.overflow=block --output out --source " +
                                               dmtest::q("replay://" + rgb.string() + "?fps=0"));
  ASSERT_EQ(r.exit_code, 0) << r.output;
  EXPECT_TRUE(Contains(r.output, "3 frame(s) captured, 3 processed")) << r.output;
  EXPECT_EQ(count(r.output, "stores depth in three equal channels"), 1) << r.output;
}

INSTANTIATE_TEST_SUITE_P(Formats, CliThreeChannel, ::testing::Values(".png", ".exr"),
                         [](const auto& p) { return std::string(p.param + 1); });

TEST(CliSynthConfig, HoldsOnlyTheKeysThatMatterAndRunsWithoutAWarning) {
  TempDir tmp;
  const auto s = dmcli::run_in(tmp.path(), "synth --output data --frames 3 --size 64x48");
  ASSERT_EQ(s.exit_code, 0) << s.output;
  std::ifstream in(tmp / "data" / "depthmask.yaml");
  const std::string yaml((std::istreambuf_iterator<char>(in)), {});
  for (const char* absent :
       {"bop_masks", "max_time_diff", "output_every", "threads:", "live:", "backend:", "intrinsics:", "depth/{id}"})
    EXPECT_FALSE(Contains(yaml, absent)) << absent << " in\n" << yaml;
  for (const char* present : {"root: .", "max: 2", "dir: out", "preview: true"})
    EXPECT_TRUE(Contains(yaml, present)) << present << " missing in\n" << yaml;

  std::string err;
  auto r = run_split(tmp.path(), "run --config data/depthmask.yaml", err);
  ASSERT_EQ(r.exit_code, 0) << r.output << err;
  EXPECT_EQ(warnings(err), "") << err;
  EXPECT_FALSE(Contains(err, "has no effect")) << err;
  EXPECT_EQ(dmcli::count_with_suffix(dmcli::file_names(tmp / "data" / "out"), ".tiff"), 3u);

  r = run_split(tmp.path(), "live --config data/depthmask.yaml --frames 3 --source 'synthetic://?size=64x48&fps=0'",
                err);
  ASSERT_EQ(r.exit_code, 0) << r.output << err;
  EXPECT_EQ(warnings(err), "") << err;
}

TEST(CliSynthConfig, LiveOutputWritesEveryFrameUnlessOutputEverySaysOtherwise) {
  TempDir tmp;
  ASSERT_EQ(dmcli::run_in(tmp.path(), "synth --output data --frames 2 --size 32x24").exit_code, 0);
  const std::string live = "live --frames 6 --set live.overflow=block --source 'synthetic://?size=32x24&fps=0' ";
  auto r = dmcli::run_in(tmp.path(), live + "--config data/depthmask.yaml --output every");
  ASSERT_EQ(r.exit_code, 0) << r.output;
  EXPECT_TRUE(Contains(r.output, "written: 6 frame(s)")) << r.output;
  EXPECT_EQ(dmcli::count_with_suffix(dmcli::file_names(tmp / "every"), ".tiff"), 6u);

  // A file's live.output_every: 0 (as older synth configurations wrote) does not silence --output.
  dmtest::write_text(tmp / "zero.yaml", "input: {root: data}\nlive: {output_every: 0}\n");
  r = dmcli::run_in(tmp.path(), live + "--config zero.yaml --output zero");
  ASSERT_EQ(r.exit_code, 0) << r.output;
  EXPECT_EQ(dmcli::count_with_suffix(dmcli::file_names(tmp / "zero"), ".tiff"), 6u) << r.output;

  r = dmcli::run_in(tmp.path(), live + "--config data/depthmask.yaml --set live.output_every=2 --output second");
  ASSERT_EQ(r.exit_code, 0) << r.output;
  EXPECT_TRUE(Contains(r.output, "written: 3 frame(s)")) << r.output;
  EXPECT_EQ(dmcli::count_with_suffix(dmcli::file_names(tmp / "second"), ".tiff"), 3u);
}

TEST(CliBackendReason, TheReasonForTheBackendIsLoggedOnce) {
  // The degraded choice (auto without a usable GPU) is a warning; the info line after it no longer
  // repeats it. On a machine with a GPU auto is not degraded: one info line.
  TempDir tmp;
  ASSERT_EQ(dmcli::run_in(tmp.path(), "synth --output data --frames 1 --size 32x24").exit_code, 0);
  std::string err;
  const auto r = run_split(tmp.path(), "run --config data/depthmask.yaml --set backend.kind=auto", err);
  ASSERT_EQ(r.exit_code, 0) << r.output << err;
  EXPECT_EQ(count(err, "auto: "), 1) << err;
  // A fallback (a CUDA build without a usable driver: `make test` on a machine without a GPU) is a
  // warning, and the summary points at it instead of printing the sentence a second time.
  const size_t at = err.find("auto: ");
  ASSERT_NE(at, std::string::npos) << err;
  const std::string sentence = err.substr(at, err.find('\n', at) - at);
  if (Contains(err, "[W] auto: ")) {
    EXPECT_EQ(count(r.output + err, sentence), 1) << r.output << err;
    EXPECT_TRUE(Contains(r.output, "backend: cpu (auto fell back to the CPU: the warning above says why)")) << r.output;
  } else {
    // Not degraded: the summary names what auto chose and why — cpu on a CPU-only build, a GPU
    // backend where there is a GPU.
    EXPECT_TRUE(std::regex_search(r.output, std::regex(R"(backend: (cpu|copy|zero_copy|managed) \(auto: )")))
        << r.output;
  }
}

TEST(CliPatternHint, APlatformConfigOnAnApcSceneNamesTheKeysToDrop) {
  TempDir tmp;
  dmfix::write_apc(tmp / "apc");
  // An explicit pattern from a configuration file, as older shipped configurations spelled out.
  dmtest::write_text(tmp / "patterns.yaml", "input: {depth: \"depth/{id}.png\", mask: \"mask/{id}.png\"}\n");
  const auto r = dmcli::run_in(tmp.path(), "run --backend cpu --config patterns.yaml --input apc --output out");
  EXPECT_EQ(r.exit_code, 1) << r.output;
  EXPECT_TRUE(Contains(r.output, "matches the depth pattern 'depth/{id}.png'")) << r.output;
  EXPECT_TRUE(Contains(r.output, "input.layout 'apc'")) << r.output;
  EXPECT_TRUE(Contains(r.output, "finds 2 frame(s) with its own patterns (input.depth 'frame-{id}.depth.png')"))
      << r.output;
  EXPECT_TRUE(Contains(r.output, "drop input.depth and input.mask from the configuration")) << r.output;
}

TEST(CliPatternHint, AnExplicitScaleOverADetectedLayoutsSaysWhichKeyToDrop) {
  TempDir tmp;
  dmfix::write_apc(tmp / "apc");
  const auto r = dmcli::run_in(
      tmp.path(), "run --backend cpu --input apc --output out --set depth.scale=0.001 --set output.preview=false");
  EXPECT_TRUE(Contains(r.output, "config key 'depth.scale' = 0.001 from the configuration replaces 0.0001"))
      << r.output;
  EXPECT_TRUE(Contains(r.output, "drop 'depth.scale' from the configuration")) << r.output;
}

TEST(CliPatternHint, TheShippedDefaultConfigOnTheRealApcSceneFindsItsFrames) {
  const fs::path apc = dmtest::shared_data_dir() / "apc-vision-toolbox" / "scene-0000";
  if (!fs::is_directory(apc)) GTEST_SKIP() << "no real APC scene at " << apc;
  TempDir tmp;
  std::string err;
  const auto r = run_split(tmp.path(),
                           "run --backend cpu --config " + dmtest::q(dmtest::source_dir() / "config" / "default.yaml") +
                               " --input " + dmtest::q(apc) + " --output out --set output.preview=false",
                           err);
  ASSERT_EQ(r.exit_code, 0) << r.output << err;
  EXPECT_TRUE(Contains(r.output, "8 frame(s): 8 ok")) << r.output;
  // The layout's own scale, encoding and intrinsics: the shipped file names none of them.
  EXPECT_FALSE(Contains(err, "replaces")) << err;
}

TEST(CliShippedConfigs, DefaultYamlMasksTheSampleAsTheOldExplicitKeysDid) {
  // `make run` (run --config config/default.yaml) on the committed sample: the same outputs as the
  // keys config/default.yaml spelled out before it named only what differs from the defaults.
  TempDir tmp;
  const fs::path sample = dmcli::copy_sample(tmp / "sample");
  dmtest::write_text(tmp / "old.yaml",
                     "input:\n  root: sample\n  depth: \"depth/{id}.png\"\n  mask: \"mask/{id}.png\"\n"
                     "  color: \"color/{id}.png\"\n  intrinsics: sample/intrinsics.yaml\n"
                     "depth: {scale: 0.001, min: 0.0, max: 2.0}\nmask: {threshold: 0, labels: [], invert: false}\n"
                     "output: {dir: old, format: [tiff, npy], invalid: 0, preview: true}\n");
  auto r = dmcli::run_in(tmp.path(), "run --backend cpu --config old.yaml");
  ASSERT_EQ(r.exit_code, 0) << r.output;
  r = dmcli::run_in(tmp.path(), "run --backend cpu --config " +
                                    dmtest::q(dmtest::source_dir() / "config" / "default.yaml") +
                                    " --input sample --output new");
  ASSERT_EQ(r.exit_code, 0) << r.output;
  EXPECT_EQ(dmcli::file_names(tmp / "old").size(), 8u * 3u) << "tiff, npy and preview per frame";
  EXPECT_EQ(outputs(tmp / "old"), outputs(tmp / "new"));
}

}  // namespace
