// The platform probe (what `depthmask info` prints) and the choice `backend.kind: auto` makes from it.
#pragma once

#include <cstddef>
#include <optional>
#include <string>
#include <vector>

#include "depthmask/backend_kind.h"
#include "depthmask/compat.h"

namespace depthmask {

struct DeviceInfo {
  int index = 0;
  std::string name;
  int cc_major = 0, cc_minor = 0;
  bool integrated = false;                 // cudaDevAttrIntegrated: shares DRAM with the CPU (Jetson)
  bool can_map_host_memory = false;        // cudaDevAttrCanMapHostMemory: zero-copy possible
  bool host_register_supported = false;    // cudaDevAttrHostRegisterSupported
  bool managed_memory = false;             // cudaDevAttrManagedMemory
  bool concurrent_managed_access = false;  // cudaDevAttrConcurrentManagedAccess: prefetch, CPU+GPU at once
  bool pageable_memory_access = false;     // cudaDevAttrPageableMemoryAccess: GPU reads plain malloc memory
  size_t free_bytes = 0, total_bytes = 0;
  CompatVerdict compat;  // can this binary's kernels run here (compat.h); Fail makes the device unusable
};

struct PlatformInfo {
  bool probed = true;          // false: unprobed_platform(), CUDA not asked (backend.kind: cpu)
  bool cuda_built = false;     // this binary carries CUDA kernels
  int runtime_version = 0;     // CUDART_VERSION style, e.g. 13000
  int driver_version = 0;      // 0 when there is no driver
  std::string problem;         // why no device is usable, when devices is empty
  std::string driver_release;  // "580.65.06" where /proc/driver/nvidia/version tells, else ""
  BuildTargets build;          // the architectures and toolkit the kernels were built for
  std::vector<DeviceInfo> devices;
  // CUDA_VISIBLE_DEVICES as this process saw it (CUDA applies it itself: `devices` are the visible
  // ones, numbered from 0); none when it is not set.
  std::optional<std::string> cuda_visible_devices;
};

// Queries the CUDA driver and every device's attributes. Free/total memory and the driver's choice of
// kernel image need a context on the device, so they are read only for `memory_device` (all devices
// when kAllDevices): a run on a shared multi-GPU node should not open contexts on GPUs it will not
// use (the others get the compatibility verdict from the rules alone). Never throws: problems land
// in `problem` and each device's `compat`.
inline constexpr int kAllDevices = -1;
PlatformInfo probe_platform(int memory_device = kAllDevices);

// What is known without a single CUDA call: whether this binary carries kernels and what they were
// built for; no devices, and `problem` says that CUDA was not initialised. The platform of a run whose
// backend.kind is cpu, which never initialises CUDA (the driver's start-up costs ~0.3 s on the H200
// machine, issue 16).
PlatformInfo unprobed_platform();

// The compatibility guard's facts for device `d` of `p` (no driver probe: the caller adds one).
CompatInput compat_input(const PlatformInfo& p, const DeviceInfo& d);

// "13.0" from 13000.
std::string cuda_version_string(int v);

struct BackendChoice {
  BackendKind kind = BackendKind::Cpu;
  int device = 0;
  std::string reason;     // one sentence, logged and printed in the summary
  bool degraded = false;  // auto fell back to cpu for lack of a GPU: worth a warning
};

// Maps the requested backend and the probe to a concrete backend and says why. An explicit GPU
// backend the platform cannot provide throws PlatformError (never a silent downgrade).
BackendChoice choose_backend(const BackendConfig& requested, const PlatformInfo& platform);

// When CUDA_VISIBLE_DEVICES is set (a job engine's GPU per task): one sentence with its value, the
// devices it leaves visible and the one `choice` uses; empty when it is not set.
std::string device_visibility(const BackendChoice& choice, const PlatformInfo& platform);

namespace detail {
// True once this process has initialised CUDA through the library: probe_platform() (the first CUDA call
// on every GPU path; also a CPU-only build's, so its tests hold there) or a GPU backend's start. Never set
// by backend.kind: cpu (tests/unit/test_startup.cpp; the driver's view: tests/gpu/test_startup_gpu.cpp).
bool cuda_initialised() noexcept;
void note_cuda_initialised() noexcept;
// CUDA_VISIBLE_DEVICES, or none when it is not set (PlatformInfo::cuda_visible_devices).
std::optional<std::string> cuda_visible_devices_env();
}  // namespace detail

}  // namespace depthmask
