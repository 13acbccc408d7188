// The compatibility guard's decision (compat.h) on fabricated devices, drivers and build lists: which
// kernel image runs (exact SASS, same-major SASS on desktop GPUs only, PTX JIT only upwards and only
// with a new enough driver), driver against runtime, and the message a mismatched image gives.
#include <gtest/gtest.h>

#include <stdexcept>

#include "depthmask/compat.h"
#include "depthmask/errors.h"
#include "depthmask/platform.h"

namespace dm = depthmask;

namespace {

dm::CompatInput device(const char* name, int major, int minor, bool integrated, const char* archs, int toolkit,
                       int driver = 13000, int runtime = 13000) {
  dm::CompatInput in;
  in.device_name = name;
  in.cc_major = major;
  in.cc_minor = minor;
  in.integrated = integrated;
  in.driver_version = driver;
  in.runtime_version = runtime;
  in.build = dm::parse_cuda_architectures(archs, toolkit);
  return in;
}

bool has(const std::string& s, const char* what) { return s.find(what) != std::string::npos; }

// The list the top-level CMakeLists.txt builds by default with CUDA 13.
constexpr const char* kDefault13 = "75-real;80-real;86-real;87-real;89-real;90-real;100-real;110-real;120";

}  // namespace

TEST(CompatParse, CMakeSyntax) {
  const dm::BuildTargets b = dm::parse_cuda_architectures(kDefault13, 13000);
  ASSERT_EQ(b.sass.size(), 9u);
  EXPECT_EQ(b.sass.front().cc, 75);
  EXPECT_EQ(b.sass.back().cc, 120);
  ASSERT_EQ(b.ptx.size(), 1u);  // only the plain "120" carries PTX
  EXPECT_EQ(b.ptx[0].cc, 120);
  EXPECT_TRUE(b.known);
  EXPECT_EQ(b.toolkit_version, 13000);

  const dm::BuildTargets v = dm::parse_cuda_architectures("90-virtual, 90a-real,100f", 12090);  // commas, spaces
  ASSERT_EQ(v.sass.size(), 2u);
  EXPECT_EQ(dm::to_string(v.sass[0], false), "sm_90a");
  EXPECT_EQ(dm::to_string(v.sass[1], false), "sm_100f");
  ASSERT_EQ(v.ptx.size(), 2u);
  EXPECT_EQ(dm::to_string(v.ptx[0], true), "compute_90");
  EXPECT_EQ(dm::to_string(v.ptx[1], true), "compute_100f");

  EXPECT_FALSE(dm::parse_cuda_architectures("native", 13000).known);
  EXPECT_FALSE(dm::parse_cuda_architectures("all-major", 13000).known);
  EXPECT_THROW(dm::parse_cuda_architectures("sm_87", 13000), std::invalid_argument);
  EXPECT_THROW(dm::parse_cuda_architectures("87-fast", 13000), std::invalid_argument);
  EXPECT_THROW(dm::parse_cuda_architectures("8700", 13000), std::invalid_argument);
}

TEST(Compat, ExactSassRuns) {
  const dm::CompatVerdict v = dm::check_compat(device("Orin", 8, 7, true, "87-real", 12060, 12060, 12060));
  EXPECT_EQ(v.level, dm::CompatLevel::Ok) << v.message;
  EXPECT_EQ(v.how, "SASS sm_87");
  EXPECT_TRUE(v.message.empty()) << v.message;
  const dm::CompatVerdict h = dm::check_compat(device("NVIDIA H200", 9, 0, false, kDefault13, 13000));
  EXPECT_EQ(h.level, dm::CompatLevel::Ok) << h.message;
  EXPECT_EQ(h.how, "SASS sm_90");
}

TEST(Compat, DesktopSassRunsOnANewerMinorOfTheSameMajor) {
  // sm_86 SASS on an RTX 40xx (8.9); the highest one that runs is chosen.
  const dm::CompatVerdict v = dm::check_compat(device("RTX 4090", 8, 9, false, "80-real;86-real", 13000));
  EXPECT_EQ(v.level, dm::CompatLevel::Ok) << v.message;
  EXPECT_TRUE(has(v.how, "sm_86")) << v.how;
  EXPECT_TRUE(has(v.how, "same major")) << v.how;
}

TEST(Compat, SassNeverRunsOnAnOlderMinorOrAnotherMajor) {
  const dm::CompatVerdict older = dm::check_compat(device("RTX 3080", 8, 6, false, "89-real", 13000));
  EXPECT_EQ(older.level, dm::CompatLevel::Fail);
  const dm::CompatVerdict major =
      dm::check_compat(device("NVIDIA H200", 9, 0, false, "80-real;86-real;89-real", 13000));
  EXPECT_EQ(major.level, dm::CompatLevel::Fail);
  EXPECT_TRUE(has(major.message, "sm_80, sm_86, sm_89")) << major.message;
  EXPECT_TRUE(has(major.message, "this GPU (NVIDIA H200) is sm_90")) << major.message;
  EXPECT_TRUE(has(major.message, "x86_64 image")) << major.message;
  EXPECT_TRUE(has(major.message, "-DCMAKE_CUDA_ARCHITECTURES=90")) << major.message;
}

