// Internal: the typed values of a source URI's query (parse_source_uri has checked them already, so
// these only convert; each throws ConfigError naming the URI when called on an unchecked value).
#pragma once

#include <optional>
#include <string>

#include "depthmask/live.h"

namespace depthmask::detail {

// The schemes make_live_source knows, comma separated, for messages.
std::string known_schemes();

struct Size2 {
  int width = 0, height = 0;
};

// fps=N (N >= 0, 0 = as fast as possible); `fallback` when the key is absent.
double query_fps(const SourceUri& uri, double fallback);
// size=WxH; `fallback` when absent.
Size2 query_size(const SourceUri& uri, Size2 fallback);
// A non-negative integer key (frames=N); nullopt when absent.
std::optional<long long> query_count(const SourceUri& uri, const std::string& key);
// A 0/1 key (loop=1); `fallback` when absent.
bool query_flag(const SourceUri& uri, const std::string& key, bool fallback);

}  // namespace depthmask::detail
