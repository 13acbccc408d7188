/// \file
/// Error types and the failure taxonomy of depthmask.
///
/// Every error is a depthmask::Error of one Failure class (depthmask/kernels/errors.h, re-exported
/// here): input, config, platform, resource, interrupted, internal, busy. failure_of() classifies any
/// exception, the foreign ones too (std::bad_alloc is out of memory), in one place that the batch, the
/// live runner and the CLI share; exit_code() gives the CLI's exit code of a class. Messages are
/// complete sentences naming the file, frame or key involved.
#pragma once

#include <exception>

#include "depthmask/kernels/errors.h"

namespace depthmask {

/// A bad YAML file, key, value or command-line override.
class ConfigError : public Error {
 public:
  /// A Failure::Config error saying `what`.
  explicit ConfigError(const std::string& what) : Error(Failure::Config, what) {}
};

/// A missing, unreadable, corrupt or mismatched input file.
class InputError : public Error {
 public:
  /// A Failure::Input error saying `what`.
  explicit InputError(const std::string& what) : Error(Failure::Input, what) {}
};

/// An output that could not be written (disk full, the folder gone or read-only, the manifest not
/// saved): a resource the run needs is not there.
class OutputError : public Error {
 public:
  /// A Failure::Resource error saying `what`.
  explicit OutputError(const std::string& what) : Error(Failure::Resource, what) {}
};

/// The run was asked to stop before it finished.
class InterruptedError : public Error {
 public:
  /// A Failure::Interrupted error saying `what`.
  explicit InterruptedError(const std::string& what) : Error(Failure::Interrupted, what) {}
};

/// The class of any exception: a depthmask::Error's own; std::bad_alloc (and OpenCV's out of memory)
/// is Resource; an OpenCV error elsewhere is Input (a decoder refusing a file); a filesystem error is
/// Resource when the disk or quota is full, memory ran out or a folder vanished (ENOSPC, EDQUOT,
/// ENOMEM, ENOENT), Input otherwise; another std::system_error is Resource when the system ran out of
/// something (those, EAGAIN, EMFILE, ENFILE), Internal otherwise; anything else (a std::logic_error,
/// a type that is not a std::exception) is Internal.
Failure failure_of(const std::exception& e) noexcept;
/// The same for a captured exception (Internal for a null pointer).
Failure failure_of(const std::exception_ptr& e) noexcept;

/// Of two failure classes the one that decides a run's exit code: interrupted > busy > internal >
/// platform > resource > config > input (a run with frames failed for input and for memory exits 4).
Failure most_severe(Failure a, Failure b) noexcept;

/// The process exit codes, written once (docs/RELIABILITY.md's table): the CLI returns them,
/// exit_code() gives a failure class's, and the C ABI's dm_status has the same numbers. Chosen so
/// that a scheduler can act on them: 1 input and 2 config (retrying cannot help), 3 platform and 4
/// resource (another node or a later try may succeed), 5 busy (another process is doing this work:
/// do not retry), 70 internal (EX_SOFTWARE), 130 interrupted (128 + SIGINT).
namespace exit_codes {
inline constexpr int kOk = 0;             ///< success
inline constexpr int kInput = 1;          ///< a bad or missing input
inline constexpr int kConfig = 2;         ///< a bad configuration, and a bad command line
inline constexpr int kPlatform = 3;       ///< no usable GPU or driver for what was asked
inline constexpr int kResource = 4;       ///< out of memory, disk full, the output folder gone
inline constexpr int kBusy = 5;           ///< another process holds this shard
inline constexpr int kInternal = 70;      ///< a bug (EX_SOFTWARE)
inline constexpr int kInterrupted = 130;  ///< stopped by SIGINT

/// A process stopped by a signal exits 128 + the signal, as a shell reports one killed by it: 130 for
/// SIGINT (kInterrupted), 143 for SIGTERM.
constexpr int of_signal(int signal) noexcept { return 128 + signal; }
}  // namespace exit_codes

/// The CLI's exit code of a failure class (exit_codes above). 0 means success and is no class.
int exit_code(Failure f) noexcept;

}  // namespace depthmask
