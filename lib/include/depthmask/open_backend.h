// Opening the memory backend a configuration asks for: the one policy the CLI, the C++ facade
// (Masker), the C ABI and Python share.
#pragma once

#include <memory>

#include "depthmask/backend.h"
#include "depthmask/platform.h"

namespace depthmask {

struct Config;

/// A started backend and why it was chosen.
struct OpenedBackend {
  std::unique_ptr<MemoryBackend> backend;
  BackendChoice choice;  ///< what `auto` (or the configured kind) resolved to, and the reason
};

/// Probes the platform (backend.device), chooses the backend (backend.kind; `auto` picks by the
/// probe), warns when the choice is degraded or the device's compatibility check says so, starts it
/// and applies backend.memory_limit_mb.
/// @throws PlatformError when the configured backend cannot be provided, or starting it fails (the
///         CUDA error in the message); ResourceError when the device has no memory for its start.
OpenedBackend open_backend(const Config& config);

}  // namespace depthmask
