// Unit tests of the dataset layouts (resolve_input): detection and its reason, each layout's frame
// list and defaults, explicit keys over layout defaults, and malformed index/camera files. Fixtures
// are written from the published format descriptions (layout_fixtures.h); the real APC scene of
// ../shared/data is used when present.
#include <gtest/gtest.h>

#include <algorithm>
#include <array>
#include <filesystem>
#include <string>
#include <vector>

#include "depthmask/config.h"
#include "depthmask/errors.h"
#include "depthmask/frame.h"
#include "depthmask/layouts.h"
#include "layout_fixtures.h"
#include "test_support.h"

namespace {

namespace fs = std::filesystem;
namespace dm = depthmask;
using dm::InputLayout;
using dmtest::Contains;
using dmtest::message_of;
using dmtest::TempDir;
using dmtest::write_text;

using dmfix::config_for;

dm::ResolvedInput resolve(const fs::path& root, const std::vector<std::string>& sets = {}) {
  return dm::resolve_input(config_for(root, sets));
}

std::vector<std::string> ids_of(const dm::ResolvedInput& r) {
  std::vector<std::string> ids;
  for (const auto& f : r.listing.frames) ids.push_back(f.id);
  return ids;
}

fs::path apc_scene() { return dmtest::shared_data_dir() / "apc-vision-toolbox" / "scene-0000"; }

// ---------------------------------------------------------------------------------------------------
// detection

TEST(LayoutDetection, EachLayoutIsDetectedWithItsReason) {
  struct Case {
    void (*write)(const fs::path&);
    InputLayout layout;
    const char* reason;
  };
  const Case cases[] = {
      {[](const fs::path& p) { dmfix::write_bop(p); }, InputLayout::Bop, "found scene_camera.json: BOP scene layout"},
      {[](const fs::path& p) { dmfix::write_tum(p); }, InputLayout::Tum,
       "found rgb.txt and depth.txt: TUM RGB-D layout"},
      {dmfix::write_apc, InputLayout::Apc, "found cam.info.txt and frame-*.depth.png: APC layout"},
      {[](const fs::path& p) { dmfix::write_seven_scenes(p); }, InputLayout::SevenScenes,
       "found camera-intrinsics.txt and frame-*.depth.png: 7-Scenes / tsdf-fusion layout"},
      {[](const fs::path& p) { dmfix::write_seven_scenes(p, "rgbd-frames"); }, InputLayout::SevenScenes,
       "found camera-intrinsics.txt and rgbd-frames/frame-*.depth.png: 7-Scenes / tsdf-fusion layout"},
      {dmfix::write_ycbineoat, InputLayout::YcbInEOAT,
       "found cam_K.txt, rgb/ and depth/: YCBInEOAT / FoundationPose layout"},
  };
  for (const Case& c : cases) {
    TempDir tmp;
    c.write(tmp.path());
    const dm::LayoutGuess g = dm::detect_layout(tmp.path());
    EXPECT_EQ(g.layout, c.layout) << c.reason;
    EXPECT_EQ(g.reason, c.reason);
    const dm::ResolvedInput r = resolve(tmp.path());
    EXPECT_EQ(r.layout, c.layout) << c.reason;
    EXPECT_EQ(r.config.input.layout, c.layout);
    EXPECT_EQ(r.reason, c.reason);
    EXPECT_FALSE(r.listing.frames.empty());
  }
}

TEST(LayoutDetection, TheCommittedSampleIsThePatternLayout) {
  const dm::Config c = dm::load_config(dmtest::sample_dir() / "depthmask.yaml", {}, fs::temp_directory_path());
  const dm::ResolvedInput r = dm::resolve_input(c);
  EXPECT_EQ(r.layout, InputLayout::Pattern);
  EXPECT_TRUE(Contains(r.reason, "no dataset marker"));
  EXPECT_TRUE(Contains(r.reason, "patterns"));
  ASSERT_EQ(r.listing.frames.size(), 8u);
  EXPECT_EQ(r.listing.frames[3].relative, fs::path("depth/000003.png"));
  EXPECT_EQ(r.config.depth.scale, c.depth.scale);
  EXPECT_FALSE(r.geometry);
}

TEST(LayoutDetection, AnExplicitLayoutSkipsDetection) {
  TempDir tmp;
  dmfix::write_tum(tmp.path());
  dmfix::write_bop(tmp.path());  // scene_camera.json would win detection
  EXPECT_EQ(resolve(tmp.path()).layout, InputLayout::Bop);
  const dm::ResolvedInput r = resolve(tmp.path(), {"input.layout=tum"});
  EXPECT_EQ(r.layout, InputLayout::Tum);
  EXPECT_EQ(r.reason, "set by input.layout");
  EXPECT_EQ(r.listing.frames.size(), dmfix::kTumFrames.size());
}

TEST(LayoutDetection, AnExplicitLayoutStillValidatesTheFolder) {
  TempDir tmp;
  dmfix::write_ycbineoat(tmp.path());
  std::string msg = message_of<dm::InputError>([&] { resolve(tmp.path(), {"input.layout=bop"}); });
  EXPECT_TRUE(Contains(msg, "no scene_camera.json"));
  EXPECT_TRUE(Contains(msg, "input.layout 'bop' (set by input.layout)"));
  msg = message_of<dm::InputError>([&] { resolve(tmp.path(), {"input.layout=tum"}); });
  EXPECT_TRUE(Contains(msg, "no depth.txt"));
  msg = message_of<dm::InputError>([&] { resolve(tmp.path(), {"input.layout=apc"}); });
  EXPECT_TRUE(Contains(msg, "no cam.info.txt"));
  msg = message_of<dm::InputError>([&] { resolve(tmp.path(), {"input.layout=7scenes"}); });
  EXPECT_TRUE(Contains(msg, "no frame-*.depth.png"));
  TempDir empty;
  msg = message_of<dm::InputError>([&] { resolve(empty.path(), {"input.layout=ycbineoat"}); });
  EXPECT_TRUE(Contains(msg, "no depth/ folder"));
  msg = message_of<dm::InputError>([&] { resolve(empty.path() / "nope"); });
  EXPECT_TRUE(Contains(msg, "does not exist"));
}

TEST(LayoutDetection, SettingsOfOtherLayoutsAreRefused) {
  TempDir tmp;
  dmfix::write_tum(tmp.path());
  std::string msg = message_of<dm::ConfigError>([&] { resolve(tmp.path(), {"input.object=duck"}); });
  EXPECT_TRUE(Contains(msg, "'input.object' applies to input.layout 'apc' only"));
  EXPECT_TRUE(Contains(msg, "input.layout 'tum' (found rgb.txt and depth.txt"));
  msg = message_of<dm::ConfigError>([&] { resolve(tmp.path(), {"input.depth=d/{id}.png"}); });
  EXPECT_TRUE(Contains(msg, "'input.depth' does not apply to input.layout 'tum'"));
  TempDir bop;
  dmfix::write_bop(bop.path());
  msg = message_of<dm::ConfigError>([&] { resolve(bop.path(), {"input.color=c/{id}.png"}); });
  EXPECT_TRUE(Contains(msg, "'input.color' does not apply to input.layout 'bop'"));
}

// ---------------------------------------------------------------------------------------------------
// bop

TEST(BopLayout, FramesCarryTheirOwnKDepthScaleAndInstances) {
  TempDir tmp;
  dmfix::write_bop(tmp.path(), /*extra_instance=*/true);
  dmtest::write_text(tmp / "mask_visib" / "000042_000000.png", "a mask of an image scene_camera.json lacks");
  const dm::ResolvedInput r = resolve(tmp.path());
  ASSERT_EQ(ids_of(r), (std::vector<std::string>{"000000", "000001", "000002"}));
  for (size_t i = 0; i < 3; ++i) {
    const dm::FrameEntry& f = r.listing.frames[i];
    SCOPED_TRACE(f.id);
    EXPECT_EQ(f.index, i);
    EXPECT_EQ(f.depth, tmp / "depth" / (f.id + ".png"));
    EXPECT_EQ(f.relative, fs::path("depth") / (f.id + ".png"));
    EXPECT_EQ(f.color, tmp / "rgb" / (f.id + (i == 1 ? ".jpg" : ".png")));
    ASSERT_TRUE(f.depth_scale);
    EXPECT_DOUBLE_EQ(*f.depth_scale, dmfix::kBopScale[i] / 1000.0);
    ASSERT_TRUE(f.intrinsics);
    ASSERT_FALSE(f.instances.empty());
    EXPECT_EQ(f.instances.front().first, "000000");
    EXPECT_EQ(f.mask, f.instances.front().second);
    EXPECT_EQ(f.mask, tmp / "mask_visib" / (f.id + "_000000.png"));
  }
  EXPECT_DOUBLE_EQ(r.listing.frames[0].intrinsics->fx, 572.4114);
  EXPECT_DOUBLE_EQ(r.listing.frames[0].intrinsics->fy, 573.57043);
  EXPECT_DOUBLE_EQ(r.listing.frames[0].intrinsics->cx, 325.2611);
  EXPECT_DOUBLE_EQ(r.listing.frames[2].intrinsics->cy, 250.5);
  ASSERT_EQ(r.listing.frames[0].instances.size(), 2u);
  EXPECT_EQ(r.listing.frames[0].instances[1].first, "000001");
  EXPECT_EQ(r.listing.frames[0].instances[1].second, tmp / "mask_visib" / "000000_000001.png");
  EXPECT_EQ(r.listing.unmatched_files, 1u);       // the instance of image 42
  EXPECT_DOUBLE_EQ(r.config.depth.scale, 0.001);  // the first image's, for display
  // The helpers pick the frame's own values over the configuration's.
  EXPECT_DOUBLE_EQ(dm::frame_depth_scale(r.config, r.listing.frames[1]), 0.0001);
  EXPECT_DOUBLE_EQ(dm::frame_intrinsics(r.config, r.listing.frames[2])->fx, 600.0);
}

TEST(BopLayout, MaskFolderAndPatternChoices) {
  TempDir tmp;
  dmfix::write_bop(tmp.path());
  dm::ResolvedInput r = resolve(tmp.path(), {"input.bop_masks=mask"});
  EXPECT_EQ(r.listing.frames[1].mask, tmp / "mask" / "000001_000000.png");
  r = resolve(tmp.path(), {"input.mask=segmentation/{id}.png"});
  EXPECT_EQ(r.listing.frames[1].mask, tmp / "segmentation" / "000001.png");
  EXPECT_TRUE(r.listing.frames[1].instances.empty());
  fs::remove_all(tmp / "mask_visib");
  const std::string msg = message_of<dm::InputError>([&] { resolve(tmp.path()); });
  EXPECT_TRUE(Contains(msg, "no mask_visib/ folder"));
}

TEST(BopLayout, GrayImagesAndImagesWithoutInstances) {
  TempDir tmp;
  dmfix::write_bop(tmp.path());
  fs::rename(tmp / "rgb", tmp / "gray");
  fs::remove(tmp / "mask_visib" / "000002_000000.png");
  const dm::ResolvedInput r = resolve(tmp.path());
  EXPECT_EQ(r.listing.frames[0].color, tmp / "gray" / "000000.png");
  EXPECT_TRUE(r.listing.frames[2].instances.empty());
  EXPECT_EQ(r.listing.frames[2].mask, tmp / "mask_visib" / "000002_000000.png");  // fails at load, naming it
}

TEST(BopLayout, ExplicitScaleAndIntrinsicsOverrideThePerImageValues) {
  TempDir tmp;
  dmfix::write_bop(tmp.path());
  const dm::ResolvedInput r =
      resolve(tmp.path(), {"depth.scale=0.0005", "input.intrinsics={fx: 1, fy: 2, cx: 3, cy: 4}"});
  for (const auto& f : r.listing.frames) {
    EXPECT_FALSE(f.depth_scale);
    EXPECT_FALSE(f.intrinsics);
    EXPECT_DOUBLE_EQ(dm::frame_depth_scale(r.config, f), 0.0005);
    EXPECT_DOUBLE_EQ(dm::frame_intrinsics(r.config, f)->fy, 2.0);
  }
  EXPECT_DOUBLE_EQ(r.config.depth.scale, 0.0005);
}

TEST(BopLayout, MaskParamsUseTheFramesDepthScale) {
  TempDir tmp;
  dmfix::write_bop(tmp.path());
  const dm::ResolvedInput r = resolve(tmp.path(), {"depth.max=1.5"});
  const dm::MaskParams p1 = dm::mask_params(r.config, r.listing.frames[1]);  // 0.1 mm per unit
  EXPECT_EQ(p1.scale, static_cast<float>(0.0001));
  EXPECT_EQ(p1.raw_max, 15000u);
  const dm::MaskParams p0 = dm::mask_params(r.config, r.listing.frames[0]);  // 1 mm per unit
  EXPECT_EQ(p0.scale, 0.001f);
  EXPECT_EQ(p0.raw_max, 1500u);
  dm::FrameEntry plain;
  EXPECT_EQ(dm::mask_params(r.config, plain).scale, dm::mask_params(r.config).scale);
}

// scene_camera.json variants that must be refused with the file and the line.
void expect_bad_scene_camera(const std::string& json, const std::vector<std::string>& parts) {
  TempDir tmp;
  dmfix::write_bop(tmp.path());
  write_text(tmp / "scene_camera.json", json);
  const std::string msg = message_of<dm::InputError>([&] { resolve(tmp.path()); });
  EXPECT_TRUE(Contains(msg, (tmp / "scene_camera.json").string()));
  for (const auto& p : parts) EXPECT_TRUE(Contains(msg, p)) << json;
}

TEST(BopLayout, MalformedSceneCameraNamesFileAndLine) {
  const std::string k = "[500, 0, 320, 0, 500, 240, 0, 0, 1]";
  // JSON syntax: the line, column and byte of the error.
  expect_bad_scene_camera("{\n  \"0\": {\"cam_K\": " + k + ", \"depth_scale\": 1.0},\n  \"1\": {\"cam_K\": " + k +
                              " \"depth_scale\": 1.0}\n}\n",
                          {"line 3, column", "(byte ", "invalid JSON"});
  expect_bad_scene_camera("{\"0\": {\"cam_K\": " + k + ", \"depth_scale\": 1.0}", {"line 1", "invalid JSON"});
  expect_bad_scene_camera("", {"line 1", "invalid JSON"});
  expect_bad_scene_camera("{\n\"0\": {\"cam_K\": [1e400, 0, 320, 0, 500, 240, 0, 0, 1], \"depth_scale\": 1.0}}",
                          {"line 2", "invalid JSON: number overflow parsing '1e400'"});
  // Missing keys.
  expect_bad_scene_camera(
      "{\n  \"0\": {\"cam_K\": " + k + ", \"depth_scale\": 1.0},\n  \"1\": {\"depth_scale\": 1.0}\n}\n",
      {"line 3", "image 1 has no 'cam_K'"});
  expect_bad_scene_camera("{\n  \"0\": {\n    \"cam_K\": " + k + "\n  }\n}\n",
                          {"line 2", "image 0 has no 'depth_scale'"});
  // Non-numeric or short K, bad scale, bad ids, not an object.
  expect_bad_scene_camera(
      "{\n  \"0\": {\n    \"depth_scale\": 1.0,\n    \"cam_K\": [500, 0, \"320\", 0, 500, 240, 0, 0, 1]\n  }\n}\n",
      {"line 4", "element 3 of 'cam_K' of image 0 is \"320\", not a number"});
  expect_bad_scene_camera("{\"0\": {\"cam_K\": [500, 0, 320], \"depth_scale\": 1.0}}",
                          {"line 1", "expected 9 numbers"});
  expect_bad_scene_camera("{\"0\": {\"cam_K\": [0, 0, 320, 0, 500, 240, 0, 0, 1], \"depth_scale\": 1.0}}",
                          {"line 1", "not a pinhole K"});
  expect_bad_scene_camera("{\"0\": {\"cam_K\": " + k + ",\n \"depth_scale\": \"mm\"}}",
                          {"line 2", "'depth_scale' of image 0 is \"mm\"; expected a positive number"});
  expect_bad_scene_camera("{\"0\": {\"cam_K\": " + k + ", \"depth_scale\": 1.0},\n\"first\": {}}",
                          {"line 2", "key 'first' is not an image id"});
  expect_bad_scene_camera("[1, 2]", {"line 1", "expected an object mapping image ids to cameras"});
  expect_bad_scene_camera("{}", {"lists no images"});
}

TEST(BopLayout, AMissingDepthScaleIsFineWhenTheUserSetsOne) {
  TempDir tmp;
  dmfix::write_bop(tmp.path());
  write_text(tmp / "scene_camera.json", "{\"0\": {\"cam_K\": [500, 0, 320, 0, 500, 240, 0, 0, 1]}}");
  const dm::ResolvedInput r = resolve(tmp.path(), {"depth.scale=mm"});
  ASSERT_EQ(r.listing.frames.size(), 1u);
  EXPECT_FALSE(r.listing.frames[0].depth_scale);
  EXPECT_EQ(r.listing.unmatched_files, 6u);  // depth, rgb and masks of images 1 and 2
}

// ---------------------------------------------------------------------------------------------------
// tum

TEST(TumLayout, DepthIsAssociatedWithTheNearestRgbAndMasksAreNamedLikeRgb) {
  TempDir tmp;
  dmfix::write_tum(tmp.path());
  const dm::ResolvedInput r = resolve(tmp.path());
  ASSERT_EQ(r.listing.frames.size(), dmfix::kTumFrames.size());
  for (size_t i = 0; i < r.listing.frames.size(); ++i) {
    const dm::FrameEntry& f = r.listing.frames[i];
    const auto& want = dmfix::kTumFrames[i];
    EXPECT_EQ(f.id, want.depth_ts);
    EXPECT_EQ(f.depth, tmp / "depth" / (want.depth_ts + ".png"));
    EXPECT_EQ(f.relative, fs::path("depth") / (want.depth_ts + ".png"));
    EXPECT_EQ(f.color, tmp / "rgb" / (want.rgb_ts + ".png"));
    EXPECT_EQ(f.mask, tmp / "mask" / (want.rgb_ts + ".png"));
    EXPECT_DOUBLE_EQ(f.timestamp, std::stod(want.depth_ts));
  }
  // The depth image at .9 s and the rgb image at .5 s have no partner within 20 ms.
  EXPECT_EQ(r.listing.unmatched_files, 2u);
  EXPECT_DOUBLE_EQ(r.config.depth.scale, 1.0 / 5000.0);
  EXPECT_EQ(r.config.depth.encoding, dm::DepthEncoding::Plain);
}

TEST(TumLayout, MaxTimeDiffAndExplicitScale) {
  TempDir tmp;
  dmfix::write_tum(tmp.path());
  // Within 0.5 s the .9 s depth finds the .5 s rgb image.
  dm::ResolvedInput r = resolve(tmp.path(), {"input.max_time_diff=0.5", "depth.scale=0.001"});
  ASSERT_EQ(r.listing.frames.size(), dmfix::kTumFrames.size() + 1);
  EXPECT_EQ(r.listing.frames.back().color, tmp / "rgb" / "1305031102.500000.png");
  EXPECT_EQ(r.listing.unmatched_files, 0u);
  EXPECT_DOUBLE_EQ(r.config.depth.scale, 0.001);
  // Within 4 ms nothing pairs (rgb is 5 ms after depth).
  const std::string msg = message_of<dm::InputError>([&] { resolve(tmp.path(), {"input.max_time_diff=0.004"}); });
  EXPECT_TRUE(Contains(msg, "no depth image of"));
  EXPECT_TRUE(Contains(msg, "within input.max_time_diff"));
}

TEST(TumLayout, ClosestPairsFirstAndEachRgbImageOnce) {
  // As TUM's associate.py: the closest pairs go first (d .2629-r .2753, a .1604-r .1753,
  // c .2267-r .2112), so b .1943 is left without an rgb image although two are within 20 ms of it.
  TempDir tmp;
  write_text(tmp / "depth.txt",
             "1.160407 depth/a.png\n1.194330 depth/b.png\n1.226738 depth/c.png\n1.262886 depth/d.png\n");
  write_text(tmp / "rgb.txt", "1.175304 rgb/1.png\n1.211214 rgb/2.png\n1.243361 rgb/3.png\n1.275326 rgb/4.png\n");
  const dm::ResolvedInput r = resolve(tmp.path());
  ASSERT_EQ(ids_of(r), (std::vector<std::string>{"a", "c", "d"}));
  EXPECT_TRUE(r.listing.frames[0].color.empty());  // rgb/1.png does not exist: no color
  EXPECT_EQ(r.listing.frames[0].mask, tmp / "mask" / "1.png");
  EXPECT_EQ(r.listing.frames[1].mask, tmp / "mask" / "2.png");
  EXPECT_EQ(r.listing.frames[2].mask, tmp / "mask" / "4.png");
  EXPECT_EQ(r.listing.unmatched_files, 2u);  // depth b, rgb 3
}

TEST(TumLayout, AMaskListIsAssociatedByTimestamp) {
  TempDir tmp;
  dmfix::write_tum(tmp.path(), /*masks=*/false);
  // Masks of frames 0, 1 and 3, at their rgb timestamps (+1 ms), in a folder of their own.
  const auto& f = dmfix::kTumFrames;
  write_text(tmp / "mask.txt", "# masks\n" + f[0].rgb_ts + " seg/a.png\n" + f[1].rgb_ts + " seg/b.png\n" +
                                   "1305031102.205000 seg/d.png\n");
  const dm::ResolvedInput r = resolve(tmp.path());
  ASSERT_EQ(ids_of(r), (std::vector<std::string>{f[0].depth_ts, f[1].depth_ts, f[3].depth_ts}));
  EXPECT_EQ(r.listing.frames[0].mask, tmp / "seg" / "a.png");
  EXPECT_EQ(r.listing.frames[2].mask, tmp / "seg" / "d.png");
  EXPECT_EQ(r.listing.unmatched_files, 4u);  // frame 2's depth and rgb, the .9 s depth, the .5 s rgb
  // An explicit pattern wins over mask.txt ({id} is the depth file's stem).
  const dm::ResolvedInput p = resolve(tmp.path(), {"input.mask=masks/{id}.png"});
  ASSERT_EQ(p.listing.frames.size(), 4u);
  EXPECT_EQ(p.listing.frames[2].mask, tmp / "masks" / (f[2].depth_ts + ".png"));
}

// A TUM list that must be refused with the file and the line.
void expect_bad_tum(const std::string& file, const std::string& text, const std::vector<std::string>& parts) {
  TempDir tmp;
  dmfix::write_tum(tmp.path());
  write_text(tmp / file, text);
  const std::string msg = message_of<dm::InputError>([&] { resolve(tmp.path()); });
  EXPECT_TRUE(Contains(msg, (tmp / file).string()));
  for (const auto& p : parts) EXPECT_TRUE(Contains(msg, p)) << text;
}

TEST(TumLayout, MalformedListsNameFileAndLine) {
  const std::string head = "# depth maps\n# timestamp filename\n";
  expect_bad_tum("depth.txt", head + "1305031102.2 depth/a.png\n1305031102.1 depth/b.png\n",
                 {"line 4", "timestamp 1305031102.1 is not after the one on line 3", "increasing"});
  expect_bad_tum("depth.txt", head + "1.0 depth/a.png\n1.0 depth/b.png\n", {"line 4", "not after"});
  expect_bad_tum("rgb.txt", head + "1.0 rgb/a.png\nabc rgb/b.png\n", {"line 4", "timestamp 'abc' is not a number"});
  expect_bad_tum("rgb.txt", head + "1.0x rgb/a.png\n", {"line 3", "'1.0x' is not a number"});
  expect_bad_tum("depth.txt", head + "1.0\n", {"line 3", "expected 'timestamp filename'"});
  expect_bad_tum("depth.txt", head + "1.0 depth/a.png extra\n", {"line 3", "expected 'timestamp filename'"});
  expect_bad_tum("depth.txt", head, {"lists no images"});
  expect_bad_tum("mask.txt", "1.0 m/a.png\n0.5 m/b.png\n", {"line 2", "not after"});
}

TEST(TumLayout, CrlfListsAreRead) {
  TempDir tmp;
  dmfix::write_tum(tmp.path());
  write_text(tmp / "depth.txt",
             "# depth\r\n" + dmfix::kTumFrames[0].depth_ts + " depth/" + dmfix::kTumFrames[0].depth_ts + ".png\r\n");
  const dm::ResolvedInput r = resolve(tmp.path());
  ASSERT_EQ(r.listing.frames.size(), 1u);
  EXPECT_EQ(r.listing.frames[0].depth, tmp / "depth" / (dmfix::kTumFrames[0].depth_ts + ".png"));
}

// ---------------------------------------------------------------------------------------------------
// 7scenes

TEST(SevenScenesLayout, MillimetresWith65535InvalidAndTheIntrinsicsFile) {
  for (const std::string frames : {"", "rgbd-frames"}) {
    TempDir tmp;
    dmfix::write_seven_scenes(tmp.path(), frames);
    const dm::ResolvedInput r = resolve(tmp.path());
    SCOPED_TRACE(frames);
    ASSERT_EQ(ids_of(r), (std::vector<std::string>{"000000", "000001", "000002"}));
    const fs::path dir = frames.empty() ? tmp.path() : tmp / frames;
    const dm::FrameEntry& f = r.listing.frames[1];
    EXPECT_EQ(f.depth, dir / "frame-000001.depth.png");
    EXPECT_EQ(f.color, dir / "frame-000001.color.png");
    EXPECT_EQ(f.mask, dir / "frame-000001.mask.png");
    EXPECT_EQ(f.relative,
              frames.empty() ? fs::path("frame-000001.depth.png") : fs::path(frames) / "frame-000001.depth.png");
    EXPECT_DOUBLE_EQ(r.config.depth.scale, 0.001);
    EXPECT_EQ(r.config.depth.invalid_values, (std::vector<uint32_t>{65535}));
    ASSERT_TRUE(r.config.input.intrinsics);
    EXPECT_DOUBLE_EQ(r.config.input.intrinsics->fx, 585);
    EXPECT_DOUBLE_EQ(r.config.input.intrinsics->cy, 240);
    EXPECT_EQ(r.config.input.intrinsics_file, tmp / "camera-intrinsics.txt");
    EXPECT_EQ(r.listing.unmatched_files, 0u);  // pose files and camera-intrinsics.txt belong to the dataset
  }
}

TEST(SevenScenesLayout, ExplicitKeysOverrideTheDefaults) {
  TempDir tmp;
  dmfix::write_seven_scenes(tmp.path());
  const dm::ResolvedInput r =
      resolve(tmp.path(), {"depth.scale=0.0001", "depth.invalid_values=[]", "input.mask=seg/{id}.png",
                           "input.intrinsics={fx: 1, fy: 1, cx: 0, cy: 0}"});
  EXPECT_DOUBLE_EQ(r.config.depth.scale, 0.0001);
  EXPECT_TRUE(r.config.depth.invalid_values.empty());
  EXPECT_EQ(r.listing.frames[0].mask, tmp / "seg" / "000000.png");
  EXPECT_DOUBLE_EQ(r.config.input.intrinsics->fx, 1);
  EXPECT_TRUE(r.config.input.intrinsics_file.empty());
  EXPECT_EQ(r.listing.unmatched_files, 3u);  // the mask files nobody reads now
}

TEST(SevenScenesLayout, MalformedIntrinsicsNameFileAndLine) {
  TempDir tmp;
  dmfix::write_seven_scenes(tmp.path());
  write_text(tmp / "camera-intrinsics.txt", "585 0 320\n0 five 240\n0 0 1\n");
  const std::string msg = message_of<dm::InputError>([&] { resolve(tmp.path()); });
  EXPECT_TRUE(Contains(msg, (tmp / "camera-intrinsics.txt").string()));
  EXPECT_TRUE(Contains(msg, "line 2"));
  EXPECT_TRUE(Contains(msg, "'five' is not a number"));
}

TEST(SevenScenesLayout, AnExplicitLayoutWithoutIntrinsicsFileListsFramesWithoutIntrinsics) {
  TempDir tmp;
  dmfix::write_seven_scenes(tmp.path());
  fs::remove(tmp / "camera-intrinsics.txt");
  EXPECT_EQ(dm::detect_layout(tmp.path()).layout, InputLayout::Pattern);  // no marker: not detected
  const dm::ResolvedInput r = resolve(tmp.path(), {"input.layout=7scenes"});
  EXPECT_EQ(r.listing.frames.size(), 3u);
  EXPECT_FALSE(r.config.input.intrinsics);
}

// ---------------------------------------------------------------------------------------------------
// ycbineoat

TEST(YcbInEoatLayout, RgbDepthMasksAndCamK) {
  TempDir tmp;
  dmfix::write_ycbineoat(tmp.path());
  const dm::ResolvedInput r = resolve(tmp.path());
  ASSERT_EQ(ids_of(r), dmfix::kYcbIds);
  const dm::FrameEntry& f = r.listing.frames[2];
  EXPECT_EQ(f.depth, tmp / "depth" / (dmfix::kYcbIds[2] + ".png"));
  EXPECT_EQ(f.color, tmp / "rgb" / (dmfix::kYcbIds[2] + ".png"));
  EXPECT_EQ(f.mask, tmp / "masks" / (dmfix::kYcbIds[2] + ".png"));
  EXPECT_EQ(f.relative, fs::path("depth") / (dmfix::kYcbIds[2] + ".png"));
  EXPECT_DOUBLE_EQ(r.config.depth.scale, 0.001);
  ASSERT_TRUE(r.config.input.intrinsics);
  EXPECT_DOUBLE_EQ(r.config.input.intrinsics->fx, 319.582000732421875);
  EXPECT_DOUBLE_EQ(r.config.input.intrinsics->cy, 244.3486680871046701);
  EXPECT_EQ(r.listing.unmatched_files, 0u);
}

TEST(YcbInEoatLayout, MalformedCamKNamesFileAndLine) {
  TempDir tmp;
  dmfix::write_ycbineoat(tmp.path());
  write_text(tmp / "cam_K.txt", "319.5 0 320\n0 417.1 244.3\n0 0 one\n");
  std::string msg = message_of<dm::InputError>([&] { resolve(tmp.path()); });
  EXPECT_TRUE(Contains(msg, (tmp / "cam_K.txt").string()));
  EXPECT_TRUE(Contains(msg, "line 3"));
  write_text(tmp / "cam_K.txt", "319.5 0 320\n0 417.1 244.3\n");
  msg = message_of<dm::InputError>([&] { resolve(tmp.path()); });
  EXPECT_TRUE(Contains(msg, "expected 9 numbers"));
}

// ---------------------------------------------------------------------------------------------------
// apc (a small fixture, and the real scene when present)

TEST(ApcLayout, FixtureDefaultsAndObjectMasks) {
  TempDir tmp;
  dmfix::write_apc(tmp.path());
  dm::ResolvedInput r = resolve(tmp.path());
  ASSERT_EQ(ids_of(r), (std::vector<std::string>{"000000", "000001"}));
  EXPECT_EQ(r.listing.frames[1].mask, tmp / "segm" / "frame-000001.segm.png");
  EXPECT_EQ(r.listing.frames[1].color, tmp / "frame-000001.color.png");
  EXPECT_EQ(r.config.depth.encoding, dm::DepthEncoding::Apc);
  EXPECT_DOUBLE_EQ(r.config.depth.scale, 0.0001);
  EXPECT_FALSE(r.config.mask.threshold_fraction);
  ASSERT_TRUE(r.geometry);
  EXPECT_DOUBLE_EQ(r.geometry->depth.fx, 477);
  EXPECT_DOUBLE_EQ(r.config.input.intrinsics->fx, 615);  // color K: the depth is aligned to color
  EXPECT_EQ(r.listing.unmatched_files, 0u);

  r = resolve(tmp.path(), {"input.object=duck"});
  EXPECT_EQ(r.listing.frames[0].mask, tmp / "masks" / "frame-000000.duck.mask.png");
  ASSERT_TRUE(r.config.mask.threshold_fraction);
  EXPECT_DOUBLE_EQ(*r.config.mask.threshold_fraction, 0.30941);
  EXPECT_EQ(r.listing.unmatched_files, 0u);  // the book's maps and the thresholds are the dataset's
  r = resolve(tmp.path(), {"input.object=duck", "mask.threshold_fraction=0.9"});
  EXPECT_DOUBLE_EQ(*r.config.mask.threshold_fraction, 0.9);

  std::string msg = message_of<dm::InputError>([&] { resolve(tmp.path(), {"input.object=cat"}); });
  EXPECT_TRUE(Contains(msg, "no masks/frame-*.cat.mask.png"));
  EXPECT_TRUE(Contains(msg, "objects with masks here: book, duck"));
  write_text(tmp / "masks" / "duck.thresh.txt", "# threshold\n0.3x\n");
  msg = message_of<dm::InputError>([&] { resolve(tmp.path(), {"input.object=duck"}); });
  EXPECT_TRUE(Contains(msg, (tmp / "masks" / "duck.thresh.txt").string()));
  EXPECT_TRUE(Contains(msg, "line 2"));
  fs::remove(tmp / "masks" / "duck.thresh.txt");
  msg = message_of<dm::InputError>([&] { resolve(tmp.path(), {"input.object=duck"}); });
  EXPECT_TRUE(Contains(msg, "duck.thresh.txt"));
}

TEST(ApcLayout, RawDepthAndExplicitEncoding) {
  TempDir tmp;
  dmfix::write_apc(tmp.path());
  const dm::ResolvedInput r =
      resolve(tmp.path(), {"input.depth=raw/frame-{id}.depth.png", "depth.encoding=plain", "depth.scale=mm"});
  ASSERT_EQ(r.listing.frames.size(), 2u);
  EXPECT_EQ(r.listing.frames[0].depth, tmp / "raw" / "frame-000000.depth.png");
  EXPECT_EQ(r.listing.frames[0].relative, fs::path("raw/frame-000000.depth.png"));
  EXPECT_EQ(r.config.depth.encoding, dm::DepthEncoding::Plain);
  EXPECT_DOUBLE_EQ(r.config.depth.scale, 0.001);
  EXPECT_EQ(r.listing.unmatched_files, 0u);  // the aligned depth is the other stream, not a stray
}

TEST(ApcLayout, DepthDistortionJoinsTheGeometryAndNeedsOne) {
  TempDir tmp;
  dmfix::write_apc(tmp.path());
  const std::vector<std::string> distortion = {
      "registration.depth_distortion={model: inverse_brown_conrady, "
      "coeffs: [0.14, 0.12, 0.0044, 0.0056, -0.078]}"};
  std::vector<std::string> sets = distortion;
  sets.push_back("input.depth=raw/frame-{id}.depth.png");
  const dm::ResolvedInput r = resolve(tmp.path(), sets);
  ASSERT_TRUE(r.geometry);
  EXPECT_TRUE(r.depth_from_depth_camera);
  EXPECT_EQ(r.geometry->depth_distortion.model, dm::DistortionModel::InverseBrownConrady);
  EXPECT_EQ(r.geometry->depth_distortion.coeffs, (std::array<double, 5>{0.14, 0.12, 0.0044, 0.0056, -0.078}));
  // Without it the geometry has none (cam.info.txt records no distortion).
  const dm::ResolvedInput plain = resolve(tmp.path(), {"input.depth=raw/frame-{id}.depth.png"});
  ASSERT_TRUE(plain.geometry);
  EXPECT_EQ(plain.geometry->depth_distortion.model, dm::DistortionModel::None);
  // A layout without a camera geometry refuses it.
  TempDir tum;
  dmfix::write_tum(tum.path());
  const std::string msg = message_of<dm::ConfigError>([&] { resolve(tum.path(), distortion); });
  EXPECT_TRUE(Contains(msg, "registration.depth_distortion"));
  EXPECT_TRUE(Contains(msg, "provides no camera geometry"));
}

TEST(ApcLayout, TheRealSceneWhenPresent) {
  const fs::path scene = apc_scene();
  if (!fs::is_directory(scene)) GTEST_SKIP() << "real data not present: " << scene;
  const dm::ResolvedInput r = resolve(scene);
  EXPECT_EQ(r.layout, InputLayout::Apc);
  EXPECT_EQ(r.reason, "found cam.info.txt and frame-*.depth.png: APC layout");
  ASSERT_EQ(r.listing.frames.size(), 8u);
  for (size_t i = 0; i < 8; ++i) {
    const dm::FrameEntry& f = r.listing.frames[i];
    EXPECT_EQ(f.id, "00000" + std::to_string(i));
    EXPECT_EQ(f.mask, scene / "segm" / ("frame-" + f.id + ".segm.png"));
    EXPECT_TRUE(fs::is_regular_file(f.mask)) << f.mask;
    EXPECT_EQ(f.color, scene / ("frame-" + f.id + ".color.png"));
    EXPECT_EQ(f.relative, fs::path("frame-" + f.id + ".depth.png"));
  }
  EXPECT_EQ(r.listing.unmatched_files, 0u);
  EXPECT_DOUBLE_EQ(r.config.depth.scale, 0.0001);
  EXPECT_EQ(r.config.depth.encoding, dm::DepthEncoding::Apc);
  ASSERT_TRUE(r.config.input.intrinsics);
  EXPECT_DOUBLE_EQ(r.config.input.intrinsics->fx, 615.195190);
  EXPECT_DOUBLE_EQ(r.config.input.intrinsics->fy, 615.195251);
  EXPECT_DOUBLE_EQ(r.config.input.intrinsics->cx, 298.442688);
  EXPECT_DOUBLE_EQ(r.config.input.intrinsics->cy, 247.519196);
  ASSERT_TRUE(r.geometry);
  EXPECT_DOUBLE_EQ(r.geometry->depth.fx, 477.584259);

  const dm::ResolvedInput o = resolve(scene, {"input.object=kleenex_tissue_box"});
  EXPECT_EQ(o.listing.frames[3].mask, scene / "masks" / "frame-000003.kleenex_tissue_box.mask.png");
  EXPECT_DOUBLE_EQ(*o.config.mask.threshold_fraction, 0.34326);
  EXPECT_EQ(o.listing.unmatched_files, 0u);

  const dm::ResolvedInput raw = resolve(scene, {"input.depth=raw/frame-{id}.depth.png"});
  ASSERT_EQ(raw.listing.frames.size(), 8u);
  EXPECT_EQ(raw.listing.frames[5].depth, scene / "raw" / "frame-000005.depth.png");
  EXPECT_EQ(raw.listing.unmatched_files, 0u);
}

}  // namespace
