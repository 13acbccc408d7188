// Can this binary's CUDA kernels run on this GPU with this driver? Decided before the first launch, so
// a container built for the wrong Jetson or an old driver gets one sentence that says what to use
// instead of "no kernel image is available for execution on the device" in the middle of a run.
//
// The rules (CUDA programming guide, "Binary Compatibility" / "PTX Compatibility"; CUDA Compatibility
// guide, "Minor Version Compatibility"):
// - a cubin (SASS) built for compute capability X.y runs on devices of capability X.z with z >= y
//   (same major, same or higher minor) — on desktop/server GPUs only: on Tegra (Jetson) a cubin runs
//   only on the capability it was built for, and desktop cubins never run on Tegra or back;
//   arch-specific cubins (sm_90a) run only on that exact capability, family ones (sm_100f) on that
//   major with a higher or equal minor;
// - PTX for compute_XY is JIT-compiled by the driver for any device of capability >= X.Y, provided the
//   driver is at least as new as the toolkit that produced the PTX (else cudaErrorUnsupportedPtxVersion);
// - the driver must support the runtime's major version (CUDA 12.x needs driver >= 525, 13.x >= 580); a
//   driver of the same major but an older minor works through minor version compatibility, without
//   JIT for PTX newer than the driver.
// Jetson Thor is sm_110 from CUDA 13 on (it was sm_101 in CUDA 12.8/12.9).
#pragma once

#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "depthmask/kernels/kernel_image.h"  // KernelImageProbe

namespace depthmask {

// One entry of the build's architecture list: capability as major*10 + minor (87, 110) and nvcc's
// suffix: 0, 'a' (arch-specific) or 'f' (family-specific).
struct CudaArch {
  int cc = 0;
  char suffix = 0;
};
std::string to_string(const CudaArch& a, bool ptx);  // "sm_87", "compute_120", "sm_90a"

// What the binary carries.
struct BuildTargets {
  std::vector<CudaArch> sass;  // cubins
  std::vector<CudaArch> ptx;   // PTX the driver can JIT
  bool known = true;           // false for "all", "native" ...: only the run-time probe can tell
  std::string list;            // the CMAKE_CUDA_ARCHITECTURES text, for messages
  int toolkit_version = 0;     // the nvcc that compiled the kernels, CUDART_VERSION style (12060)
  std::string image;           // the container image's name when it says (DEPTHMASK_IMAGE), else ""
};

// Parses CMake's CUDA_ARCHITECTURES syntax, ';' or ',' separated: "87" (SASS + PTX), "87-real"
// (SASS), "87-virtual" (PTX), "90a-real", "100f". "all", "all-major" and "native" give known = false.
// Throws std::invalid_argument on anything else.
BuildTargets parse_cuda_architectures(std::string_view list, int toolkit_version);

struct CompatInput {
  std::string device_name;
  int cc_major = 0, cc_minor = 0;
  bool integrated = false;     // cudaDevAttrIntegrated: a Jetson when cc is a Tegra one
  int driver_version = 0;      // cudaDriverGetVersion (CUDA version the driver supports), 0 = none
  int runtime_version = 0;     // cudaRuntimeGetVersion
  std::string driver_release;  // "580.65.06" when the platform tells (/proc/driver/nvidia/version)
  BuildTargets build;
  std::optional<KernelImageProbe> probe;  // the driver's own answer, when a context could be made
};

enum class CompatLevel { Ok, Warn, Fail };
std::string_view to_string(CompatLevel l);

struct CompatVerdict {
  CompatLevel level = CompatLevel::Ok;
  std::string how;      // which image runs: "SASS sm_87", "PTX compute_120 JIT-compiled for sm_121"
  std::string message;  // empty when Ok without remarks; otherwise what is wrong and what to use
};

// The driver against the runtime alone (also used when cudaGetDeviceCount already failed).
CompatVerdict check_driver(int runtime_version, int driver_version, const BuildTargets& build);

// The whole decision: driver, then which kernel image the device would run. A probe, when given,
// overrides the static rules (the driver knows best), but the message still says what to use.
// Pure: no CUDA calls.
CompatVerdict check_compat(const CompatInput& in);

// True for Tegra (Jetson) capabilities: 5.3 TX1, 6.2 TX2, 7.2 Xavier, 8.7 Orin, 10.1 / 11.0 Thor.
bool is_tegra_cc(int cc_major, int cc_minor);

// "580.65.06" from /proc/driver/nvidia/version's text ("NVRM version: NVIDIA UNIX ... Kernel Module
// 580.65.06  ..."), "" when absent.
std::string parse_nvidia_driver_release(std::string_view proc_version_text);

// This binary's targets (recorded at build time; image from the DEPTHMASK_IMAGE environment variable).
BuildTargets this_build_targets();

}  // namespace depthmask
