// probe_platform for CUDA builds: driver/runtime versions and each device's attributes, read with
// cudaDeviceGetAttribute (CUDA 13 removed several cudaDeviceProp fields; attributes exist in 12 and 13).
#include <cuda_runtime_api.h>

#include <cstdio>

#include "depthmask/compat.h"
#include "depthmask/detail/cuda_check.h"
#include "depthmask/detail/read_file.h"
#include "depthmask/errors.h"
#include "depthmask/kernels/kernel_image.h"
#include "depthmask/kernels/mask_kernel.h"
#include "depthmask/platform.h"

namespace depthmask {

namespace {
bool attr(cudaDeviceAttr a, int dev) {
  int v = 0;
  return cudaDeviceGetAttribute(&v, a, dev) == cudaSuccess && v != 0;
}
int attr_int(cudaDeviceAttr a, int dev) {
  int v = 0;
  return cudaDeviceGetAttribute(&v, a, dev) == cudaSuccess ? v : 0;
}
// The kernel module's release ("580.65.06") for messages; absent on some Jetsons and in containers
// that do not see /proc/driver.
std::string driver_release() {
  try {
    return parse_nvidia_driver_release(
        detail::read_file_bounded("/proc/driver/nvidia/version", size_t{1} << 16, "driver version file"));
  } catch (const InputError&) {
    return "";
  }
}
}  // namespace

PlatformInfo probe_platform(int memory_device) {
  detail::note_cuda_initialised();  // cudaGetDeviceCount below starts the driver
  PlatformInfo p;
  p.cuda_visible_devices = detail::cuda_visible_devices_env();
  p.cuda_built = have_cuda_kernels();
  p.runtime_version = CUDART_VERSION;
  (void)cudaRuntimeGetVersion(&p.runtime_version);
  if (cudaDriverGetVersion(&p.driver_version) != cudaSuccess) p.driver_version = 0;
  p.driver_release = driver_release();
  p.build = this_build_targets();
  int n = 0;
  const cudaError_t e = cudaGetDeviceCount(&n);
  if (e != cudaSuccess) {
    (void)cudaGetLastError();
    p.problem = std::string("no usable CUDA device (") + cudaGetErrorName(e) + ": " + cudaGetErrorString(e) + ")";
    // A driver older than the runtime (or none): say which and what to do, not only the error's name.
    const CompatVerdict drv = check_driver(p.runtime_version, p.driver_version, p.build);
    if (p.cuda_built && drv.level == CompatLevel::Fail) p.problem = drv.message + " [" + cudaGetErrorName(e) + "]";
    return p;
  }
  if (n == 0) {
    p.problem = "no CUDA device found";
    return p;
  }
  int current = 0;
  (void)cudaGetDevice(&current);
  bool switched = false;  // cudaSetDevice creates a context (CUDA 12+): only restore what was changed
  for (int i = 0; i < n; ++i) {
    DeviceInfo d;
    d.index = i;
    char name[256] = {};
    // cudaDeviceGetName is not in the runtime API; the props struct still carries the name.
    cudaDeviceProp prop{};
    if (cudaGetDeviceProperties(&prop, i) == cudaSuccess) std::snprintf(name, sizeof name, "%s", prop.name);
    d.name = name[0] ? name : "CUDA device " + std::to_string(i);
    d.cc_major = attr_int(cudaDevAttrComputeCapabilityMajor, i);
    d.cc_minor = attr_int(cudaDevAttrComputeCapabilityMinor, i);
    d.integrated = attr(cudaDevAttrIntegrated, i);
    d.can_map_host_memory = attr(cudaDevAttrCanMapHostMemory, i);
    d.host_register_supported = attr(cudaDevAttrHostRegisterSupported, i);
    d.managed_memory = attr(cudaDevAttrManagedMemory, i);
    d.concurrent_managed_access = attr(cudaDevAttrConcurrentManagedAccess, i);
    d.pageable_memory_access = attr(cudaDevAttrPageableMemoryAccess, i);
    CompatInput ci = compat_input(p, d);
    if (memory_device != kAllDevices && memory_device != i) {
      // not asked for: no context on this device
    } else if (cudaSetDevice(i) == cudaSuccess) {
      switched = true;
      if (cudaMemGetInfo(&d.free_bytes, &d.total_bytes) != cudaSuccess) (void)cudaGetLastError();
      ci.probe = probe_kernel_image();
    } else {
      (void)cudaGetLastError();
    }
    d.compat = check_compat(ci);
    p.devices.push_back(d);
  }
  if (switched) (void)cudaSetDevice(current);
  return p;
}

}  // namespace depthmask