TEST(Compat, TegraRunsOnlyItsOwnSass) {
  // Desktop cubins do not run on Tegra, not even of the same major with a lower minor ...
  const dm::CompatVerdict orin = dm::check_compat(device("Orin", 8, 7, true, "80-real;86-real", 12060, 12060, 12060));
  EXPECT_EQ(orin.level, dm::CompatLevel::Fail);
  EXPECT_TRUE(has(orin.message, "exact sm")) << orin.message;
  EXPECT_TRUE(has(orin.message, "JetPack 6 image")) << orin.message;
  // ... and Tegra cubins do not run on desktop GPUs of a higher minor.
  const dm::CompatVerdict ada = dm::check_compat(device("RTX 4090", 8, 9, false, "87-real", 12060, 12060, 12060));
  EXPECT_EQ(ada.level, dm::CompatLevel::Fail);
  // An integrated GPU that is not a Tegra one (a GB10-like 12.1) follows the desktop rule.
  const dm::CompatVerdict igpu = dm::check_compat(device("GB10", 12, 1, true, "120-real", 13000));
  EXPECT_EQ(igpu.level, dm::CompatLevel::Ok) << igpu.message;
}

TEST(Compat, JetPack6ImageOnThorSaysUseTheJetPack7Image) {
  dm::CompatInput in = device("NVIDIA Thor", 11, 0, true, "87-real", 12060, 13000, 12060);
  in.build.image = "jetpack6";
  in.driver_release = "580.00";
  const dm::CompatVerdict v = dm::check_compat(in);
  EXPECT_EQ(v.level, dm::CompatLevel::Fail);
  EXPECT_TRUE(has(v.message, "this image (jetpack6) was built for sm_87 and CUDA 12.6")) << v.message;
  EXPECT_TRUE(has(v.message, "is sm_110 with a driver for CUDA 13.0 (driver 580.00)")) << v.message;
  EXPECT_TRUE(has(v.message, "use the JetPack 7 image")) << v.message;
}

TEST(Compat, JetPack7ImageOnOrinSaysUseTheJetPack6Image) {
  const dm::CompatVerdict v = dm::check_compat(device("Orin", 8, 7, true, "110-real", 13000));
  EXPECT_EQ(v.level, dm::CompatLevel::Fail);
  EXPECT_TRUE(has(v.message, "JetPack 6 image")) << v.message;
  const dm::CompatVerdict xavier = dm::check_compat(device("Xavier", 7, 2, true, "87-real", 12060, 12060, 12060));
  EXPECT_EQ(xavier.level, dm::CompatLevel::Fail);
  EXPECT_TRUE(has(xavier.message, "-DCMAKE_CUDA_ARCHITECTURES=72")) << xavier.message;
}

TEST(Compat, PtxJitsOnlyToTheSameOrANewerCapability) {
  // The default list's compute_120 PTX serves a 12.1 GPU it has no SASS for: a warning, not a failure.
  const dm::CompatVerdict up = dm::check_compat(device("future", 12, 1, false, "90-real;120-virtual", 13000));
  EXPECT_EQ(up.level, dm::CompatLevel::Warn);
  EXPECT_EQ(up.how, "PTX compute_120 JIT-compiled for sm_121");
  EXPECT_TRUE(has(up.message, "JIT")) << up.message;
  // compute_90 PTX cannot go down to 8.0.
  const dm::CompatVerdict down = dm::check_compat(device("A100", 8, 0, false, "90", 13000));
  EXPECT_EQ(down.level, dm::CompatLevel::Fail);
  EXPECT_TRUE(has(down.message, "sm_90 + compute_90")) << down.message;
  // The newest PTX that fits is used; arch-specific PTX only on its own capability.
  const dm::CompatVerdict pick =
      dm::check_compat(device("B200", 10, 0, false, "75-virtual;90-virtual;120-virtual", 13000));
  EXPECT_EQ(pick.how, "PTX compute_90 JIT-compiled for sm_100");
  EXPECT_EQ(dm::check_compat(device("B200", 10, 0, false, "90a-virtual", 13000)).level, dm::CompatLevel::Fail);
}

TEST(Compat, PtxFromANewerToolkitThanTheDriverCannotJit) {
  const dm::CompatVerdict v = dm::check_compat(device("B200", 10, 0, false, "90-virtual", 13000, 12080, 12080));
  EXPECT_EQ(v.level, dm::CompatLevel::Fail);
  EXPECT_TRUE(has(v.message, "needs a driver for CUDA 13.0 or newer")) << v.message;
}

TEST(Compat, ArchAndFamilySpecificSass) {
  EXPECT_EQ(dm::check_compat(device("H200", 9, 0, false, "90a-real", 13000)).level, dm::CompatLevel::Ok);
  EXPECT_EQ(dm::check_compat(device("next", 9, 1, false, "90a-real", 13000)).level, dm::CompatLevel::Fail);
  EXPECT_EQ(dm::check_compat(device("B300", 10, 3, false, "100f-real", 13000)).level, dm::CompatLevel::Ok);
}

