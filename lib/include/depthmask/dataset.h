// Listing the frames of an input folder from the `{id}` patterns of the configuration.
#pragma once

#include <cstddef>
#include <filesystem>
#include <string>
#include <vector>

#include "depthmask/config.h"

namespace depthmask {

struct FrameEntry {
  size_t index = 0;  // position in the run, 0-based
  std::string id;    // what `{id}` matched
  std::filesystem::path depth, mask;
  std::filesystem::path color;  // empty when the pattern is unset or the file does not exist
};

struct DatasetListing {
  std::vector<FrameEntry> frames;  // natural order of id
  // Files in the folders the patterns look at that belong to no frame (a mask without its depth,
  // a stray README ...). Counted for the summary; the first few are kept for the log.
  size_t unmatched_files = 0;
  std::vector<std::filesystem::path> unmatched_examples;
};

// Natural order: digit runs compare as numbers ("2" < "10"), the rest byte-wise.
bool natural_less(const std::string& a, const std::string& b);

// Lists frames under input.root. The depth pattern drives the list; mask and color paths are the
// id substituted into their patterns (the mask's existence is checked when the frame is loaded, so a
// missing mask is an error of that frame). Throws InputError when the root is not a readable folder
// or no file matches the depth pattern.
DatasetListing list_frames(const InputConfig& input);

// The pattern with `{id}` replaced.
std::string substitute_id(const std::string& pattern, const std::string& id);

}  // namespace depthmask
