// `depthmask doctor` end to end: exit codes 0/1/2, --strict, --json, --sample, --write-config (the
// written file loads and a run with it works), every layout's fixture, and the real APC scene of
// ../shared/data when present.
#include <gtest/gtest.h>

#include <nlohmann/json.hpp>

#include <filesystem>
#include <string>

#include "cli_helpers.h"
#include "depthmask/config.h"
#include "layout_fixtures.h"
#include "test_support.h"

namespace {

namespace fs = std::filesystem;
namespace dm = depthmask;
using dmcli::contains;
using dmtest::q;
using dmtest::run_depthmask;
using dmtest::TempDir;

// The JSON part of a --json run's output (the library's warnings on stderr come first, if any).
nlohmann::json json_of(const std::string& out) {
  const size_t at = out.find("{\n");
  EXPECT_NE(at, std::string::npos) << out;
  return nlohmann::json::parse(out.substr(at == std::string::npos ? 0 : at));
}

TEST(CliDoctor, TheSampleIsGoodAndTheReportReadsTopToBottom) {
  const auto r = run_depthmask("doctor --config " + q(dmtest::sample_dir() / "depthmask.yaml"));
  EXPECT_EQ(r.exit_code, 0) << r.output;
  EXPECT_TRUE(contains(r.output, "layout pattern")) << r.output;
  EXPECT_TRUE(contains(r.output, "8 sampled frames decode")) << r.output;
  EXPECT_TRUE(contains(r.output, "0 errors, 0 warnings")) << r.output;
  EXPECT_EQ(run_depthmask("doctor --strict --config " + q(dmtest::sample_dir() / "depthmask.yaml")).exit_code, 0);
}

TEST(CliDoctor, ErrorsExitOneWarningsOnlyWithStrict) {
  TempDir tmp;
  dmfix::write_pattern(tmp.path(), 3);
  dmfix::write_png(tmp / "mask" / "000009.png", dmfix::mask8(9));  // a mask without depth: a warning
  auto r = run_depthmask("doctor --input " + q(tmp.path()));
  EXPECT_EQ(r.exit_code, 0) << r.output;
  EXPECT_TRUE(contains(r.output, "WARN")) << r.output;
  r = run_depthmask("doctor --strict --input " + q(tmp.path()));
  EXPECT_EQ(r.exit_code, 1) << r.output;
  r = run_depthmask("doctor --input " + q(tmp.path()) + " --set mask.threshold=255");  // keeps nothing
  EXPECT_EQ(r.exit_code, 1) << r.output;
  EXPECT_TRUE(contains(r.output, "ERROR the rule")) << r.output;
  r = run_depthmask("doctor --input " + q(tmp / "nowhere"));
  EXPECT_EQ(r.exit_code, 1) << r.output;
  EXPECT_TRUE(contains(r.output, "no frames")) << r.output;
}

TEST(CliDoctor, UsageAndConfigurationErrorsExitTwo) {
  TempDir tmp;
  dmfix::write_pattern(tmp.path(), 1);
  EXPECT_EQ(run_depthmask("doctor --input " + q(tmp.path()) + " --no-such-flag").exit_code, 2);
  EXPECT_EQ(run_depthmask("doctor --input " + q(tmp.path()) + " --sample -3").exit_code, 2);
  const auto bad = run_depthmask("doctor --input " + q(tmp.path()) + " --set depth.scale=abc");
  EXPECT_EQ(bad.exit_code, 2) << bad.output;
  EXPECT_TRUE(contains(bad.output, "depth.scale")) << bad.output;
  const auto object = run_depthmask("doctor --input " + q(tmp.path()) + " --set input.object=duck");
  EXPECT_EQ(object.exit_code, 2) << object.output;
}

TEST(CliDoctor, JsonAndSample) {
  TempDir tmp;
  dmfix::write_pattern(tmp.path(), 10);
  const auto r = run_depthmask("doctor --json --sample 3 --input " + q(tmp.path()));
  EXPECT_EQ(r.exit_code, 0) << r.output;
  const nlohmann::json j = json_of(r.output);
  EXPECT_EQ(j.at("version"), 1);
  EXPECT_EQ(j.at("frames"), 10);
  EXPECT_EQ(j.at("decoded"), 3);
  EXPECT_EQ(j.at("sample"), nlohmann::json::array({0, 4, 9}));
  EXPECT_EQ(j.at("exit_code"), 0);
  bool decode = false;
  for (const auto& c : j.at("checks"))
    if (c.at("id") == "decode") decode = contains(c.at("detail").get<std::string>(), "3 of 10 frames, evenly spaced");
  EXPECT_TRUE(decode) << r.output;
}

TEST(CliDoctor, WriteConfigRoundTrip) {
  TempDir tmp;
  const fs::path data = tmp / "data";
  dmfix::write_pattern(data, 3, dmfix::depth16_tenth_mm);
  const fs::path file = tmp / "suggested.yaml";
  const auto r = run_depthmask("doctor --input " + q(data) + " --set depth.max=100 --write-config " + q(file));
  EXPECT_EQ(r.exit_code, 0) << r.output;
  EXPECT_TRUE(contains(r.output, "depth.scale: 0.0001")) << r.output;
  ASSERT_TRUE(fs::exists(file)) << r.output;
  const dm::Config c = dm::load_config(file, {});
  EXPECT_DOUBLE_EQ(c.depth.scale, 0.0001);
  EXPECT_TRUE(fs::equivalent(c.input.root, data));
  // The fixed configuration: no warning left, and a run with it masks every frame.
  const auto again = run_depthmask("doctor --strict --config " + q(file));
  EXPECT_EQ(again.exit_code, 0) << again.output;
  const auto run = run_depthmask("run --config " + q(file) + " --output " + q(tmp / "out"));
  EXPECT_EQ(run.exit_code, 0) << run.output;
  EXPECT_TRUE(fs::exists(tmp / "out" / "000002.tiff")) << run.output;
}

TEST(CliDoctor, EveryLayoutsFixture) {
  struct Case {
    const char* layout;
    void (*write)(const fs::path&);
  };
  const Case cases[] = {
      {"bop", [](const fs::path& p) { dmfix::write_bop(p); }},
      {"tum", [](const fs::path& p) { dmfix::write_tum(p); }},
      {"7scenes", [](const fs::path& p) { dmfix::write_seven_scenes(p); }},
      {"ycbineoat", [](const fs::path& p) { dmfix::write_ycbineoat(p); }},
      {"apc", [](const fs::path& p) { dmfix::write_apc(p); }},
      {"pattern", [](const fs::path& p) { dmfix::write_pattern(p, 2); }},
  };
  for (const Case& k : cases) {
    SCOPED_TRACE(k.layout);
    TempDir tmp;
    k.write(tmp.path());
    const auto r = run_depthmask("doctor --json --input " + q(tmp.path()));
    EXPECT_EQ(r.exit_code, 0) << r.output;
    const nlohmann::json j = json_of(r.output);
    EXPECT_EQ(j.at("layout"), k.layout);
    EXPECT_EQ(j.at("exit_code"), 0);
  }
}

TEST(CliDoctor, TheRealApcSceneWhenPresent) {
  const fs::path scene = dmtest::shared_data_dir() / "apc-vision-toolbox" / "scene-0000";
  if (!fs::is_directory(scene)) GTEST_SKIP() << "no " << scene << " (../shared/data)";
  const auto r = run_depthmask("doctor --input " + q(scene));
  EXPECT_EQ(r.exit_code, 0) << r.output;
  EXPECT_TRUE(contains(r.output, "layout apc: found cam.info.txt")) << r.output;
}

}  // namespace
