// LiveServer in a build without it (DEPTHMASK_WITH_SERVE=OFF, or Boost.Beast not found): --serve and
// live.serve fail with the reason, `depthmask info` says it.
#include "depthmask/errors.h"
#include "depthmask/live_server.h"

namespace depthmask {

namespace {
const char* const kWhy = DEPTHMASK_SERVE_MISSING;
}

ServeSupport serve_support() { return {false, kWhy}; }

struct LiveServer::Impl {};

LiveServer::LiveServer(const Config& config) {
  DM_EXPECT(false, ConfigError,
            "live.serve '" << config.live.serve << "': this depthmask was built without the server (" << kWhy
                           << "); rebuild with -DDEPTHMASK_WITH_SERVE=ON and libboost-dev installed");
}
LiveServer::~LiveServer() = default;
uint16_t LiveServer::port() const { return 0; }
bool LiveServer::due(std::chrono::steady_clock::time_point) const { return false; }
bool LiveServer::offer(const ServedFrame&, const ServedRunStats&) { return false; }
ServeCounters LiveServer::counters() const { return {}; }

}  // namespace depthmask
