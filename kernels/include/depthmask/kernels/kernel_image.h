// Asks the driver which kernel image of this binary it would load on a device, before any launch:
// the run-time half of the compatibility guard (depthmask/compat.h holds the decision).
#pragma once

#include "depthmask/compat.h"

namespace depthmask {

// cudaFuncGetAttributes on a kernel of this library's fatbinary (built with the same
// CUDA_ARCHITECTURES and flags as every other kernel here) on the current device. Makes a context on
// it. Never throws; clears the error it may leave.
KernelImageProbe probe_kernel_image() noexcept;

}  // namespace depthmask
