#include "depthmask/shard_spec.h"

#include "depthmask/detail/text_numbers.h"

namespace depthmask {

std::string to_string(const Shard& s) { return std::to_string(s.index) + "/" + std::to_string(s.count); }

std::optional<Shard> parse_shard(std::string_view text) {
  const size_t slash = text.find('/');
  if (slash == std::string_view::npos) return std::nullopt;
  const auto k = detail::parse_decimal(text.substr(0, slash)), n = detail::parse_decimal(text.substr(slash + 1));
  if (!k || !n || *n == 0 || *n > kMaxShards || *k >= *n) return std::nullopt;
  return Shard{static_cast<size_t>(*k), static_cast<size_t>(*n)};
}

bool is_shard_spec(std::string_view text) { return text.empty() || text == "auto" || parse_shard(text).has_value(); }

std::string shard_tag(const std::optional<Shard>& s) {
  return s ? std::to_string(s->index) + "of" + std::to_string(s->count) : std::string("all");
}

std::string shard_tag(const Config& c) { return shard_tag(parse_shard(c.run.shard)); }

}  // namespace depthmask
