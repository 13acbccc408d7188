// Error types and the precondition helper used everywhere in depthmask.
//
// Each exception type maps to one CLI exit code (see app/main.cpp): configuration mistakes (2), a
// platform that cannot do what was asked (3), and per-frame input/output problems that a batch records
// and moves past. Messages are complete sentences naming the file, frame or key involved.
#pragma once

#include <sstream>
#include <stdexcept>
#include <string>

namespace depthmask {

class Error : public std::runtime_error {
 public:
  using std::runtime_error::runtime_error;
};

// A bad YAML file, key, value or command-line override. Exit code 2.
class ConfigError : public Error {
 public:
  using Error::Error;
};

// The platform cannot do what was asked (a GPU backend without a GPU, no mapped memory ...). Exit code 3.
class PlatformError : public Error {
 public:
  using Error::Error;
};

// A missing, unreadable, corrupt or mismatched input file.
class InputError : public Error {
 public:
  using Error::Error;
};

// An output that could not be written (folder missing or read-only, disk full ...).
class OutputError : public Error {
 public:
  using Error::Error;
};

// A memory budget or allocation that cannot be met for this frame (device memory, managed budget).
class ResourceError : public Error {
 public:
  using Error::Error;
};

// A failed CUDA runtime call or kernel launch: the call text, file:line, error name and string.
class CudaError : public Error {
 public:
  CudaError(const std::string& what, int code) : Error(what), code_(code) {}
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

// DM_EXPECT(cond, ExceptionType, message << parts): a check that holds in Release builds too.
#define DM_EXPECT(cond, ExcType, msg)                                \
  do {                                                               \
    if (!(cond)) {                                                   \
      std::ostringstream dm_expect_os_;                              \
      dm_expect_os_ << msg;                                          \
      ::depthmask::detail::throw_with<ExcType>(dm_expect_os_.str()); \
    }                                                                \
  } while (0)
