// The compatibility guard on a real GPU: the driver's answer (cudaFuncGetAttributes on a kernel of
// this binary) and the rules over the recorded architecture list agree, and the device is usable.
#include <gtest/gtest.h>

#include <string>

#include "depthmask/compat.h"
#include "depthmask/platform.h"
#include "test_support.h"

#if DEPTHMASK_HAVE_CUDA
#include <cuda_runtime_api.h>

#include "depthmask/kernels/kernel_image.h"
#endif

namespace dm = depthmask;

TEST(CompatGpu, TheDriverAndTheRulesAgreeOnThisGpu) {
  DM_REQUIRE_GPU();
#if DEPTHMASK_HAVE_CUDA
  const dm::PlatformInfo& p = dmtest::platform();
  const dm::DeviceInfo& d = p.devices[0];
  ASSERT_TRUE(p.build.known) << "built with CUDA_ARCHITECTURES '" << p.build.list << "'";
  EXPECT_EQ(d.compat.level, dm::CompatLevel::Ok) << d.compat.message;
  ASSERT_EQ(d.compat.how.rfind("SASS sm_", 0), 0u) << d.compat.how;  // test builds carry this GPU's SASS
  const int predicted = std::stoi(d.compat.how.substr(8));

  ASSERT_EQ(cudaSetDevice(0), cudaSuccess);
  const dm::KernelImageProbe k = dm::probe_kernel_image();
  ASSERT_TRUE(k.loaded) << k.error;
  EXPECT_EQ(k.binary_version, predicted) << "the driver picked another cubin than the rules";

  // The rules alone (no probe) reach the same verdict.
  const dm::CompatInput in = dm::compat_input(p, d);
  const dm::CompatVerdict rules = dm::check_compat(in);
  EXPECT_EQ(rules.level, d.compat.level) << rules.message;
  EXPECT_EQ(rules.how, d.compat.how);
#endif
}

TEST(CompatGpu, ABuildWithoutThisGpusArchitectureIsRefusedByName) {
  DM_REQUIRE_GPU();
  const dm::DeviceInfo& d = dmtest::platform().devices[0];
  // A list that cannot run here: another major version's SASS only.
  dm::CompatInput in = dm::compat_input(dmtest::platform(), d);
  in.driver_version = in.runtime_version = dmtest::platform().runtime_version;
  in.build = dm::parse_cuda_architectures(d.cc_major == 7 ? "80-real" : "75-real", in.runtime_version);
  const dm::CompatVerdict v = dm::check_compat(in);
  EXPECT_EQ(v.level, dm::CompatLevel::Fail);
  EXPECT_NE(v.message.find("sm_" + std::to_string(d.cc_major) + std::to_string(d.cc_minor)), std::string::npos)
      << v.message;
}
