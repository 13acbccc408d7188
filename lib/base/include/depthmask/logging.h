/// \file
/// Where the library's log lines go and from which level. The library logs through its own logger
/// (never spdlog's default logger, whose set-up stays the host program's): to stderr from level warn,
/// until one of these functions says otherwise. Each is process-wide and may be called at any time,
/// from any thread.
#pragma once

#include <functional>
#include <string>
#include <string_view>

namespace depthmask {

/// A log level, numbered as spdlog and the C ABI (dm_set_log_callback) number them.
enum class LogLevel : int { Trace = 0, Debug = 1, Info = 2, Warn = 3, Error = 4, Critical = 5, Off = 6 };

/// Drops the library's log lines below `level` from now on (the default is Warn).
void set_log_level(LogLevel level);

/// The same by name: trace, debug, info, warn, error, critical or off (any case; logging.level's
/// words). Throws ConfigError for another word.
void set_log_level(std::string_view level);

/// Receives the library's log lines: `level` as LogLevel numbers it, `line` the message without the
/// "[I] " prefix stderr shows and without a newline (NUL-terminated: `line.data()` may go to C).
/// One call per line (a message of several lines is several calls), one call at a time, on whichever
/// of the library's threads logs. It must not log through the library itself; what it throws is dropped.
using LogCallback = std::function<void(int level, std::string_view line)>;

/// Sends the library's log lines at `min_level` (a LogLevel number, 0 to 6) and above to `callback`
/// instead of stderr; a null `callback` sends them to stderr again. `min_level` becomes the level as
/// set_log_level would set it, and the callback never receives a line below it (a later, lower
/// set_log_level does not change that). When this returns, the previous callback is no longer called.
void set_log_callback(LogCallback callback, int min_level);

/// Writes `line` (one line, no newline) at `level` through the library's logger, as the library writes
/// its own: where set_log_callback or setup_logging send them, dropped below the level set. For a
/// program whose messages should go where the library's go (the CLI's progress lines). Thread-safe.
void log_line(LogLevel level, std::string_view line);

/// The CLI's set-up: the library's lines go to stderr as "[W] message" ("[I]", "[E]" ... by level;
/// coloured when stderr is a terminal) from `level` on, as set_log_level(level) names it; a callback
/// set before is dropped.
void setup_logging(const std::string& level = "info");

}  // namespace depthmask
