// Factories of the concrete backends, one source file each (backends/*.cpp).
#pragma once

#include <memory>

#include "depthmask/backend.h"

namespace depthmask::detail {

std::unique_ptr<MemoryBackend> make_cpu_backend();
// These throw PlatformError in builds without CUDA, and when the device lacks what they need.
std::unique_ptr<MemoryBackend> make_copy_backend(const DeviceInfo& dev);
std::unique_ptr<MemoryBackend> make_zero_copy_backend(const DeviceInfo& dev);
std::unique_ptr<MemoryBackend> make_managed_backend(const DeviceInfo& dev);

}  // namespace depthmask::detail
