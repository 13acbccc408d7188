/// \file
/// Which memory backend runs the frames, and the `backend` section of the configuration that picks it:
/// all that the backends and the platform probe need of the configuration (config.h includes this).
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>

namespace depthmask {

/// Which memory backend masks the frames (docs/ARCHITECTURE.md, "Memory backends"); Auto chooses by the
/// platform (Masker::reason says why).
enum class BackendKind { Auto, Copy, ZeroCopy, Managed, Cpu };

/// The YAML words: auto, copy, zero_copy, managed, cpu. parse_backend_kind: nullopt for another word.
std::string_view to_string(BackendKind k);
/// The BackendKind a YAML word names; nullopt for another word.
std::optional<BackendKind> parse_backend_kind(std::string_view s);
/// The allowed words, comma separated, for messages.
std::string allowed_backend_kinds();

/// The configuration's `backend` section.
struct BackendConfig {
  BackendKind kind = BackendKind::Auto;  ///< backend.kind: auto, or the backend to use (an explicit one the
                                         ///< platform cannot give fails with PlatformError)
  int device = 0;                        ///< backend.device: the CUDA device's index
  /// A budget for the frame buffers the backend holds at once (all frames in flight), in MiB; 0 = none.
  /// An allocation beyond it fails that frame as running out of device memory would (ResourceError).
  int64_t memory_limit_mb = 0;
};

}  // namespace depthmask
