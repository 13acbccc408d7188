/// \file
/// The failure taxonomy and the error types of the lowest layer. The library (depthmask/errors.h)
/// re-exports these and adds its own (configuration, input, output), each of one failure class; the
/// CLI maps a class to its exit code, the C ABI to its status code.
#pragma once

#include <sstream>
#include <stdexcept>
#include <string>
#include <string_view>

namespace depthmask {

/// What kind of thing went wrong, for everyone who must decide what to do about it.
enum class Failure {
  Input,        ///< a missing, unreadable, corrupt or mismatched input (a file, a frame, a source)
  Config,       ///< a bad configuration key or value, or a bad command line
  Platform,     ///< the machine cannot do what was asked (no GPU, no mapped memory, an old driver)
  Resource,     ///< out of memory of any kind, disk full, the output folder gone, the manifest not saved
  Interrupted,  ///< the run was asked to stop (SIGINT, SIGTERM, a cancel call)
  Internal,     ///< a bug: a broken invariant or an exception nobody expected
  Busy,         ///< another process is doing this work (the same shard of the same output folder)
};

/// The class's word ("input", "config", ...), as messages, the manifest and the summary write it.
inline std::string_view to_string(Failure f) noexcept {
  switch (f) {
    case Failure::Input:
      return "input";
    case Failure::Config:
      return "config";
    case Failure::Platform:
      return "platform";
    case Failure::Resource:
      return "resource";
    case Failure::Interrupted:
      return "interrupted";
    case Failure::Internal:
      return "internal";
    case Failure::Busy:
      return "busy";
  }
  return "internal";
}

/// The base of every depthmask error: a complete sentence and its failure class.
class Error : public std::runtime_error {
 public:
  /// An error of class `f` whose what() is `what`.
  Error(Failure f, const std::string& what) : std::runtime_error(what), failure_(f) {}
  /// Its failure class.
  Failure failure() const noexcept { return failure_; }

 private:
  Failure failure_;
};

/// The platform cannot do what was asked (a GPU backend without a GPU, a build without kernels ...).
class PlatformError : public Error {
 public:
  /// A Failure::Platform error saying `what`.
  explicit PlatformError(const std::string& what) : Error(Failure::Platform, what) {}
};

/// Memory that cannot be had: host or device memory, a memory budget, pinned or managed memory. Every
/// out-of-memory condition is thrown as this type (a failed cudaMalloc and a failed host allocation
/// alike), so callers catch one type.
class ResourceError : public Error {
 public:
  /// A Failure::Resource error saying `what`.
  explicit ResourceError(const std::string& what) : Error(Failure::Resource, what) {}
};

/// A failed CUDA runtime call or kernel launch, other than running out of memory (ResourceError): the
/// call text, file:line, the CUDA error name and string, and the cudaError_t value.
class CudaError : public Error {
 public:
  /// A Failure::Platform error saying `what`, of the cudaError_t value `code`.
  CudaError(const std::string& what, int code) : Error(Failure::Platform, what), code_(code) {}
  /// The cudaError_t value.
  int code() const noexcept { return code_; }

 private:
  int code_;
};

namespace detail {
template <class E>
[[noreturn]] inline void throw_with(const std::string& msg) {
  throw E(msg);
}
}  // namespace detail

}  // namespace depthmask

/// DM_EXPECT(cond, ExceptionType, message << parts): a check that holds in Release builds too; throws
/// ExceptionType with the streamed message when `cond` is false.
#define DM_EXPECT(cond, ExcType, msg)                                                        \
  do {                                                                                       \
    if (!(cond)) {                                                                           \
      std::ostringstream dm_expect_os_;                                                      \
      dm_expect_os_ << msg; /* NOLINT(bugprone-macro-parentheses): a chain of << operands */ \
      ::depthmask::detail::throw_with<ExcType>(dm_expect_os_.str());                         \
    }                                                                                        \
  } while (0)
