// `depthmask bench --quick` end to end: exit 0 and the three report files, whose contents parse. On a
// machine without a GPU the GPU sections say why they were skipped; the live section has a cpu row
// whose counts add up. Timings are never asserted.
#include <gtest/gtest.h>

#include <nlohmann/json.hpp>

#include <opencv2/imgcodecs.hpp>

#include <set>
#include <string>

#include "cli_helpers.h"
#include "test_support.h"

namespace {

namespace fs = std::filesystem;
using dmtest::q;
using dmtest::run_depthmask;
using dmtest::TempDir;

TEST(CliBench, QuickWritesMarkdownJsonAndChart) {
  TempDir tmp;
  const fs::path out = tmp.path() / "results";
  const dmtest::CmdResult r = run_depthmask("bench --quick --out " + q(out));
  ASSERT_EQ(r.exit_code, 0) << r.output;
  for (const char* f : {"bench.md", "bench.json", "bench.png"}) EXPECT_TRUE(fs::exists(out / f)) << f;
  EXPECT_TRUE(dmcli::contains(r.output, "## Host to host")) << r.output;  // the table went to stdout too

  const auto bytes = dmtest::read_bytes(out / "bench.json");
  const nlohmann::json j = nlohmann::json::parse(bytes.begin(), bytes.end());
  for (const char* key : {"machine", "command_line", "options", "ceilings", "kernel", "host_to_host",
                          "cpu_single_thread", "end_to_end", "targets"})
    ASSERT_TRUE(j.contains(key)) << key;
  for (const char* key :
       {"cpu_model", "hardware_threads", "gpu_name", "cuda_runtime", "cuda_driver", "date_utc", "build_type"})
    EXPECT_TRUE(j["machine"].contains(key)) << key;
  EXPECT_NE(j["command_line"].get<std::string>().find("--quick"), std::string::npos);

  size_t cpu_rows = 0;
  for (const auto& row : j["host_to_host"]["rows"])
    if (row["backend"] == "cpu") {
      ++cpu_rows;
      EXPECT_GT(row["us"]["n"].get<int>(), 0);
      // The synthetic frame keeps some pixels and drops others (so kept-only reads are timed on a
      // real mix, not on a mask that keeps nothing).
      EXPECT_GT(row["mask_kept"].get<double>(), 0.02) << row.dump();
      EXPECT_LT(row["mask_kept"].get<double>(), 0.98) << row.dump();
    }
  EXPECT_EQ(cpu_rows, 4u);  // two quick sizes x two depth types
  EXPECT_EQ(j["cpu_single_thread"]["rows"].size(), 2u);
  ASSERT_EQ(j["end_to_end"]["rows"].size(), 2u);
  for (const auto& row : j["end_to_end"]["rows"]) {
    EXPECT_TRUE(row["error"].is_null()) << row.dump();
    EXPECT_EQ(row["frames"].get<int>(), 4);
    EXPECT_EQ(row["rate_frames"].get<int>(), 4);  // min(frames, 24)
    EXPECT_GT(row["run_fps"].get<double>(), 0.0);
    EXPECT_GT(row["warm_run_fps"].get<double>(), 0.0);
  }
  // Live: one row per backend this machine can make, cpu always; counts, not timings.
  EXPECT_TRUE(dmcli::contains(r.output, "## Live: replay:// 160x120 at ")) << r.output;
  ASSERT_TRUE(j.contains("live"));
  EXPECT_TRUE(j["live"]["skipped"].is_null()) << j["live"].dump();
  EXPECT_EQ(j["live"]["size"]["label"], "160x120");
  bool live_cpu = false;
  for (const auto& row : j["live"]["rows"]) {
    EXPECT_TRUE(row["error"].is_null()) << row.dump();
    EXPECT_EQ(row["captured"].get<long long>(),
              row["processed"].get<long long>() + row["dropped"].get<long long>() + row["failed"].get<long long>())
        << row.dump();
    if (row["backend"] == "cpu") {
      live_cpu = true;
      EXPECT_GT(row["processed"].get<long long>(), 0) << row.dump();
    }
  }
  EXPECT_TRUE(live_cpu) << j["live"].dump();

  if (dmtest::gpu_unavailable_reason().empty()) {
    // The copy backend's band sweep, and every kernel row one frame per launch and batched.
    std::set<std::string> labels;
    for (const auto& row : j["host_to_host"]["rows"]) labels.insert(row["backend"].get<std::string>());
    for (const char* l : {"copy", "copy (1 band)", "copy (2 bands)", "copy (4 bands)", "copy (8 bands)",
                          "copy (16 bands)", "zero_copy", "zero_copy (mask keeps every pixel)"})
      EXPECT_TRUE(labels.count(l)) << l;
    for (const auto& row : j["host_to_host"]["rows"]) {
      if (row["backend"] == "zero_copy (mask keeps every pixel)") {
        EXPECT_EQ(row["mask_kept"].get<double>(), 1.0);
      }
    }
    std::set<std::pair<std::string, bool>> launch_modes;  // backend, batched
    for (const auto& row : j["kernel"]["rows"]) {
      EXPECT_TRUE(row["matches_cpu"].get<bool>()) << row.dump();
      launch_modes.insert({row["backend"].get<std::string>(), row["batch"].get<int>() > 1});
    }
    for (const char* b : {"copy", "zero_copy"}) {
      EXPECT_TRUE(launch_modes.count({b, false})) << b;
      EXPECT_TRUE(launch_modes.count({b, true})) << b;
    }
    std::set<std::string> mapped_variants;  // zero_copy also measures the kept-only walks
    for (const auto& row : j["kernel"]["rows"])
      if (row["backend"] == "zero_copy") mapped_variants.insert(row["variant"].get<std::string>());
    EXPECT_TRUE(mapped_variants.count("32x8 vec kept-only"));
    EXPECT_TRUE(mapped_variants.count("32x8 scalar kept-only"));
  } else {
    EXPECT_TRUE(j["ceilings"]["skipped"].is_string());
    EXPECT_TRUE(j["kernel"]["skipped"].is_string());
    EXPECT_TRUE(dmcli::contains(r.output, "skipped: ")) << r.output;
  }

  const cv::Mat png = cv::imread((out / "bench.png").string(), cv::IMREAD_UNCHANGED);
  ASSERT_FALSE(png.empty());
  EXPECT_GT(png.cols, 500);
}

TEST(CliBench, SkipLiveLeavesTheSectionOut) {
  TempDir tmp;
  const fs::path out = tmp.path() / "results";
  const dmtest::CmdResult r =
      run_depthmask("bench --quick --backends cpu --skip-end-to-end --skip-live --out " + q(out));
  ASSERT_EQ(r.exit_code, 0) << r.output;
  EXPECT_TRUE(dmcli::contains(r.output, "skipped: --skip-live")) << r.output;
  const auto bytes = dmtest::read_bytes(out / "bench.json");
  const nlohmann::json j = nlohmann::json::parse(bytes.begin(), bytes.end());
  EXPECT_EQ(j["live"]["skipped"], "--skip-live");
  EXPECT_TRUE(j["live"]["rows"].empty());
}

// --real-frame: a recorded APC frame (its ground-truth labels as the mask) timed host to host beside
// the synthetic ones, at its own size, with how much of it the mask keeps.
TEST(CliBench, RealFrameIsTimedBesideTheSyntheticOnes) {
  const fs::path scene = dmtest::shared_data_dir() / "apc-vision-toolbox" / "scene-0000";
  const fs::path depth = scene / "frame-000000.depth.png", mask = scene / "segm" / "frame-000000.segm.png";
  if (!fs::exists(depth) || !fs::exists(mask))
    GTEST_SKIP() << "real data not present: " << depth << " (set DEPTHMASK_TEST_DATA to the shared data folder)";
  TempDir tmp;
  const fs::path out = tmp.path() / "results";
  const dmtest::CmdResult r = run_depthmask("bench --quick --backends cpu --skip-end-to-end --skip-live --real-frame " +
                                            q(depth.string() + "," + mask.string()) + " --out " + q(out));
  ASSERT_EQ(r.exit_code, 0) << r.output;
  const auto bytes = dmtest::read_bytes(out / "bench.json");
  const nlohmann::json j = nlohmann::json::parse(bytes.begin(), bytes.end());
  size_t real_rows = 0;
  for (const auto& row : j["host_to_host"]["rows"]) {
    if (row["frame"].is_null()) continue;
    ++real_rows;
    EXPECT_EQ(row["frame"], "frame-000000.segm.png");
    EXPECT_EQ(row["size"]["label"], "640x480");
    EXPECT_GT(row["mask_kept"].get<double>(), 0.01) << row.dump();  // objects in the bin: kept ...
    EXPECT_LT(row["mask_kept"].get<double>(), 0.99) << row.dump();  // ... and background dropped
  }
  EXPECT_GE(real_rows, 2u);  // f32 and u16 depth, at least the cpu backend as configured
  EXPECT_TRUE(dmcli::contains(r.output, "frame-000000.segm.png")) << r.output;
}

TEST(CliBench, RealFrameThatCannotBeUsedIsAnErrorNamingTheFile) {
  TempDir tmp;
  const fs::path color = tmp.path() / "color.png";
  ASSERT_TRUE(cv::imwrite(color.string(), cv::Mat(4, 4, CV_8UC3, cv::Scalar(1, 2, 3))));
  const dmtest::CmdResult missing =
      run_depthmask("bench --quick --backends cpu --skip-end-to-end --skip-live --real-frame " +
                    q((tmp.path() / "nope.png").string() + "," + color.string()) + " --out " + q(tmp.path() / "a"));
  EXPECT_NE(missing.exit_code, 0);
  EXPECT_TRUE(dmcli::contains(missing.output, "nope.png")) << missing.output;
  const dmtest::CmdResult not_depth =
      run_depthmask("bench --quick --backends cpu --skip-end-to-end --skip-live --real-frame " +
                    q(color.string() + "," + color.string()) + " --out " + q(tmp.path() / "b"));
  EXPECT_NE(not_depth.exit_code, 0);
  // Read as the batch loader reads (ImageReader): its type check names the role and the file.
  EXPECT_TRUE(dmcli::contains(not_depth.output, "--real-frame: depth file '" + color.string() + "' is 3-channel"))
      << not_depth.output;
  EXPECT_EQ(run_depthmask("bench --quick --real-frame only-one.png --out " + q(tmp.path() / "c")).exit_code, 2);
}

TEST(CliBench, BadOptionsAreUsageErrors) {
  TempDir tmp;
  EXPECT_EQ(run_depthmask("bench --quick --sizes 640 --out " + q(tmp.path() / "a")).exit_code, 2);
  EXPECT_EQ(run_depthmask("bench --quick --backends gpu --out " + q(tmp.path() / "b")).exit_code, 2);
  EXPECT_EQ(run_depthmask("bench --quick --frames 0 --out " + q(tmp.path() / "c")).exit_code, 2);
  EXPECT_EQ(run_depthmask("bench --quick --live-seconds 0 --out " + q(tmp.path() / "d")).exit_code, 2);
  EXPECT_EQ(run_depthmask("bench --quick --live-fps -1 --out " + q(tmp.path() / "e")).exit_code, 2);
}

}  // namespace
