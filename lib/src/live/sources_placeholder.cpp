// PLACEHOLDER, removed before merging: lets the live-runner branch link the CLI until the real
// sources (lib/src/live/sources.cpp, uri.cpp on branch live-sources) are merged beside it.
#include "depthmask/errors.h"
#include "depthmask/live.h"

namespace depthmask {

SourceUri parse_source_uri(const std::string& uri) {
  throw ConfigError("live sources are not implemented in this build (placeholder): cannot open '" + uri + "'");
}

std::unique_ptr<LiveSource> make_live_source(const SourceUri& uri, const Config&) {
  throw ConfigError("live sources are not implemented in this build (placeholder): cannot open '" + uri.text + "'");
}

}  // namespace depthmask
