// Unit tests of the doctor (depthmask/doctor.h): a good dataset, every layout's fixture, each fault it
// reports (with its level and the exit code it gives), the sampling, the JSON and the suggested
// configuration. The real APC scene of ../shared/data is used when present.
#include <gtest/gtest.h>

#include <nlohmann/json.hpp>
#include <opencv2/core.hpp>
#include <opencv2/imgcodecs.hpp>
#include <opencv2/imgproc.hpp>

#include <filesystem>
#include <string>
#include <vector>

#include "depthmask/config.h"
#include "depthmask/doctor.h"
#include "depthmask/errors.h"
#include "layout_fixtures.h"
#include "test_support.h"

namespace {

namespace fs = std::filesystem;
namespace dm = depthmask;
using dm::DoctorLevel;
using dmtest::Contains;
using dmtest::TempDir;
using dmtest::write_text;

using dmfix::config_for;

dm::DoctorReport doctor(const fs::path& root, const std::vector<std::string>& sets = {},
                        const dm::DoctorOptions& o = dm::DoctorOptions{}) {
  return dm::diagnose(config_for(root, sets), o);
}

const dm::DoctorCheck* check(const dm::DoctorReport& r, const std::string& id) {
  for (const auto& c : r.checks)
    if (c.id == id) return &c;
  return nullptr;
}

DoctorLevel level(const dm::DoctorReport& r, const std::string& id) {
  const dm::DoctorCheck* c = check(r, id);
  EXPECT_NE(c, nullptr) << "no check '" << id << "' in\n" << r.to_text();
  return c ? c->level : DoctorLevel::Ok;
}

std::string suggested(const dm::DoctorReport& r, const std::string& key) {
  for (const auto& [k, v] : r.suggested)
    if (k == key) return v;
  return "";
}

fs::path apc_scene() { return dmtest::shared_data_dir() / "apc-vision-toolbox" / "scene-0000"; }

// ---------------------------------------------------------------------------------------------------
// a good dataset and the layouts

TEST(Doctor, TheCommittedSampleIsGood) {
  const dm::Config c = dm::load_config(dmtest::sample_dir() / "depthmask.yaml", {});
  const dm::DoctorReport r = dm::diagnose(c);
  EXPECT_EQ(r.exit_code(false), 0) << r.to_text();
  EXPECT_EQ(r.exit_code(true), 0) << r.to_text();
  EXPECT_EQ(r.layout, "pattern");
  EXPECT_EQ(r.frames, 8u);
  EXPECT_EQ(r.decoded, 8u);
  for (const char* id :
       {"layout", "frames", "pairing", "sizes", "types", "three_channel", "decode", "units", "intrinsics", "mask_rule"})
    EXPECT_EQ(level(r, id), DoctorLevel::Ok) << id << "\n" << r.to_text();
  EXPECT_TRUE(Contains(check(r, "sizes")->title, "depth 320x240, mask 320x240"));
  EXPECT_TRUE(Contains(check(r, "types")->title, "depth 16-bit, mask 8-bit"));
  EXPECT_TRUE(Contains(check(r, "intrinsics")->detail, "field of view"));
  // Nothing to fix: only the input's keys are suggested.
  ASSERT_EQ(r.suggested.size(), 2u);
  EXPECT_EQ(r.suggested[0].first, "input.root");
  EXPECT_EQ(r.suggested[1], std::make_pair(std::string("input.layout"), std::string("pattern")));
}

TEST(Doctor, EveryLayoutsFixtureHasNoError) {
  struct Case {
    const char* layout;
    void (*write)(const fs::path&);
    size_t frames;
  };
  const Case cases[] = {
      {"bop", [](const fs::path& p) { dmfix::write_bop(p); }, 3},
      {"tum", [](const fs::path& p) { dmfix::write_tum(p); }, 4},
      {"7scenes", [](const fs::path& p) { dmfix::write_seven_scenes(p); }, 3},
      {"ycbineoat", [](const fs::path& p) { dmfix::write_ycbineoat(p); }, 3},
      {"apc", [](const fs::path& p) { dmfix::write_apc(p); }, 2},
      {"pattern", [](const fs::path& p) { dmfix::write_pattern(p, 3); }, 3},
  };
  for (const Case& k : cases) {
    SCOPED_TRACE(k.layout);
    TempDir tmp;
    k.write(tmp.path());
    const dm::DoctorReport r = doctor(tmp.path());
    EXPECT_EQ(r.layout, k.layout);
    EXPECT_EQ(r.frames, k.frames);
    EXPECT_EQ(r.decoded, k.frames);
    EXPECT_EQ(r.exit_code(false), 0) << r.to_text();
    EXPECT_EQ(level(r, "decode"), DoctorLevel::Ok) << r.to_text();
    EXPECT_EQ(level(r, "mask_rule"), DoctorLevel::Ok) << r.to_text();
    EXPECT_EQ(suggested(r, "input.layout"), k.layout);
  }
}

TEST(Doctor, TheRealApcSceneWhenPresent) {
  if (!fs::is_directory(apc_scene())) GTEST_SKIP() << "no " << apc_scene() << " (../shared/data)";
  const dm::DoctorReport r = doctor(apc_scene());
  EXPECT_EQ(r.layout, "apc");
  EXPECT_EQ(r.exit_code(false), 0) << r.to_text();
  EXPECT_EQ(level(r, "units"), DoctorLevel::Ok) << r.to_text();
  EXPECT_EQ(level(r, "intrinsics"), DoctorLevel::Ok) << r.to_text();
  EXPECT_TRUE(Contains(check(r, "sizes")->title, "depth 640x480, mask 640x480"));
}

// ---------------------------------------------------------------------------------------------------
// faults

TEST(Doctor, NoFramesIsAnError) {
  TempDir tmp;
  fs::create_directories(tmp / "depth");
  const dm::DoctorReport r = doctor(tmp.path());
  EXPECT_EQ(level(r, "frames"), DoctorLevel::Error);
  EXPECT_TRUE(Contains(check(r, "frames")->detail, "no input frames"));
  EXPECT_EQ(r.exit_code(false), 1);
  const dm::DoctorReport missing = doctor(tmp / "nowhere");
  EXPECT_EQ(missing.exit_code(false), 1);
  EXPECT_EQ(missing.layout, "");
}

TEST(Doctor, DepthWithoutMaskIsUnpairedAndFailsItsDecode) {
  TempDir tmp;
  dmfix::write_pattern(tmp.path(), 4);
  fs::remove(tmp / "mask" / "000002.png");
  const dm::DoctorReport r = doctor(tmp.path());
  EXPECT_EQ(level(r, "pairing"), DoctorLevel::Warning);
  EXPECT_TRUE(Contains(check(r, "pairing")->detail, "1 depth image has no mask, e.g. 000002"));
  EXPECT_EQ(level(r, "decode"), DoctorLevel::Error);  // the sample holds every frame here
  EXPECT_TRUE(Contains(check(r, "decode")->detail, "frame 000002"));
  EXPECT_EQ(r.exit_code(false), 1);
}

TEST(Doctor, MaskWithoutDepthIsAWarningOnly) {
  TempDir tmp;
  dmfix::write_pattern(tmp.path(), 3);
  dmfix::write_png(tmp / "mask" / "000009.png", dmfix::mask8(9));
  const dm::DoctorReport r = doctor(tmp.path());
  EXPECT_EQ(level(r, "pairing"), DoctorLevel::Warning);
  EXPECT_TRUE(Contains(check(r, "pairing")->detail, "1 mask has no depth image"));
  EXPECT_TRUE(Contains(check(r, "pairing")->detail, "000009.png"));
  EXPECT_EQ(level(r, "skipped"), DoctorLevel::Info);  // the run skips the orphan mask
  EXPECT_EQ(r.exit_code(false), 0);
  EXPECT_EQ(r.exit_code(true), 1);
}

TEST(Doctor, TumDepthBeyondTheToleranceIsUnpaired) {
  TempDir tmp;
  dmfix::write_tum(tmp.path());
  const dm::DoctorReport r = doctor(tmp.path());
  EXPECT_EQ(level(r, "pairing"), DoctorLevel::Warning);
  EXPECT_TRUE(Contains(check(r, "pairing")->detail, "within input.max_time_diff 0.02 s, e.g. at 1305031102.900000"));
  EXPECT_EQ(r.exit_code(false), 0);
  EXPECT_EQ(r.exit_code(true), 1);
}

TEST(Doctor, StrayFilesAreReportedAsSkipped) {
  TempDir tmp;
  dmfix::write_pattern(tmp.path(), 2);
  write_text(tmp / "depth" / "README.txt", "notes\n");
  const dm::DoctorReport r = doctor(tmp.path());
  EXPECT_EQ(level(r, "skipped"), DoctorLevel::Info);
  EXPECT_TRUE(Contains(check(r, "skipped")->detail, "README.txt"));
  EXPECT_EQ(r.exit_code(true), 0);
}

TEST(Doctor, SizesNoRegistrationReconcilesAreAnError) {
  TempDir tmp;
  dmfix::write_pattern(tmp.path(), 3);
  dmfix::write_png(tmp / "mask" / "000001.png", cv::Mat(5, 5, CV_8UC1, cv::Scalar(255)));  // another aspect ratio
  const dm::DoctorReport r = doctor(tmp.path());
  EXPECT_EQ(level(r, "sizes"), DoctorLevel::Error) << r.to_text();
  EXPECT_TRUE(Contains(check(r, "sizes")->detail, "000001 (depth 8x6, mask 5x5)"));
  EXPECT_EQ(r.exit_code(false), 1);
}

TEST(Doctor, SizesThatResampleReconcilesAreNoError) {
  TempDir tmp;
  dmfix::write_pattern(tmp.path(), 2);
  cv::Mat big;
  cv::resize(dmfix::mask8(0), big, cv::Size(16, 12), 0, 0, cv::INTER_NEAREST);
  dmfix::write_png(tmp / "mask" / "000000.png", big);
  const dm::DoctorReport r = doctor(tmp.path());
  EXPECT_EQ(level(r, "sizes"), DoctorLevel::Warning) << r.to_text();  // not every frame has one size
  EXPECT_TRUE(Contains(check(r, "sizes")->detail, "depth is registered"));
  EXPECT_EQ(level(r, "decode"), DoctorLevel::Ok) << r.to_text();
  EXPECT_EQ(r.exit_code(false), 0);
}

TEST(Doctor, DepthTypesThatDifferAreAWarning) {
  TempDir tmp;
  dmfix::write_pattern(tmp.path(), 2);
  cv::Mat metres;
  dmfix::depth16(1).convertTo(metres, CV_32FC1, 0.001);
  ASSERT_TRUE(cv::imwrite((tmp / "depth" / "000000.tiff").string(), dmfix::depth16(0)));
  ASSERT_TRUE(cv::imwrite((tmp / "depth" / "000001.tiff").string(), metres));
  const dm::DoctorReport r = doctor(tmp.path(), {"input.depth=depth/{id}.tiff"});
  EXPECT_EQ(level(r, "types"), DoctorLevel::Warning) << r.to_text();
  EXPECT_TRUE(Contains(check(r, "types")->detail, "32-bit float (1 frame: 000001)")) << r.to_text();
}

TEST(Doctor, ImplausibleUnitsSuggestAScale) {
  TempDir tmp;
  dmfix::write_pattern(tmp.path(), 2, dmfix::depth16_tenth_mm);
  const dm::DoctorReport r = doctor(tmp.path(), {"depth.max=100"});
  EXPECT_EQ(level(r, "units"), DoctorLevel::Warning) << r.to_text();
  EXPECT_TRUE(Contains(check(r, "units")->title, "at depth.scale 0.001: implausible"));
  EXPECT_EQ(suggested(r, "depth.scale"), "0.0001");
  EXPECT_TRUE(Contains(check(r, "units")->hint, "depth.scale: 0.0001"));
  EXPECT_EQ(r.exit_code(false), 0);
  EXPECT_EQ(r.exit_code(true), 1);
}

TEST(Doctor, IntrinsicsMissingWherePlyNeedsThemIsAnError) {
  TempDir tmp;
  dmfix::write_pattern(tmp.path(), 2);
  EXPECT_EQ(level(doctor(tmp.path()), "intrinsics"), DoctorLevel::Info);
  const dm::DoctorReport r = doctor(tmp.path(), {"output.format=[tiff, ply]"});
  EXPECT_EQ(level(r, "intrinsics"), DoctorLevel::Error);
  EXPECT_TRUE(Contains(check(r, "intrinsics")->detail, "output.format 'ply' needs them"));
  EXPECT_EQ(r.exit_code(false), 1);
}

TEST(Doctor, IntrinsicsForAnotherSizeOrImplausibleAreReported) {
  TempDir tmp;
  dmfix::write_pattern(tmp.path(), 2);
  const dm::DoctorReport other =
      doctor(tmp.path(), {"input.intrinsics={fx: 5, fy: 5, cx: 4, cy: 3, width: 640, height: 480}"});
  EXPECT_EQ(level(other, "intrinsics"), DoctorLevel::Warning) << other.to_text();
  EXPECT_TRUE(Contains(check(other, "intrinsics")->title, "another image size"));
  const dm::DoctorReport ply = doctor(
      tmp.path(), {"input.intrinsics={fx: 5, fy: 5, cx: 4, cy: 3, width: 640, height: 480}", "output.format=ply"});
  EXPECT_EQ(level(ply, "intrinsics"), DoctorLevel::Error);
  // 585 px focal length on an 8 px wide image: a field of view under one degree.
  const dm::DoctorReport fov = doctor(tmp.path(), {"input.intrinsics={fx: 585, fy: 585, cx: 4, cy: 3}"});
  EXPECT_EQ(level(fov, "intrinsics"), DoctorLevel::Warning);
  EXPECT_TRUE(Contains(check(fov, "intrinsics")->title, "look wrong"));
  const dm::DoctorReport good = doctor(tmp.path(), {"input.intrinsics={fx: 6, fy: 6, cx: 3.5, cy: 2.5}"});
  EXPECT_EQ(level(good, "intrinsics"), DoctorLevel::Ok) << good.to_text();
}

TEST(Doctor, LabelsNeverSeenAreAWarning) {
  TempDir tmp;
  dmfix::write_apc(tmp.path());  // segm/ labels 0 and 48
  const dm::DoctorReport r = doctor(tmp.path(), {"mask.labels=[48, 99]"});
  EXPECT_EQ(level(r, "labels"), DoctorLevel::Warning) << r.to_text();
  EXPECT_TRUE(Contains(check(r, "labels")->title, "mask.labels [99] is in no sampled mask"));
  EXPECT_TRUE(Contains(check(r, "labels")->detail, "48 ("));
  EXPECT_EQ(level(r, "mask_rule"), DoctorLevel::Ok);
  EXPECT_EQ(r.exit_code(false), 0);
  EXPECT_EQ(r.exit_code(true), 1);
}

TEST(Doctor, ARuleThatKeepsNothingIsAnErrorWithAFix) {
  TempDir tmp;
  dmfix::write_apc(tmp.path());
  const dm::DoctorReport labels = doctor(tmp.path(), {"mask.labels=[7]"});
  EXPECT_EQ(level(labels, "mask_rule"), DoctorLevel::Error) << labels.to_text();
  EXPECT_EQ(suggested(labels, "mask.labels"), "[48]");
  EXPECT_EQ(labels.exit_code(false), 1);

  TempDir pat;
  dmfix::write_pattern(pat.path(), 3);  // 0/255 masks
  const dm::DoctorReport thr = doctor(pat.path(), {"mask.threshold=255"});
  EXPECT_EQ(level(thr, "mask_rule"), DoctorLevel::Error) << thr.to_text();
  EXPECT_TRUE(Contains(check(thr, "mask_rule")->title, "keeps nothing in any of the 3 sampled masks"));
  EXPECT_EQ(suggested(thr, "mask.threshold"), "0");

  // The mask passes but the depth range drops every pixel: the hint says so.
  const dm::DoctorReport range = doctor(pat.path(), {"depth.min=5", "depth.max=6"});
  EXPECT_EQ(level(range, "mask_rule"), DoctorLevel::Error);
  EXPECT_TRUE(Contains(check(range, "mask_rule")->hint, "depth.min"));
}

TEST(Doctor, ARuleThatKeepsEverythingIsAWarning) {
  TempDir tmp;
  dmfix::write_pattern(tmp.path(), 2, dmfix::depth16,
                       [](int) { return cv::Mat(dmfix::kH, dmfix::kW, CV_8UC1, cv::Scalar(255)); });
  const dm::DoctorReport r = doctor(tmp.path());
  EXPECT_EQ(level(r, "mask_rule"), DoctorLevel::Warning) << r.to_text();
  EXPECT_TRUE(Contains(check(r, "mask_rule")->title, "keeps every pixel"));
}

TEST(Doctor, AFrameThatDoesNotDecodeIsAnError) {
  TempDir tmp;
  dmfix::write_pattern(tmp.path(), 3);
  write_text(tmp / "depth" / "000001.png", "not a png");
  const dm::DoctorReport r = doctor(tmp.path());
  EXPECT_EQ(level(r, "decode"), DoctorLevel::Error);
  EXPECT_TRUE(Contains(check(r, "decode")->title, "1 of 3 sampled frames do not decode or pair"));
  EXPECT_TRUE(Contains(check(r, "decode")->detail, "frame 000001: "));
  EXPECT_EQ(r.decoded, 2u);
}

TEST(Doctor, ThreeChannelDepthIsAWarningAndDifferingChannelsAnError) {
  TempDir tmp;
  dmfix::write_pattern(tmp.path(), 3);
  cv::Mat rgb;
  const cv::Mat d = dmfix::depth16(1);
  cv::merge(std::vector<cv::Mat>{d, d, d}, rgb);
  dmfix::write_png(tmp / "depth" / "000001.png", rgb);
  const dm::DoctorReport r = doctor(tmp.path());
  EXPECT_EQ(level(r, "three_channel"), DoctorLevel::Warning) << r.to_text();
  EXPECT_TRUE(Contains(check(r, "three_channel")->title, "1 of 3 sampled depth images are stored with 3 channels"));
  EXPECT_TRUE(Contains(check(r, "three_channel")->detail, "frame 000001"));
  EXPECT_EQ(level(r, "decode"), DoctorLevel::Ok);
  EXPECT_EQ(r.exit_code(false), 0);
  EXPECT_EQ(r.exit_code(true), 1);

  rgb.at<cv::Vec3w>(2, 3)[1] += 1;  // one pixel's channels differ
  dmfix::write_png(tmp / "depth" / "000001.png", rgb);
  const dm::DoctorReport bad = doctor(tmp.path());
  EXPECT_EQ(level(bad, "decode"), DoctorLevel::Error) << bad.to_text();
  EXPECT_TRUE(Contains(check(bad, "decode")->detail, "frame 000001: ")) << bad.to_text();
  EXPECT_EQ(bad.exit_code(false), 1);
}

TEST(Doctor, ConfigurationErrorsThrowAsInRun) {
  TempDir tmp;
  dmfix::write_pattern(tmp.path(), 1);
  // input.object applies to the apc layout only; reproject needs a camera geometry (APC raw/).
  EXPECT_THROW(doctor(tmp.path(), {"input.object=duck"}), dm::ConfigError);
  EXPECT_THROW(doctor(tmp.path(), {"registration.mode=reproject"}), dm::ConfigError);
}

// ---------------------------------------------------------------------------------------------------
// sampling, JSON, the suggested configuration

TEST(Doctor, DecodesAnEvenlySpacedSampleAndSaysSo) {
  TempDir tmp;
  dmfix::write_pattern(tmp.path(), 10);
  dm::DoctorOptions o;
  o.sample = 4;
  o.headers = 5;
  const dm::DoctorReport r = doctor(tmp.path(), {}, o);
  EXPECT_EQ(r.decoded, 4u);
  EXPECT_EQ(r.sample, (std::vector<size_t>{0, 3, 6, 9}));
  EXPECT_EQ(r.headers_read, 5u);
  EXPECT_TRUE(Contains(check(r, "decode")->detail, "4 of 10 frames, evenly spaced"));
  EXPECT_TRUE(Contains(check(r, "sizes")->detail, "headers of 5 of 10 frames, evenly spaced"));
  o.sample = 0;
  const dm::DoctorReport none = doctor(tmp.path(), {}, o);
  EXPECT_EQ(none.decoded, 0u);
  EXPECT_EQ(check(none, "decode"), nullptr);
}

TEST(Doctor, JsonFollowsTheSchema) {
  TempDir tmp;
  dmfix::write_pattern(tmp.path(), 3);
  fs::remove(tmp / "mask" / "000002.png");
  const dm::DoctorReport r = doctor(tmp.path());
  const nlohmann::json j = nlohmann::json::parse(r.to_json());
  EXPECT_EQ(j.at("version"), 1);
  EXPECT_EQ(j.at("root"), tmp.path().string());
  EXPECT_EQ(j.at("layout"), "pattern");
  EXPECT_EQ(j.at("frames"), 3);
  EXPECT_EQ(j.at("decoded"), 2);
  EXPECT_EQ(j.at("sample").size(), 3u);
  EXPECT_EQ(j.at("worst"), "error");
  EXPECT_EQ(j.at("exit_code"), 1);
  EXPECT_EQ(j.at("exit_code_strict"), 1);
  EXPECT_TRUE(j.at("seconds").is_number());
  ASSERT_TRUE(j.at("checks").is_array());
  for (const auto& c : j.at("checks")) {
    for (const char* k : {"id", "level", "title", "detail", "hint"}) EXPECT_TRUE(c.at(k).is_string()) << k;
    const std::string l = c.at("level");
    EXPECT_TRUE(l == "ok" || l == "info" || l == "warning" || l == "error") << l;
  }
  EXPECT_EQ(j.at("checks").size(), r.checks.size());
  EXPECT_EQ(j.at("suggested").at("input.layout"), "pattern");
}

TEST(Doctor, TheSuggestedConfigurationLoadsAndFixes) {
  TempDir tmp;
  dmfix::write_pattern(tmp.path(), 2, dmfix::depth16_tenth_mm);
  const dm::DoctorReport r = doctor(tmp.path(), {"mask.threshold=255", "depth.max=100"});
  const std::string yaml = r.suggested_yaml();
  const dm::Config c = dm::load_config_text(yaml, "suggested.yaml", tmp.path(), {{"depth.max", "100"}});
  EXPECT_TRUE(fs::equivalent(c.input.root, tmp.path()));
  EXPECT_EQ(c.input.layout, dm::InputLayout::Pattern);
  EXPECT_DOUBLE_EQ(c.depth.scale, 0.0001);
  EXPECT_EQ(c.mask.threshold, 0u);
  const dm::DoctorReport again = dm::diagnose(c);
  EXPECT_EQ(again.exit_code(true), 0) << again.to_text();
}

TEST(Doctor, TextReadsTopToBottom) {
  TempDir tmp;
  dmfix::write_tum(tmp.path());
  const dm::DoctorReport r = doctor(tmp.path());
  const std::string t = r.to_text();
  EXPECT_TRUE(Contains(t, "depthmask doctor: " + tmp.path().string()));
  EXPECT_TRUE(Contains(t, "ok    layout tum: found rgb.txt and depth.txt"));
  EXPECT_TRUE(Contains(t, "WARN  4 of 4 frames paired; 1 unpaired"));
  EXPECT_LT(t.find("layout tum"), t.find("paired"));
  EXPECT_TRUE(Contains(t, "0 errors, "));
}

}  // namespace
