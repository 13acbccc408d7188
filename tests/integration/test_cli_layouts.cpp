// End-to-end runs of `depthmask run` on folders in the public dataset layouts (fixtures written in a
// TempDir from the published format descriptions, and the real APC scene when present): the layout
// is detected and logged with its reason, and every output pixel is what the layout's scale and masks
// say it should be.
#include <gtest/gtest.h>

#include <opencv2/core.hpp>
#include <opencv2/imgcodecs.hpp>

#include <string>

#include "cli_helpers.h"
#include "layout_fixtures.h"
#include "test_support.h"

namespace {

namespace fs = std::filesystem;
using dmcli::contains;
using dmcli::Rule;
using dmtest::q;
using dmtest::run_depthmask;
using dmtest::TempDir;

dmtest::CmdResult run_layout(const fs::path& root, const fs::path& out, const std::string& extra = "") {
  return run_depthmask("run --input " + q(root) + " --output " + q(out) + " --backend cpu " + extra);
}

cv::Mat read16(const fs::path& p) { return cv::imread(p.string(), cv::IMREAD_UNCHANGED); }

// The output of one frame against the rule applied to its depth and mask files at `scale`.
void expect_frame(const fs::path& tiff, const fs::path& depth, const fs::path& mask, double scale) {
  SCOPED_TRACE(tiff.string());
  const cv::Mat got = dmcli::read_tiff(tiff);
  ASSERT_FALSE(got.empty()) << "no output " << tiff;
  ASSERT_EQ(got.type(), CV_32FC1);
  Rule rule;
  rule.scale = static_cast<float>(scale);
  const cv::Mat want = dmcli::expected_output(read16(depth), read16(mask), rule);
  std::string first;
  EXPECT_EQ(dmcli::count_differences(got, want, &first), 0u) << first;
  EXPECT_GT(cv::countNonZero(got), 0);
}

TEST(CliLayouts, BopUsesEachImagesDepthScaleAndVisibleMask) {
  TempDir tmp;
  const fs::path root = tmp / "scene";
  dmfix::write_bop(root);
  const auto r = run_layout(root, tmp / "out");
  SCOPED_TRACE(r.output);
  ASSERT_EQ(r.exit_code, 0);
  EXPECT_TRUE(contains(r.output, "layout bop (found scene_camera.json: BOP scene layout)"));
  EXPECT_TRUE(contains(r.output, "3 frame(s): 3 ok, 0 failed, 0 skipped"));
  for (int i = 0; i < 3; ++i) {
    const std::string id = dmfix::six(i);
    expect_frame(tmp / "out" / (id + ".tiff"), root / "depth" / (id + ".png"),
                 root / "mask_visib" / (id + "_000000.png"), dmfix::kBopScale[i] / 1000.0);
  }
  // Image 1 is 0.1 mm per unit: raw 876 at (1, 1) is 8.76 cm, not 87.6 cm.
  const cv::Mat t1 = dmcli::read_tiff(tmp / "out" / "000001.tiff");
  EXPECT_FLOAT_EQ(t1.at<float>(1, 1),
                  static_cast<float>(dmfix::depth16(1).at<uint16_t>(1, 1)) * static_cast<float>(0.0001));

  // The full masks instead of the visible ones.
  const auto r2 = run_layout(root, tmp / "out2", "--set input.bop_masks=mask");
  ASSERT_EQ(r2.exit_code, 0) << r2.output;
  expect_frame(tmp / "out2" / "000002.tiff", root / "depth" / "000002.png", root / "mask" / "000002_000000.png", 0.001);
}

TEST(CliLayouts, BopImageWithoutInstanceFailsNamingTheMaskItExpected) {
  TempDir tmp;
  const fs::path root = tmp / "scene";
  dmfix::write_bop(root);
  fs::remove(root / "mask_visib" / "000001_000000.png");
  const auto r = run_layout(root, tmp / "out");
  EXPECT_EQ(r.exit_code, 1) << r.output;
  EXPECT_TRUE(contains(r.output, "3 frame(s): 2 ok, 1 failed, 0 skipped")) << r.output;
  EXPECT_TRUE(contains(r.output, "000001_000000.png")) << r.output;
}

TEST(CliLayouts, BopMalformedSceneCameraIsAnInputError) {
  TempDir tmp;
  const fs::path root = tmp / "scene";
  dmfix::write_bop(root);
  dmtest::write_text(root / "scene_camera.json", "{\n  \"0\": {\"cam_K\": [1, 0, 2, 0, 1, 3, 0, 0, 1],\n}\n");
  const auto r = run_layout(root, tmp / "out");
  EXPECT_EQ(r.exit_code, 1) << r.output;
  EXPECT_TRUE(contains(r.output, "scene_camera.json' line 3")) << r.output;
  EXPECT_FALSE(fs::exists(tmp / "out" / "000000.tiff"));
}

TEST(CliLayouts, TumAssociatesDepthWithRgbAndUsesFactor5000) {
  TempDir tmp;
  const fs::path root = tmp / "rgbd_dataset_freiburg1_xyz";
  dmfix::write_tum(root);
  const auto r = run_layout(root, tmp / "out");
  SCOPED_TRACE(r.output);
  ASSERT_EQ(r.exit_code, 0);
  EXPECT_TRUE(contains(r.output, "layout tum (found rgb.txt and depth.txt: TUM RGB-D layout)"));
  EXPECT_TRUE(contains(r.output, "4 frame(s): 4 ok, 0 failed, 0 skipped"));
  EXPECT_TRUE(contains(r.output, "ignored 2 file(s) that belong to no depth frame"));
  for (const auto& f : dmfix::kTumFrames)
    expect_frame(tmp / "out" / (f.depth_ts + ".tiff"), root / "depth" / (f.depth_ts + ".png"),
                 root / "mask" / (f.rgb_ts + ".png"), 1.0 / 5000.0);
  // An explicit scale wins over the layout's, and the log says so.
  const auto r2 = run_layout(root, tmp / "out2", "--set depth.scale=mm");
  ASSERT_EQ(r2.exit_code, 0) << r2.output;
  EXPECT_TRUE(contains(r2.output,
                       "config key 'depth.scale' = 0.001 from the configuration replaces 0.0002, the default of "
                       "input.layout 'tum' (found rgb.txt and depth.txt: TUM RGB-D layout)"))
      << r2.output;
  const auto& f0 = dmfix::kTumFrames[0];
  expect_frame(tmp / "out2" / (f0.depth_ts + ".tiff"), root / "depth" / (f0.depth_ts + ".png"),
               root / "mask" / (f0.rgb_ts + ".png"), 0.001);
}

TEST(CliLayouts, TumOutOfOrderTimestampsAreAnInputError) {
  TempDir tmp;
  const fs::path root = tmp / "seq";
  dmfix::write_tum(root);
  dmtest::write_text(root / "rgb.txt", "# rgb\n2.0 rgb/a.png\n1.0 rgb/b.png\n");
  const auto r = run_layout(root, tmp / "out");
  EXPECT_EQ(r.exit_code, 1) << r.output;
  EXPECT_TRUE(contains(r.output, "rgb.txt' line 3: timestamp 1.0 is not after the one on line 2")) << r.output;
}

TEST(CliLayouts, SevenScenesMillimetresAnd65535IsNoMeasurement) {
  for (const std::string frames : {"", "rgbd-frames"}) {
    TempDir tmp;
    const fs::path root = tmp / "data";
    dmfix::write_seven_scenes(root, frames);
    const auto r = run_layout(root, tmp / "out");
    SCOPED_TRACE(r.output);
    ASSERT_EQ(r.exit_code, 0);
    EXPECT_TRUE(contains(r.output, "layout 7scenes (found camera-intrinsics.txt and " +
                                       (frames.empty() ? std::string() : frames + "/") + "frame-*.depth.png"));
    EXPECT_TRUE(contains(r.output, "3 frame(s): 3 ok, 0 failed, 0 skipped"));
    EXPECT_FALSE(contains(r.output, "belong to no depth frame"));  // pose files and the K file are the dataset's
    for (int i = 0; i < 3; ++i) {
      const fs::path dir = root / frames;
      const std::string n = "frame-" + dmfix::six(i);
      expect_frame(tmp / "out" / (dmfix::six(i) + ".tiff"), dir / (n + ".depth.png"), dir / (n + ".mask.png"), 0.001);
      const cv::Mat t = dmcli::read_tiff(tmp / "out" / (dmfix::six(i) + ".tiff"));
      EXPECT_EQ(t.at<float>(2, 2), 0.0f) << "65535 inside the mask is no measurement";
      EXPECT_GT(t.at<float>(2, 3), 0.0f);
    }
  }
}

TEST(CliLayouts, SevenScenesInvalidValueIsDroppedEvenInsideTheDepthRange) {
  // At depth.max 100 m the range alone would keep 65535 (65.5 m): the layout's invalid value drops it.
  TempDir tmp;
  const fs::path root = tmp / "data";
  dmfix::write_seven_scenes(root);
  const auto r = run_layout(root, tmp / "out", "--set depth.max=100");
  ASSERT_EQ(r.exit_code, 0) << r.output;
  const cv::Mat got = dmcli::read_tiff(tmp / "out" / "000000.tiff");
  ASSERT_FALSE(got.empty());
  EXPECT_EQ(got.at<float>(2, 2), 0.0f) << "65535 is 7-Scenes' no-measurement marker";
  EXPECT_GT(cv::countNonZero(got), 0);
}

TEST(CliLayouts, YcbInEoatRgbDepthMasksInMillimetres) {
  TempDir tmp;
  const fs::path root = tmp / "mustard0";
  dmfix::write_ycbineoat(root);
  const auto r = run_layout(root, tmp / "out");
  SCOPED_TRACE(r.output);
  ASSERT_EQ(r.exit_code, 0);
  EXPECT_TRUE(
      contains(r.output, "layout ycbineoat (found cam_K.txt, rgb/ and depth/: YCBInEOAT / FoundationPose layout)"));
  EXPECT_TRUE(contains(r.output, "3 frame(s): 3 ok, 0 failed, 0 skipped"));
  for (const auto& id : dmfix::kYcbIds)
    expect_frame(tmp / "out" / (id + ".tiff"), root / "depth" / (id + ".png"), root / "masks" / (id + ".png"), 0.001);
}

TEST(CliLayouts, ApcFixtureWithPlainEncodingSet) {
  // depth.encoding apc is the layout's default; with it set to plain the APC listing runs today.
  TempDir tmp;
  const fs::path root = tmp / "scene-0000";
  dmfix::write_apc(root);
  const auto r = run_layout(root, tmp / "out", "--set depth.encoding=plain");
  SCOPED_TRACE(r.output);
  ASSERT_EQ(r.exit_code, 0);
  EXPECT_TRUE(contains(r.output, "layout apc (found cam.info.txt and frame-*.depth.png: APC layout)"));
  EXPECT_TRUE(contains(r.output, "2 frame(s): 2 ok, 0 failed, 0 skipped"));
  for (int i = 0; i < 2; ++i) {
    const std::string n = "frame-" + dmfix::six(i);
    expect_frame(tmp / "out" / (dmfix::six(i) + ".tiff"), root / (n + ".depth.png"), root / "segm" / (n + ".segm.png"),
                 0.0001);
  }
}

TEST(CliLayouts, ApcRealSceneIsDetectedAndEitherDecodedOrRefused) {
  const fs::path scene = dmtest::shared_data_dir() / "apc-vision-toolbox" / "scene-0000";
  if (!fs::is_directory(scene)) GTEST_SKIP() << "real data not present: " << scene;
  TempDir tmp;
  const auto r = run_layout(scene, tmp / "out");
  SCOPED_TRACE(r.output);
  EXPECT_TRUE(contains(r.output, "layout apc (found cam.info.txt and frame-*.depth.png: APC layout)"));
  if (r.exit_code == 2) {
    // The APC encoding (bit-rotated words) belongs to another part of the work: until it lands, the
    // layout's encoding is refused, not ignored.
    EXPECT_TRUE(contains(r.output, "depth.encoding 'apc' is not supported yet"));
    EXPECT_FALSE(fs::exists(tmp / "out" / "000000.tiff"));
    return;
  }
  ASSERT_EQ(r.exit_code, 0);
  EXPECT_TRUE(contains(r.output, "8 frame(s): 8 ok, 0 failed, 0 skipped"));
  const cv::Mat t = dmcli::read_tiff(tmp / "out" / "000000.tiff");
  EXPECT_EQ(cv::countNonZero(t), 26485) << "README: depth>0 AND segm>0 has 26,485 px in frame-000000";
  double lo = 0, hi = 0;
  cv::minMaxLoc(t, &lo, &hi);
  EXPECT_LE(hi, 1.9) << "decoded APC depth stays below 1.9 m";
}

TEST(CliLayouts, InputObjectOutsideApcIsAConfigError) {
  TempDir tmp;
  const fs::path root = tmp / "scene";
  dmfix::write_bop(root);
  const auto r = run_layout(root, tmp / "out", "--set input.object=duck");
  EXPECT_EQ(r.exit_code, 2) << r.output;
  EXPECT_TRUE(contains(r.output, "'input.object' applies to input.layout 'apc' only")) << r.output;
}

}  // namespace

