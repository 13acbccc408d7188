// The `{id}` pattern matching of list_frames (dataset.cpp), for the library's other readers of a
// folder (the doctor counts masks without depth with it).
#pragma once

#include <filesystem>
#include <string>
#include <utility>
#include <vector>

namespace depthmask::detail {

// The ids `pattern` (an input.depth-style `{id}` pattern) matches under `root`, with their files, in
// no particular order: what list_frames matches for its depth pattern, without building frames.
// Throws InputError for a pattern without `{id}`.
std::vector<std::pair<std::string, std::filesystem::path>> pattern_matches(const std::filesystem::path& root,
                                                                           const std::string& pattern);

}  // namespace depthmask::detail
