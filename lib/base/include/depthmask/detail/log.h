// The library's logger, internal: every line the library (and its CLI) writes goes through it, as
// `detail::log().info("...", args)`. It is spdlog's, but never spdlog's default logger and never in
// spdlog's registry, so a host program's spdlog set-up (its default logger, spdlog::set_level) and
// the library's lines leave each other alone. Where its lines go and from which level: logging.h.
#pragma once

#include <spdlog/logger.h>

namespace depthmask::detail {

// The logger "depthmask": thread-safe; level warn until set_log_level / setup_logging say otherwise.
spdlog::logger& log();

}  // namespace depthmask::detail
