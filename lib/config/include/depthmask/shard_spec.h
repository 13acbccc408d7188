// A shard of a batch run as the configuration names it (run.shard: "", "auto" or "K/N"), and the tag
// temporary files carry for it. The partition, the resolution of "auto" and the lock: shard.h.
#pragma once

#include <cstddef>
#include <optional>
#include <string>
#include <string_view>

#include "depthmask/config.h"

namespace depthmask {

// Shard `index` of `count`, 0-based: 0 <= index < count.
struct Shard {
  size_t index = 0;
  size_t count = 1;
  friend bool operator==(const Shard& a, const Shard& b) { return a.index == b.index && a.count == b.count; }
};

// The most shards a run may be split into (Slurm's MaxArraySize is at most 4,000,001).
inline constexpr size_t kMaxShards = 1000000;

// "K/N".
std::string to_string(const Shard& s);
// Parses "K/N" (decimal, no signs or spaces, 0 <= K < N <= kMaxShards); nullopt otherwise.
std::optional<Shard> parse_shard(std::string_view text);
// What run.shard accepts: "" (no sharding), "auto" or "K/N".
bool is_shard_spec(std::string_view text);

// Names in temporary files for the shard: "KofN", or "all" without a shard (no '-', so that temporary
// names parse unambiguously: encoders.h).
std::string shard_tag(const std::optional<Shard>& s);
// The same from the (resolved) run.shard of a configuration: "K/N" gives "KofN", anything else "all".
std::string shard_tag(const Config& c);

}  // namespace depthmask
