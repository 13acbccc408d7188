#include "depthmask/open_backend.h"

#include <string>

#include "depthmask/compat.h"
#include "depthmask/config.h"
#include "depthmask/detail/log.h"
#include "depthmask/errors.h"

namespace depthmask {

OpenedBackend open_backend(const Config& c) {
  const PlatformInfo platform = probe_platform(c.backend.device);
  OpenedBackend opened;
  opened.choice = choose_backend(c.backend, platform);
  const BackendChoice& choice = opened.choice;
  if (choice.degraded) detail::log().warn("{}", choice.reason);
  if (choice.kind != BackendKind::Cpu) {
    const CompatVerdict& compat = platform.devices[static_cast<size_t>(choice.device)].compat;
    if (compat.level == CompatLevel::Warn) detail::log().warn("{}", compat.message);
  }
  try {
    opened.backend = make_backend(choice, platform);
  } catch (const CudaError& e) {
    throw PlatformError(std::string("cannot start backend '") + std::string(to_string(choice.kind)) + "': " + e.what());
  }
  detail::log().info("backend {} ({})", to_string(opened.backend->kind()), choice.reason);
  if (c.backend.memory_limit_mb > 0) {
    opened.backend->set_memory_limit(static_cast<size_t>(c.backend.memory_limit_mb) << 20);
    detail::log().info("backend.memory_limit_mb: frame buffers are capped at {} MiB", c.backend.memory_limit_mb);
  }
  detail::log().debug("{}", opened.backend->describe());
  return opened;
}

}  // namespace depthmask
