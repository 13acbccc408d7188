#include "depthmask/logging.h"

#include <spdlog/sinks/base_sink.h>
#include <spdlog/sinks/dist_sink.h>
#include <spdlog/sinks/stdout_color_sinks.h>

#include <algorithm>
#include <cctype>
#include <memory>
#include <mutex>
#include <utility>
#include <vector>

#include "depthmask/detail/log.h"
#include "depthmask/errors.h"

namespace depthmask {

namespace {

struct LevelName {
  LogLevel level;
  const char* name;
};
constexpr LevelName kLevelNames[] = {
    {LogLevel::Trace, "trace"}, {LogLevel::Debug, "debug"},       {LogLevel::Info, "info"}, {LogLevel::Warn, "warn"},
    {LogLevel::Error, "error"}, {LogLevel::Critical, "critical"}, {LogLevel::Off, "off"}};

// LogLevel numbers its levels as spdlog does.
spdlog::level::level_enum spdlog_level(LogLevel level) {
  return static_cast<spdlog::level::level_enum>(static_cast<int>(level));
}

// Hands each line of a message to the host's callback. Reached only through the router below, whose
// mutex makes the calls one at a time; this sink's own mutex is uncontended.
class CallbackSink final : public spdlog::sinks::base_sink<std::mutex> {
 public:
  explicit CallbackSink(LogCallback callback) : callback_(std::move(callback)) {}

 protected:
  void sink_it_(const spdlog::details::log_msg& msg) override {
    std::string_view rest(msg.payload.data(), msg.payload.size());
    do {
      const size_t end = rest.find('\n');
      line_.assign(rest.substr(0, end));
      try {
        callback_(static_cast<int>(msg.level), line_);
      } catch (...) {  // the host's exception must not unwind through the library's threads
      }
      rest = end == std::string_view::npos ? std::string_view() : rest.substr(end + 1);
    } while (!rest.empty());
  }
  void flush_() override {}

 private:
  LogCallback callback_;
  std::string line_;  // the current line, NUL-terminated for the C ABI
};

// The logger and where it writes: the router holds either the stderr sink or one callback sink, and
// swapping them takes its mutex, so a line being written finishes on the old sink first.
struct LogState {
  std::shared_ptr<spdlog::sinks::stderr_color_sink_mt> stderr_sink =
      std::make_shared<spdlog::sinks::stderr_color_sink_mt>();
  std::shared_ptr<spdlog::sinks::dist_sink_mt> router =
      std::make_shared<spdlog::sinks::dist_sink_mt>(std::vector<spdlog::sink_ptr>{stderr_sink});
  spdlog::logger logger{"depthmask", router};  // not registered: spdlog::get / set_level never see it

  LogState() {
    stderr_sink->set_pattern("%^[%L]%$ %v");
    logger.set_level(spdlog::level::warn);
  }
};

LogState& state() {
  // Never destroyed: destructors of other static objects may still log during exit.
  static LogState* const s = new LogState();
  return *s;
}

void route_to(spdlog::sink_ptr sink) { state().router->set_sinks({std::move(sink)}); }

}  // namespace

namespace detail {

spdlog::logger& log() { return state().logger; }

}  // namespace detail

void set_log_level(LogLevel level) { state().logger.set_level(spdlog_level(level)); }

void set_log_level(std::string_view level) {
  std::string word(level);
  std::transform(word.begin(), word.end(), word.begin(), [](unsigned char ch) { return std::tolower(ch); });
  for (const LevelName& n : kLevelNames) {
    if (word == n.name) {
      set_log_level(n.level);
      return;
    }
  }
  std::string list;
  for (const LevelName& n : kLevelNames) list += (list.empty() ? "" : ", ") + std::string(n.name);
  throw ConfigError("log level '" + std::string(level) + "': expected one of " + list);
}

void set_log_callback(LogCallback callback, int min_level) {
  const auto level = static_cast<LogLevel>(std::clamp(min_level, 0, static_cast<int>(LogLevel::Off)));
  set_log_level(level);
  if (!callback) {
    route_to(state().stderr_sink);
    return;
  }
  auto sink = std::make_shared<CallbackSink>(std::move(callback));
  // Its own filter too: a line that passed the logger's old level just before the swap stays out.
  sink->set_level(spdlog_level(level));
  route_to(std::move(sink));
}

void log_line(LogLevel level, std::string_view line) { state().logger.log(spdlog_level(level), line); }

void setup_logging(const std::string& level) {
  set_log_level(level);
  route_to(state().stderr_sink);
}

}  // namespace depthmask
