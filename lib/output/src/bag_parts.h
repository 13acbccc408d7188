// The names of the bag's parts in output.dir (bag_output.h): "depthmask.part-<seq>-<shard tag>.mcap",
// seq counting the runs of the folder up from 1 (4 digits at least), so that a newer run's part
// sorts after an older one's; a killed run's part keeps the writer's ".part" suffix.
#pragma once

#include <cstddef>
#include <filesystem>
#include <optional>
#include <string>

namespace depthmask::detail {

inline constexpr const char* kBagLockName = ".depthmask-bag.lock";

std::string bag_part_name(size_t seq, const std::string& shard_tag);
// The seq of a part's file name (closed or ".part"); nullopt: not a part's name.
std::optional<size_t> bag_part_seq(const std::string& file_name);
// One more than the largest seq of the parts in `dir` (1 when there is none).
size_t next_bag_part_seq(const std::filesystem::path& dir);

}  // namespace depthmask::detail