TEST(CliLayouts, PrintConfigShowsTheDetectedLayoutsDefaults) {
  TempDir tmp;
  const fs::path root = tmp / "scene";
  dmfix::write_apc(root);
  auto r = run_layout(root, tmp / "out", "--print-config");
  ASSERT_EQ(r.exit_code, 0) << r.output;
  EXPECT_TRUE(contains(r.output, "# input.layout apc: found cam.info.txt")) << r.output;
  EXPECT_TRUE(contains(r.output, "encoding: apc")) << r.output;
  EXPECT_TRUE(contains(r.output, "scale: 0.0001")) << r.output;
  EXPECT_TRUE(contains(r.output, "segm/frame-{id}.segm.png")) << r.output;
  // A key the user sets wins over the layout's default in the printed configuration too.
  r = run_layout(root, tmp / "out", "--print-config --set depth.scale=0.001");
  EXPECT_TRUE(contains(r.output, "scale: 0.001\n")) << r.output;
  // Without a readable input folder the configuration is printed as given, with the reason.
  r = run_depthmask("run --input " + q(tmp / "missing") + " --print-config");
  ASSERT_EQ(r.exit_code, 0) << r.output;
  EXPECT_TRUE(contains(r.output, "# input not resolved")) << r.output;
  EXPECT_TRUE(contains(r.output, "layout: auto")) << r.output;
}

TEST(CliLayouts, InfoReportsTheInputsLayoutWhenOneIsConfigured) {
  TempDir tmp;
  const fs::path root = tmp / "scene";
  dmfix::write_apc(root);
  const auto r = run_depthmask("info --set input.root=" + q(root));
  ASSERT_EQ(r.exit_code, 0) << r.output;
  EXPECT_TRUE(contains(r.output, "layout apc (found cam.info.txt")) << r.output;
  EXPECT_TRUE(contains(r.output, "frame(s)")) << r.output;
}