TEST(Compat, DriverOlderThanTheRuntime) {
  // Another major: unusable, with the branch CUDA 13 needs.
  const dm::CompatVerdict major = dm::check_compat(device("Orin", 8, 7, true, "87-real", 13000, 12060, 13000));
  EXPECT_EQ(major.level, dm::CompatLevel::Fail);
  EXPECT_TRUE(has(major.message, "CUDA 13.0 runtime, but the driver supports CUDA 12.6")) << major.message;
  EXPECT_TRUE(has(major.message, "driver 580 or newer")) << major.message;
  EXPECT_TRUE(has(major.message, "JetPack 6 image")) << major.message;
  EXPECT_EQ(dm::check_driver(13000, 12080, {}).level, dm::CompatLevel::Fail);
  // Same major, older minor: minor version compatibility, a warning.
  const dm::CompatVerdict minor = dm::check_compat(device("L4", 8, 9, false, "89-real", 12080, 12020, 12080));
  EXPECT_EQ(minor.level, dm::CompatLevel::Warn);
  EXPECT_EQ(minor.how, "SASS sm_89");
  EXPECT_TRUE(has(minor.message, "minor version compatibility")) << minor.message;
  // Newer driver than runtime: fine (backward compatibility).
  EXPECT_EQ(dm::check_compat(device("Orin", 8, 7, true, "87-real", 12060, 13000, 12060)).level, dm::CompatLevel::Ok);
}

TEST(Compat, NoDriverSaysHowToRunTheContainer) {
  const dm::CompatVerdict v = dm::check_driver(13000, 0, {});
  EXPECT_EQ(v.level, dm::CompatLevel::Fail);
  EXPECT_TRUE(has(v.message, "--runtime nvidia")) << v.message;
}

TEST(Compat, TheDriversProbeOverridesTheRules) {
  // Rules say no, the driver loaded an image (it knows best).
  dm::CompatInput in = device("Orin", 8, 7, true, "86-real", 12060, 12060, 12060);
  in.probe = dm::KernelImageProbe{true, 87, 0, ""};
  EXPECT_EQ(dm::check_compat(in).level, dm::CompatLevel::Ok);
  // Rules say yes, the driver found nothing: unusable, naming the driver's error.
  in = device("H200", 9, 0, false, "90-real", 13000);
  in.probe = dm::KernelImageProbe{false, 0, 0, "cudaErrorNoKernelImageForDevice"};
  const dm::CompatVerdict v = dm::check_compat(in);
  EXPECT_EQ(v.level, dm::CompatLevel::Fail);
  EXPECT_TRUE(has(v.message, "cudaErrorNoKernelImageForDevice")) << v.message;
  // "native" cannot be checked by rules: a warning alone, ok with the probe.
  in = device("H200", 9, 0, false, "native", 13000);
  EXPECT_EQ(dm::check_compat(in).level, dm::CompatLevel::Warn);
  in.probe = dm::KernelImageProbe{true, 90, 0, ""};
  EXPECT_EQ(dm::check_compat(in).level, dm::CompatLevel::Ok);
}

TEST(Compat, DriverReleaseFromProc) {
  EXPECT_EQ(dm::parse_nvidia_driver_release(
                "NVRM version: NVIDIA UNIX x86_64 Kernel Module  580.159.04  Thu Oct  9 2025\nGCC version:  gcc 12\n"),
            "580.159.04");
  EXPECT_EQ(
      dm::parse_nvidia_driver_release("NVRM version: NVIDIA UNIX Open Kernel Module for aarch64  580.00  Release"),
      "580.00");
  EXPECT_EQ(dm::parse_nvidia_driver_release(""), "");
}

TEST(Compat, UnusableDeviceMakesAutoUseTheCpuAndAnExplicitGpuBackendFail) {
  dm::PlatformInfo p;
  p.cuda_built = true;
  p.runtime_version = p.driver_version = 13000;
  dm::DeviceInfo thor;
  thor.name = "NVIDIA Thor";
  thor.cc_major = 11;
  thor.integrated = thor.can_map_host_memory = thor.managed_memory = true;
  thor.compat = dm::check_compat(device("NVIDIA Thor", 11, 0, true, "87-real", 12060, 13000, 12060));
  p.devices = {thor};
  const dm::BackendChoice a = dm::choose_backend(dm::BackendConfig{dm::BackendKind::Auto, 0}, p);
  EXPECT_EQ(a.kind, dm::BackendKind::Cpu);
  EXPECT_TRUE(a.degraded);
  EXPECT_TRUE(has(a.reason, "JetPack 7 image")) << a.reason;
  try {
    dm::choose_backend(dm::BackendConfig{dm::BackendKind::ZeroCopy, 0}, p);
    FAIL() << "an explicit GPU backend on an unusable device must throw";
  } catch (const dm::PlatformError& e) {
    EXPECT_TRUE(has(e.what(), "was built for sm_87")) << e.what();
  }
}
