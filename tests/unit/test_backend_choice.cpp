// choose_backend's rules on fabricated probes: what auto picks on each kind of platform, and that an
// explicit GPU request the platform cannot meet is an error, never a silent downgrade.
#include <gtest/gtest.h>

#include "depthmask/backend.h"
#include "depthmask/errors.h"
#include "depthmask/platform.h"

namespace dm = depthmask;

namespace {

dm::DeviceInfo discrete() {
  dm::DeviceInfo d;
  d.name = "NVIDIA H200";
  d.cc_major = 9;
  d.can_map_host_memory = d.host_register_supported = d.managed_memory = d.concurrent_managed_access = true;
  return d;
}

dm::DeviceInfo orin() {
  dm::DeviceInfo d;
  d.name = "Orin";
  d.cc_major = 8;
  d.cc_minor = 7;
  d.integrated = d.can_map_host_memory = d.managed_memory = true;
  return d;
}

dm::PlatformInfo with(std::vector<dm::DeviceInfo> devs) {
  dm::PlatformInfo p;
  p.cuda_built = true;
  p.runtime_version = 13000;
  p.driver_version = 13000;
  p.devices = std::move(devs);
  return p;
}

dm::BackendConfig req(dm::BackendKind k, int device = 0) { return dm::BackendConfig{k, device}; }

}  // namespace

TEST(BackendChoice, AutoOnDiscreteGpuIsCopy) {
  const auto c = dm::choose_backend(req(dm::BackendKind::Auto), with({discrete()}));
  EXPECT_EQ(c.kind, dm::BackendKind::Copy);
  EXPECT_FALSE(c.degraded);
  EXPECT_NE(c.reason.find("discrete"), std::string::npos) << c.reason;
  EXPECT_NE(c.reason.find("H200"), std::string::npos) << c.reason;
}

TEST(BackendChoice, AutoOnIntegratedGpuWithMappedMemoryIsZeroCopy) {
  const auto c = dm::choose_backend(req(dm::BackendKind::Auto), with({orin()}));
  EXPECT_EQ(c.kind, dm::BackendKind::ZeroCopy);
  EXPECT_NE(c.reason.find("integrated"), std::string::npos) << c.reason;
  EXPECT_EQ(c.reason.find("Xavier"), std::string::npos) << c.reason;
}

TEST(BackendChoice, AutoBeforeXavierWarnsAboutUncachedPinnedMemory) {
  dm::DeviceInfo tx2 = orin();
  tx2.name = "TX2";
  tx2.cc_major = 6;
  tx2.cc_minor = 2;
  const auto c = dm::choose_backend(req(dm::BackendKind::Auto), with({tx2}));
  EXPECT_EQ(c.kind, dm::BackendKind::ZeroCopy);
  EXPECT_NE(c.reason.find("Xavier"), std::string::npos) << c.reason;
}

TEST(BackendChoice, AutoOnIntegratedWithoutMappingIsManaged) {
  dm::DeviceInfo d = orin();
  d.can_map_host_memory = false;
  EXPECT_EQ(dm::choose_backend(req(dm::BackendKind::Auto), with({d})).kind, dm::BackendKind::Managed);
}

TEST(BackendChoice, AutoWithoutDeviceFallsBackToCpuWithAWarningReason) {
  dm::PlatformInfo p = with({});
  p.problem = "no usable CUDA device (cudaErrorNoDevice)";
  const auto c = dm::choose_backend(req(dm::BackendKind::Auto), p);
  EXPECT_EQ(c.kind, dm::BackendKind::Cpu);
  EXPECT_TRUE(c.degraded);
  EXPECT_NE(c.reason.find("cudaErrorNoDevice"), std::string::npos) << c.reason;
}

TEST(BackendChoice, AutoInACpuOnlyBuildIsCpu) {
  dm::PlatformInfo p;
  p.cuda_built = false;
  const auto c = dm::choose_backend(req(dm::BackendKind::Auto), p);
  EXPECT_EQ(c.kind, dm::BackendKind::Cpu);
  EXPECT_NE(c.reason.find("without CUDA"), std::string::npos) << c.reason;
  EXPECT_FALSE(c.degraded) << "the only backend of the build: no warning";
}

TEST(BackendChoice, ForcedGpuBackendWithoutGpuIsAnError) {
  for (auto k : {dm::BackendKind::Copy, dm::BackendKind::ZeroCopy, dm::BackendKind::Managed}) {
    try {
      dm::choose_backend(req(k), with({}));
      ADD_FAILURE() << "expected PlatformError for " << dm::to_string(k);
    } catch (const dm::PlatformError& e) {
      EXPECT_NE(std::string(e.what()).find(std::string(dm::to_string(k))), std::string::npos) << e.what();
      EXPECT_NE(std::string(e.what()).find("needs a CUDA GPU"), std::string::npos) << e.what();
    }
  }
}

TEST(BackendChoice, ForcedBackendsCheckTheDevicesCapabilities) {
  dm::DeviceInfo d = discrete();
  d.can_map_host_memory = false;
  d.managed_memory = false;
  EXPECT_THROW(dm::choose_backend(req(dm::BackendKind::ZeroCopy), with({d})), dm::PlatformError);
  EXPECT_THROW(dm::choose_backend(req(dm::BackendKind::Managed), with({d})), dm::PlatformError);
  EXPECT_EQ(dm::choose_backend(req(dm::BackendKind::Copy), with({d})).kind, dm::BackendKind::Copy);
  // zero_copy on a discrete GPU is allowed when asked for: it can win for single-pass work.
  EXPECT_EQ(dm::choose_backend(req(dm::BackendKind::ZeroCopy), with({discrete()})).kind, dm::BackendKind::ZeroCopy);
}

TEST(BackendChoice, DeviceIndexOutOfRange) {
  EXPECT_THROW(dm::choose_backend(req(dm::BackendKind::Copy, 3), with({discrete()})), dm::PlatformError);
  // auto does not quietly fall back to the CPU when the configured device does not exist.
  try {
    dm::choose_backend(req(dm::BackendKind::Auto, 3), with({discrete()}));
    ADD_FAILURE() << "expected PlatformError";
  } catch (const dm::PlatformError& e) {
    EXPECT_NE(std::string(e.what()).find("backend.device is 3"), std::string::npos) << e.what();
  }
}

TEST(BackendChoice, ForcedCpuIsAlwaysCpu) {
  EXPECT_EQ(dm::choose_backend(req(dm::BackendKind::Cpu), with({discrete()})).kind, dm::BackendKind::Cpu);
}

TEST(BackendFactory, GpuBackendWithoutDeviceIsAPlatformError) {
  dm::BackendChoice c{dm::BackendKind::Copy, 0, "test", false};
  EXPECT_THROW(dm::make_backend(c, dm::PlatformInfo{}), dm::PlatformError);
}

TEST(BackendEnums, NamesRoundTrip) {
  for (auto k : {dm::BackendKind::Auto, dm::BackendKind::Copy, dm::BackendKind::ZeroCopy, dm::BackendKind::Managed,
                 dm::BackendKind::Cpu})
    EXPECT_EQ(dm::parse_backend_kind(dm::to_string(k)), k);
  EXPECT_FALSE(dm::parse_backend_kind("gpu").has_value());
  EXPECT_EQ(dm::cuda_version_string(13000), "13.0");
  EXPECT_EQ(dm::cuda_version_string(12060), "12.6");
}
