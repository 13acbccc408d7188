// A GPU per task (issue 19): job engines give each shard its GPU through CUDA_VISIBLE_DEVICES, which
// CUDA applies itself. With the variable naming the first device the run says so and uses it; with
// it empty, `auto` says the variable hid every device and runs on the CPU (an explicit GPU backend
// stops with exit 3 naming it); the outputs are the same bytes every way. Skips with the reason when
// there is no GPU.
#include <gtest/gtest.h>

#include <map>
#include <string>
#include <vector>

#include "test_support.h"

namespace {

namespace fs = std::filesystem;
using dmtest::q;

bool contains(const std::string& hay, const std::string& needle) { return hay.find(needle) != std::string::npos; }

std::map<std::string, std::vector<uint8_t>> tiffs(const fs::path& dir) {
  std::map<std::string, std::vector<uint8_t>> out;
  for (const auto& e : fs::directory_iterator(dir))
    if (e.path().extension() == ".tiff") out[e.path().filename().string()] = dmtest::read_bytes(e.path());
  return out;
}

TEST(ShardGpu, CudaVisibleDevicesPicksTheDeviceOrHidesThemAll) {
  DM_REQUIRE_GPU();
  dmtest::TempDir tmp;
  const auto synth = dmtest::run_depthmask("synth --output " + q(tmp / "data") + " --frames 6 --size 64x48");
  ASSERT_EQ(synth.exit_code, 0) << synth.output;
  auto run = [&](const std::string& env, const std::string& extra, const fs::path& out) {
    return dmtest::run_shell(env + " " + dmtest::depthmask_cmd() + " run --config " +
                             q(tmp / "data" / "depthmask.yaml") + " --output " + q(out) + " --shard 0/1 " + extra);
  };

  const std::string name = dmtest::platform().devices.front().name;
  const auto first = run("CUDA_VISIBLE_DEVICES=0", "", tmp / "first");
  ASSERT_EQ(first.exit_code, 0) << first.output;
  EXPECT_TRUE(contains(first.output, "CUDA_VISIBLE_DEVICES=\"0\" leaves 1 CUDA device(s) visible")) << first.output;
  EXPECT_TRUE(contains(first.output, "uses visible device 0 (" + name + ")")) << first.output;
  EXPECT_FALSE(contains(first.output, "backend: cpu")) << first.output;

  const auto hidden = run("CUDA_VISIBLE_DEVICES=", "", tmp / "hidden");
  ASSERT_EQ(hidden.exit_code, 0) << hidden.output;
  EXPECT_TRUE(contains(hidden.output, "CUDA_VISIBLE_DEVICES=\"\" hides every CUDA device")) << hidden.output;
  EXPECT_TRUE(contains(hidden.output, "backend: cpu")) << hidden.output;

  const auto forced = run("CUDA_VISIBLE_DEVICES=", "--backend copy", tmp / "forced");
  EXPECT_EQ(forced.exit_code, 3) << forced.output;
  EXPECT_TRUE(contains(forced.output, "CUDA_VISIBLE_DEVICES")) << forced.output;

  EXPECT_EQ(tiffs(tmp / "first"), tiffs(tmp / "hidden")) << "GPU and CPU outputs are the same bytes";
  EXPECT_EQ(tiffs(tmp / "first").size(), 6u);
}

}  // namespace
