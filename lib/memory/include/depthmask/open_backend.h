// Opening the memory backend a configuration asks for: the one policy the CLI, the C++ facade
// (Masker), the C ABI and Python share.
#pragma once

#include <future>
#include <memory>

#include "depthmask/backend.h"
#include "depthmask/config.h"
#include "depthmask/platform.h"

namespace depthmask {

/// A started backend and why it was chosen.
struct OpenedBackend {
  std::unique_ptr<MemoryBackend> backend;
  BackendChoice choice;  ///< what `auto` (or the configured kind) resolved to, and the reason
};

/// Probes the platform (backend.device), chooses the backend (backend.kind; `auto` picks by the
/// probe), warns when the choice is degraded or the device's compatibility check says so, starts it
/// and applies backend.memory_limit_mb. backend.kind: cpu skips the probe: no CUDA call at all.
/// @throws PlatformError when the configured backend cannot be provided, or starting it fails (the
///         CUDA error in the message); ResourceError when the device has no memory for its start.
OpenedBackend open_backend(const Config& config);

/// open_backend() in two steps, so that CUDA's start-up (the probe opens the driver and a context on
/// backend.device: ~0.3 s on the H200 machine) runs beside other work: the constructor starts the
/// probe on a thread of its own (none for backend.kind: cpu, which never initialises CUDA); open()
/// waits for it, then chooses, starts and limits the backend on the calling thread, with
/// open_backend()'s messages and exceptions. Destroying an opener that was not opened still waits
/// for its probe (CUDA must not be torn down under it at exit).
class BackendOpener {
 public:
  explicit BackendOpener(const Config& config);
  BackendOpener(const BackendOpener&) = delete;
  BackendOpener& operator=(const BackendOpener&) = delete;
  ~BackendOpener();

  /// Once only. @throws what open_backend() throws; std::logic_error on a second call.
  OpenedBackend open();
  /// The probe's own time, CUDA's initialisation (ms); 0 when it did not run (cpu). Known after open().
  double cuda_init_ms() const { return cuda_init_ms_; }
  /// How long open() took: the wait for what of the probe other work did not hide, and the backend's start.
  double open_ms() const { return open_ms_; }

 private:
  struct Probed {
    PlatformInfo platform;
    double ms = 0;  // 0: not probed
  };
  Config config_;
  std::future<Probed> probe_;
  bool opened_ = false;
  double cuda_init_ms_ = 0, open_ms_ = 0;
};

}  // namespace depthmask
