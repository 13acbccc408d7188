// Asks the driver which kernel image of this binary it would load on a device, before any launch:
// the run-time half of the compatibility guard (depthmask/compat.h holds the decision).
#pragma once

#include <string>

namespace depthmask {

// What the driver said when asked for a real kernel's attributes (cudaFuncGetAttributes).
struct KernelImageProbe {
  bool loaded = false;     // a SASS or JIT-compiled image was found for the device
  int binary_version = 0;  // cudaFuncAttributes::binaryVersion (major*10 + minor)
  int ptx_version = 0;     // cudaFuncAttributes::ptxVersion (0 without PTX)
  std::string error;       // the CUDA error name when not loaded (cudaErrorNoKernelImageForDevice ...)
};

// cudaFuncGetAttributes on a kernel of this library's fatbinary (built with the same
// CUDA_ARCHITECTURES and flags as every other kernel here) on the current device. Makes a context on
// it. Never throws; clears the error it may leave.
KernelImageProbe probe_kernel_image() noexcept;

}  // namespace depthmask
