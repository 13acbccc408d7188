// `depthmask info` and the compatibility guard end to end: the build's architectures and CUDA
// version are printed, each device gets a verdict, and where no driver is visible the reason names
// the NVIDIA runtime (what a container started without --gpus / --runtime nvidia sees).
#include <gtest/gtest.h>

#include <regex>

#include "test_support.h"

TEST(CliInfoCompat, PrintsWhatTheKernelsWereBuiltForAndTheVerdictPerDevice) {
  const dmtest::CmdResult r = dmtest::run_depthmask("info");
  SCOPED_TRACE(r.output);
  ASSERT_EQ(r.exit_code, 0);
  const depthmask::PlatformInfo& p = dmtest::platform();
  if (!p.cuda_built) {
    EXPECT_EQ(r.output.find("kernels built for"), std::string::npos);
    return;
  }
  EXPECT_TRUE(std::regex_search(r.output, std::regex(R"(kernels built for: [0-9a-z;,-]+ \(CUDA [0-9]+\.[0-9]+\))")));
  if (!p.devices.empty()) {
    // Test builds carry the SASS of the GPU they run on (the bundle: sm_90 for the H200).
    EXPECT_TRUE(std::regex_search(r.output, std::regex(R"(\n  kernels +ok: SASS sm_[0-9]+)")));
  } else if (p.driver_version == 0) {
    EXPECT_TRUE(dmtest::Contains(r.output, "--runtime nvidia"));
  }
}

TEST(CliInfoCompat, TheImageNameFromTheEnvironmentAppears) {
  if (!dmtest::platform().cuda_built) GTEST_SKIP() << "this build has no CUDA: no architectures to report";
  const dmtest::CmdResult r = dmtest::run_shell("DEPTHMASK_IMAGE=jetpack6 " + dmtest::depthmask_cmd() + " info");
  ASSERT_EQ(r.exit_code, 0) << r.output;
  EXPECT_TRUE(dmtest::Contains(r.output, "; image jetpack6"));
}
