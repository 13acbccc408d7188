// Patterns as written on the command line (`--set input.depth={id}-...`, no YAML quotes), and the
// doctor proposing the patterns of a folder no layout knows, on folders made here in the shapes of two
// capture tools' output: `000000080-transparent-depth-img.exr` / `-mask.png` / `-transparent-rgb-img.jpg`
// (and `-opaque-` variants, a camera_intrinsics.yaml), and `input-0.depth.png` / `input-0.color.png` /
// `camera-0.intrinsics.txt` (no masks).
#include <gtest/gtest.h>

#include <opencv2/imgcodecs.hpp>

#include <cstdio>
#include <fstream>
#include <iterator>
#include <string>

#include "cli_helpers.h"

namespace {

namespace fs = std::filesystem;
using dmcli::run_in;
using dmtest::Contains;
using dmtest::TempDir;

constexpr int kW = 64, kH = 48;
constexpr int kFirstId = 80, kFrames = 4;

std::string capture_id(int i) {
  char buf[16];
  std::snprintf(buf, sizeof buf, "%09d", kFirstId + i);
  return buf;
}

// Float depth in metres, many distinct values; zero (no depth) where x < hole_cols.
cv::Mat float_depth(int frame, int hole_cols) {
  cv::Mat d(kH, kW, CV_32FC1);
  for (int y = 0; y < kH; ++y)
    for (int x = 0; x < kW; ++x)
      d.at<float>(y, x) =
          x < hole_cols ? 0.0f : 0.5f + 0.001f * static_cast<float>(x + y * kW) + 0.01f * static_cast<float>(frame);
  return d;
}

cv::Mat colour(int frame) {
  cv::Mat c(kH, kW, CV_8UC3);
  for (int y = 0; y < kH; ++y)
    for (int x = 0; x < kW; ++x)
      c.at<cv::Vec3b>(y, x) = cv::Vec3b(static_cast<uint8_t>(x * 4), static_cast<uint8_t>(y * 5),
                                        static_cast<uint8_t>((x * y + frame * 7) % 256));
  return c;
}

// 255 inside the rectangle x in [16, 48), y in [12, 36).
cv::Mat rect_mask() {
  cv::Mat m(kH, kW, CV_8UC1, cv::Scalar(0));
  m(cv::Rect(16, 12, 32, 24)).setTo(255);
  return m;
}

struct CaptureShape {
  bool opaque_rgb = true;      // the -opaque-rgb-img.jpg files too
  int transparent_holes = 32;  // columns without depth in the transparent depth (the opaque one: 4)
};

// The capture tool's folder: per frame a transparent depth EXR stored as three equal channels (as the
// tool writes it), an opaque one of one channel, a mask, the colour images; one camera_intrinsics.yaml.
void make_capture(const fs::path& dir, const CaptureShape& s = {}) {
  dmtest::enable_opencv_exr();
  fs::create_directories(dir);
  for (int i = 0; i < kFrames; ++i) {
    const std::string id = capture_id(i);
    cv::Mat three;
    cv::merge(std::vector<cv::Mat>{float_depth(i, s.transparent_holes), float_depth(i, s.transparent_holes),
                                   float_depth(i, s.transparent_holes)},
              three);
    ASSERT_TRUE(cv::imwrite((dir / (id + "-transparent-depth-img.exr")).string(), three));
    ASSERT_TRUE(cv::imwrite((dir / (id + "-opaque-depth-img.exr")).string(), float_depth(i, 4)));
    ASSERT_TRUE(cv::imwrite((dir / (id + "-mask.png")).string(), rect_mask()));
    ASSERT_TRUE(cv::imwrite((dir / (id + "-transparent-rgb-img.jpg")).string(), colour(i)));
    if (s.opaque_rgb) {
      ASSERT_TRUE(cv::imwrite((dir / (id + "-opaque-rgb-img.jpg")).string(), colour(i + 1)));
    }
  }
  // The focal length suits these 64-pixel-wide images (a 56 degree field of view).
  dmtest::write_text(dir / "camera_intrinsics.yaml", "fx: 60.5\nfy: 60.5\ncx: 32.0\ncy: 24.0\nwidth: 64\nheight: 48\n");
}

// The other tool's folder: 16-bit millimetre depth PNGs, colour PNGs, a 3x3 K text file, no masks.
void make_no_mask(const fs::path& dir) {
  fs::create_directories(dir);
  for (int i = 0; i < kFrames; ++i) {
    cv::Mat d(kH, kW, CV_16UC1);
    for (int y = 0; y < kH; ++y)
      for (int x = 0; x < kW; ++x) d.at<uint16_t>(y, x) = x < 2 ? 0 : static_cast<uint16_t>(500 + x * 13 + y * 7 + i);
    const std::string n = std::to_string(i);
    ASSERT_TRUE(cv::imwrite((dir / ("input-" + n + ".depth.png")).string(), d));
    ASSERT_TRUE(cv::imwrite((dir / ("input-" + n + ".color.png")).string(), colour(i)));
  }
  dmtest::write_text(dir / "camera-0.intrinsics.txt", "60.5 0 32\n0 60.5 24\n0 0 1\n");
}

std::string slurp(const fs::path& file) {
  std::ifstream in(file);
  return std::string(std::istreambuf_iterator<char>(in), {});
}

cv::Mat read_output(const fs::path& file) { return cv::imread(file.string(), cv::IMREAD_UNCHANGED); }

// Every frame written, masked: depth inside the mask's rectangle, 0 outside.
void expect_masked_capture(const fs::path& out, int holes) {
  for (int i = 0; i < kFrames; ++i) {
    const cv::Mat o = read_output(out / (capture_id(i) + ".tiff"));
    ASSERT_FALSE(o.empty()) << "frame " << capture_id(i) << " in " << out;
    ASSERT_EQ(o.type(), CV_32FC1);
    const cv::Mat d = float_depth(i, holes);
    EXPECT_EQ(o.at<float>(20, 40), d.at<float>(20, 40)) << "inside the mask: the depth";
    EXPECT_EQ(o.at<float>(2, 2), 0.0f) << "outside the mask: invalid";
  }
}

TEST(CliPatterns, SetTakesAPatternAsWritten) {
  TempDir tmp;
  const fs::path data = tmp / "capture";
  make_capture(data);
  const auto r = run_in(data,
                        "run --input . --output out --backend cpu --set 'input.depth={id}-transparent-depth-img.exr' "
                        "--set input.mask={id}-mask.png --set 'input.color={id}-transparent-rgb-img.jpg' "
                        "--set input.intrinsics=camera_intrinsics.yaml");
  ASSERT_EQ(r.exit_code, 0) << r.output;
  expect_masked_capture(data / "out", 32);
}

TEST(CliPatterns, QuotedPatternsAndNullStillWork) {
  TempDir tmp;
  const fs::path data = tmp / "capture";
  make_capture(data);
  const auto r = run_in(data,
                        "run --input . --output out --backend cpu --set 'input.depth=\"{id}-opaque-depth-img.exr\"' "
                        "--set \"input.mask='{id}-mask.png'\" --set input.color=null");
  ASSERT_EQ(r.exit_code, 0) << r.output;
  expect_masked_capture(data / "out", 4);
  const auto printed = run_in(data,
                              "run --input . --set input.depth={id}-opaque-depth-img.exr --set input.color=null "
                              "--print-config");
  ASSERT_EQ(printed.exit_code, 0) << printed.output;
  EXPECT_TRUE(Contains(printed.output, "depth: \"{id}-opaque-depth-img.exr\"")) << printed.output;
  EXPECT_TRUE(Contains(printed.output, "color: ~")) << printed.output;
}

TEST(CliPatterns, OtherKeysKeepYamlsReading) {
  TempDir tmp;
  const fs::path data = tmp / "capture";
  make_capture(data);
  const auto r = run_in(data,
                        "run --input . --set input.depth={id}-opaque-depth-img.exr --set input.mask={id}-mask.png "
                        "--set 'mask.labels=[255]' --set depth.max=0.9 --print-config");
  ASSERT_EQ(r.exit_code, 0) << r.output;
  EXPECT_TRUE(Contains(r.output, "labels: [255]")) << r.output;
  EXPECT_TRUE(Contains(r.output, "max: 0.9")) << r.output;
  const auto bad = run_in(data, "run --input . --set 'mask.labels={id}' --print-config");
  EXPECT_EQ(bad.exit_code, 2) << bad.output;
  EXPECT_TRUE(Contains(bad.output, "'mask.labels'")) << bad.output;
}

// Both colour variants: each depth shares a word with one of them, so the valid pixels decide (the
// opaque depth has more), and the colour follows the depth's word.
TEST(CliDoctorPatterns, ProposesTheCapturePatterns) {
  TempDir tmp;
  const fs::path data = tmp / "capture";
  make_capture(data);
  const auto r = run_in(tmp.path(), "doctor --input capture");
  EXPECT_EQ(r.exit_code, 1) << "the default patterns list no frame: " << r.output;
  EXPECT_TRUE(Contains(r.output, "patterns proposed for this folder: depth, mask, color, intrinsics (4 frames)"))
      << r.output;
  EXPECT_TRUE(Contains(r.output, "--set input.depth={id}-opaque-depth-img.exr")) << r.output;
  EXPECT_TRUE(Contains(r.output, "--set input.mask={id}-mask.png")) << r.output;
  EXPECT_TRUE(Contains(r.output, "--set input.color={id}-opaque-rgb-img.jpg")) << r.output;
  EXPECT_TRUE(
      Contains(r.output, "--set input.intrinsics=" + fs::canonical(data).generic_string() + "/camera_intrinsics.yaml"))
      << r.output;
  EXPECT_TRUE(Contains(r.output, "it has more valid (finite, non-zero) pixels: 94% against 50%")) << r.output;
  EXPECT_TRUE(Contains(r.output,
                       "or the other depth:\n                --set input.depth={id}-transparent-depth-img.exr --set "
                       "input.color={id}-transparent-rgb-img.jpg"))
      << r.output;
  EXPECT_TRUE(
      Contains(r.output,
               "also depth  {id}-transparent-depth-img.exr: 4 files (ids 000000080 to 000000083), 32-bit float, 3 "
               "channels, 64x48 (3 equal channels, read as one), 50% valid"))
      << r.output;
  EXPECT_TRUE(Contains(r.output, "with the proposed keys: 4 frames listed, 4 decoded and masked; every check passes"))
      << r.output;
}

// One colour variant: the depth sharing its word wins though the other has more valid pixels; the
// proposal written with --write-config runs as it is.
TEST(CliDoctorPatterns, PrefersTheDepthSharingTheColoursWordAndItsConfigRuns) {
  TempDir tmp;
  const fs::path data = tmp / "capture";
  make_capture(data, CaptureShape{false, 32});
  const auto r = run_in(tmp.path(), "doctor --input capture --write-config proposed.yaml");
  EXPECT_EQ(r.exit_code, 1) << r.output;
  EXPECT_TRUE(Contains(r.output, "--set input.depth={id}-transparent-depth-img.exr")) << r.output;
  EXPECT_TRUE(Contains(r.output, "--set input.color={id}-transparent-rgb-img.jpg")) << r.output;
  EXPECT_TRUE(Contains(r.output,
                       "depth: {id}-transparent-depth-img.exr rather than {id}-opaque-depth-img.exr: it shares the "
                       "word 'transparent' with the colour files {id}-transparent-rgb-img.jpg"))
      << r.output;
  EXPECT_TRUE(Contains(r.output, "--set input.depth={id}-opaque-depth-img.exr")) << "the alternative: " << r.output;
  const std::string yaml = slurp(tmp / "proposed.yaml");
  EXPECT_TRUE(Contains(yaml, "depth: \"{id}-transparent-depth-img.exr\"")) << yaml;
  EXPECT_TRUE(Contains(yaml, "layout: pattern")) << yaml;

  // From another folder: the config names everything by absolute path.
  fs::create_directories(tmp / "elsewhere");
  const auto run = run_in(tmp / "elsewhere", "run --config ../proposed.yaml --output out --backend cpu");
  ASSERT_EQ(run.exit_code, 0) << run.output;
  expect_masked_capture(tmp / "elsewhere" / "out", 32);
}

TEST(CliDoctorPatterns, FolderWithoutMasksSaysSoAndWhatItCanDo) {
  TempDir tmp;
  const fs::path data = tmp / "scan";
  make_no_mask(data);
  const auto r = run_in(tmp.path(), "doctor --input scan --write-config scan.yaml");
  EXPECT_EQ(r.exit_code, 1) << r.output;
  EXPECT_TRUE(Contains(r.output, "patterns proposed for this folder: depth, color, intrinsics (4 frames)")) << r.output;
  EXPECT_TRUE(Contains(r.output, "no mask group")) << r.output;
  EXPECT_TRUE(Contains(r.output, "a depth range only")) << r.output;
  EXPECT_TRUE(Contains(r.output, "--set input.depth=input-{id}.depth.png")) << r.output;
  EXPECT_TRUE(Contains(r.output, "--set input.mask=input-{id}.depth.png")) << r.output;
  EXPECT_TRUE(Contains(r.output, "--set input.color=input-{id}.color.png")) << r.output;
  EXPECT_TRUE(Contains(r.output, "intrinsics  camera-0.intrinsics.txt: 1 file, fx 60.5, fy 60.5, cx 32, cy 24"))
      << r.output;
  const auto run = run_in(tmp.path(), "run --config scan.yaml --output out --backend cpu --set depth.max=1.0");
  ASSERT_EQ(run.exit_code, 0) << run.output;
  const cv::Mat o = read_output(tmp / "out" / "0.tiff");
  ASSERT_FALSE(o.empty()) << run.output;
  EXPECT_FLOAT_EQ(o.at<float>(0, 10), 0.001f * (500 + 10 * 13)) << "within depth.max: kept";
  EXPECT_EQ(o.at<float>(47, 63), 0.0f) << "beyond depth.max (1.26 m): dropped";
}

}  // namespace
