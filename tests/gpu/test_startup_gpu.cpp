// Start-up (issue 16), asked of the CUDA driver itself: a process that masks only on the cpu backend
// never initialises the driver, so it pays nothing of CUDA's ~0.3 s start-up; a GPU backend does
// initialise it (the check can fail). The driver API is looked up in libcuda.so.1 at run time:
// linking it would stop the suite from starting where there is no driver. Run each case in a process
// of its own (ctest does): what ran before in the process would have initialised CUDA.
#include <dlfcn.h>
#include <gtest/gtest.h>

#include <string>

#include "depthmask/masker.h"
#include "depthmask/platform.h"
#include "startup_support.h"
#include "test_support.h"

namespace dm = depthmask;
using dmtest::TempDir;

namespace {

// The driver API's signatures (cuda.h), with CUresult and CUdevice as int.
using CuInit = int (*)(unsigned);
using CuDeviceGetCount = int (*)(int*);
using CuDeviceGet = int (*)(int*, int);
using CuDevicePrimaryCtxGetState = int (*)(int, unsigned*, int*);
constexpr int kCudaSuccess = 0;
constexpr int kCudaErrorNotInitialized = 3;  // CUDA_ERROR_NOT_INITIALIZED: cuInit was never called

template <class F>
F entry(void* lib, const char* name) {
  return reinterpret_cast<F>(dlsym(lib, name));
}

// Whether anything in this process initialised the driver: no libcuda loaded (the runtime loads it on
// its first call that needs the driver), or a driver that answers CUDA_ERROR_NOT_INITIALIZED.
bool driver_initialised() {
  void* lib = dlopen("libcuda.so.1", RTLD_NOW | RTLD_NOLOAD);
  if (lib == nullptr) return false;
  const auto count = entry<CuDeviceGetCount>(lib, "cuDeviceGetCount");
  int n = 0;
  const bool initialised = count == nullptr || count(&n) != kCudaErrorNotInitialized;
  dlclose(lib);
  return initialised;
}

// Whether device 0's primary context (the one the runtime creates) is active; initialises the driver.
bool primary_context_active(void* lib) {
  const auto init = entry<CuInit>(lib, "cuInit");
  const auto get = entry<CuDeviceGet>(lib, "cuDeviceGet");
  const auto state = entry<CuDevicePrimaryCtxGetState>(lib, "cuDevicePrimaryCtxGetState");
  if (init == nullptr || get == nullptr || state == nullptr || init(0) != kCudaSuccess) return false;
  int dev = 0;
  unsigned flags = 0;
  int active = 0;
  if (get(&dev, 0) != kCudaSuccess || state(dev, &flags, &active) != kCudaSuccess) return false;
  return active != 0;
}

}  // namespace

TEST(StartupGpu, CpuRunsLeaveTheCudaDriverUninitialised) {
  if (driver_initialised())
    GTEST_SKIP() << "the CUDA driver was initialised before this case: run it in a process of its own (ctest does)";
  TempDir tmp;
  EXPECT_EQ(dmtest::run_everything_on_cpu(tmp.path()).ok, 2u);
  EXPECT_FALSE(driver_initialised()) << "a cpu run initialised the CUDA driver (a CUDA runtime call on the cpu path)";
  EXPECT_FALSE(dm::detail::cuda_initialised());

  void* lib = dlopen("libcuda.so.1", RTLD_NOW);
  if (lib == nullptr) GTEST_SKIP() << "GPU test skipped: no CUDA driver (libcuda.so.1) here, nothing to initialise";
  EXPECT_FALSE(primary_context_active(lib)) << "a cpu run left a CUDA context behind";
  // The check sees a GPU backend's start: it creates device 0's primary context.
  const std::string no_gpu = dmtest::gpu_unavailable_reason();
  if (!no_gpu.empty()) {
    dlclose(lib);
    GTEST_SKIP() << "GPU test skipped (the cpu part passed): " << no_gpu;
  }
  const dm::Masker gpu = dm::Masker::from_yaml("depth: {scale: 0.001}\n", {"backend.kind=copy"});
  EXPECT_TRUE(primary_context_active(lib));
  EXPECT_TRUE(dm::detail::cuda_initialised());
  dlclose(lib);
}
