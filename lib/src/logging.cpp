#include "depthmask/logging.h"

#include <spdlog/sinks/stdout_color_sinks.h>
#include <spdlog/spdlog.h>

namespace depthmask {

void setup_logging(const std::string& level) {
  static const bool installed = [] {
    auto logger = spdlog::stderr_color_mt("depthmask");
    logger->set_pattern("%^[%L]%$ %v");
    spdlog::set_default_logger(logger);
    return true;
  }();
  (void)installed;
  spdlog::set_level(spdlog::level::from_str(level));
}

}  // namespace depthmask
