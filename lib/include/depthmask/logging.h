// Logging set-up: spdlog to stderr, with the level named in the configuration.
#pragma once

#include <string>

namespace depthmask {

// Installs the stderr logger (idempotent) and sets its level: trace | debug | info | warn | error | off.
void setup_logging(const std::string& level = "info");

}  // namespace depthmask
