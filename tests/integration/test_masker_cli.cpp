// The C++ facade and the CLI agree bit for bit on the real APC frames (../shared/data; skipped when
// absent): the CLI writes float TIFFs, Masker::mask() masks the same decoded images in memory.
#include <gtest/gtest.h>

#include <opencv2/imgcodecs.hpp>

#include "cli_helpers.h"
#include "depthmask/layouts.h"
#include "depthmask/masker.h"
#include "gpu_test_support.h"
#include "test_support.h"

namespace dm = depthmask;
namespace fs = std::filesystem;
using dmtest::q;
using dmtest::run_depthmask;
using dmtest::TempDir;

TEST(MaskerCli, ApcFramesEqualTheCliOutputs) {
  const fs::path scene = dmtest::shared_data_dir() / "apc-vision-toolbox" / "scene-0000";
  if (!fs::exists(scene / "frame-000000.depth.png"))
    GTEST_SKIP() << "real data not present: " << scene << " (set DEPTHMASK_TEST_DATA to the shared data folder)";
  TempDir tmp;
  const fs::path root = tmp / "apc";
  fs::create_directories(root / "segm");
  int frames = 0;
  for (int i = 0; i < 8; ++i) {
    const std::string id = "frame-00000" + std::to_string(i);
    if (!fs::exists(scene / (id + ".depth.png")) || !fs::exists(scene / "segm" / (id + ".segm.png"))) continue;
    fs::create_symlink(scene / (id + ".depth.png"), root / (id + ".depth.png"));
    fs::create_symlink(scene / "segm" / (id + ".segm.png"), root / "segm" / (id + ".segm.png"));
    ++frames;
  }
  ASSERT_GT(frames, 0);
  dmcli::write_text(
      tmp / "apc.yaml",
      "input: {root: apc, depth: \"frame-{id}.depth.png\", mask: \"segm/frame-{id}.segm.png\", color: null}\n"
      "depth: {scale: 0.0001, max: 6}\n"
      "mask: {labels: [114, 1, 7], erode: 1}\n"
      "output: {dir: out, format: tiff}\n");
  const auto r = run_depthmask("run --config " + q(tmp / "apc.yaml") + " --backend cpu");
  ASSERT_EQ(r.exit_code, 0) << r.output;
  // The configuration the CLI ran with, its layout's defaults included.
  const dm::Config cfg = dm::resolve_input(dm::load_config(tmp / "apc.yaml", {})).config;
  std::vector<std::string> kinds{"cpu"};
  if (dmtest::gpu_unavailable_reason().empty()) kinds.insert(kinds.end(), {"copy", "zero_copy", "managed"});
  for (const std::string& kind : kinds) {
    int kept = 0;
    dm::Config c = cfg;
    dm::apply_overrides(c, {dm::parse_override("backend.kind=" + kind)});
    dm::Masker masker(c);
    for (int i = 0; i < frames; ++i) {
      const std::string id = "00000" + std::to_string(i);
      const cv::Mat depth = cv::imread((root / ("frame-" + id + ".depth.png")).string(), cv::IMREAD_UNCHANGED);
      const cv::Mat segm = cv::imread((root / "segm" / ("frame-" + id + ".segm.png")).string(), cv::IMREAD_UNCHANGED);
      const cv::Mat cli = dmcli::read_tiff(tmp / "out" / (id + ".tiff"));
      kept += cv::countNonZero(cli);
      EXPECT_TRUE(dmtest::same_pixels(cli, masker.mask(depth, segm))) << "frame " << id << " on " << kind;
    }
    EXPECT_GT(kept, 10000) << "the labels keep objects in the frames (else the comparison proves little)";
  }
}
