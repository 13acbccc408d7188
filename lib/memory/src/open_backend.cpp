#include "depthmask/open_backend.h"

#include <chrono>
#include <stdexcept>
#include <string>

#include "depthmask/compat.h"
#include "depthmask/config.h"
#include "depthmask/detail/log.h"
#include "depthmask/errors.h"

namespace depthmask {

namespace {

using Clock = std::chrono::steady_clock;

double ms_since(Clock::time_point t0) { return std::chrono::duration<double, std::milli>(Clock::now() - t0).count(); }

// backend.kind: cpu needs nothing of the platform: no probe, so no CUDA call (issue 16).
bool probes(const Config& c) { return c.backend.kind != BackendKind::Cpu; }

// Chooses, warns, starts and limits the backend on `platform`: open_backend()'s second half.
OpenedBackend start_backend(const Config& c, const PlatformInfo& platform) {
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
  // A degraded choice's reason was the warning above: said once, not again here.
  if (!choice.degraded) detail::log().info("backend {} ({})", to_string(opened.backend->kind()), choice.reason);
  // A GPU per task (Slurm's --gpus-per-task, a pod's nvidia.com/gpu): which device that left us.
  if (const std::string v = device_visibility(choice, platform); !v.empty()) detail::log().info("{}", v);
  if (c.backend.memory_limit_mb > 0) {
    opened.backend->set_memory_limit(static_cast<size_t>(c.backend.memory_limit_mb) << 20);
    detail::log().info("backend.memory_limit_mb: frame buffers are capped at {} MiB", c.backend.memory_limit_mb);
  }
  detail::log().debug("{}", opened.backend->describe());
  return opened;
}

}  // namespace

OpenedBackend open_backend(const Config& c) {
  return start_backend(c, probes(c) ? probe_platform(c.backend.device) : unprobed_platform());
}

BackendOpener::BackendOpener(const Config& config) : config_(config) {
  if (!probes(config_)) return;
  // The probe reads only the device index; the thread shares nothing else with the caller.
  const int device = config_.backend.device;
  probe_ = std::async(std::launch::async, [device] {
    const Clock::time_point t0 = Clock::now();
    Probed p{probe_platform(device), 0};
    p.ms = ms_since(t0);
    return p;
  });
}

BackendOpener::~BackendOpener() {
  if (probe_.valid()) probe_.wait();
}

OpenedBackend BackendOpener::open() {
  DM_EXPECT(!opened_, std::logic_error, "BackendOpener::open() called twice");
  opened_ = true;
  const Clock::time_point t0 = Clock::now();
  OpenedBackend opened;
  if (probe_.valid()) {
    const Probed p = probe_.get();  // rethrows what the probe threw
    cuda_init_ms_ = p.ms;
    opened = start_backend(config_, p.platform);
  } else {
    opened = start_backend(config_, unprobed_platform());
  }
  open_ms_ = ms_since(t0);
  return opened;
}

}  // namespace depthmask
