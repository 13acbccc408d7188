// The doctor on a folder no layout knows (doctor_groups.cpp, doctor_propose.cpp): the files are
// grouped by the digit run that varies between them (the frame id), each group is classified by what
// its files hold (read as `run` reads them), depth, mask, colour and intrinsics are picked and paired
// by id, and the input.* keys that make `run` read the folder are proposed, then checked by a second
// pass of the doctor over them.
#pragma once

#include <cstddef>
#include <filesystem>
#include <string>
#include <utility>
#include <vector>

#include "depthmask/config.h"
#include "depthmask/doctor.h"
#include "depthmask/intrinsics.h"

namespace depthmask::detail {

// What a group's files hold.
enum class GroupKind {
  Other,       // not an image we read, or an image of no role (a grey image, channels that differ)
  Depth,       // one channel of 16-bit or float, or three equal ones (as `run` reads depth)
  Mask,        // one channel of 8 or 16 bits with few values, or an indexed PNG (labels)
  Color,       // three (or four) channels of 8 bits
  Intrinsics,  // a file read_intrinsics_file reads (YAML fx/fy/cx/cy or a 3x3 K text)
};
const char* to_string(GroupKind kind);  // "other", "depth", "mask", "color", "intrinsics"

// Files whose names differ only in one digit run: the pattern has `{id}` in its place. A file with no
// varying digit run is a group of one whose pattern is its name (no `{id}`; ids holds "").
struct FileGroup {
  std::string pattern;                                             // relative to the root, '/'-separated
  std::vector<std::pair<std::string, std::filesystem::path>> ids;  // id, file; in natural order of id
  GroupKind kind = GroupKind::Other;
  std::string what;      // what the sampled files hold: "32-bit float, 3 equal channels, 64x48"
  double valid = 0;      // depth: the share of valid (finite, non-zero) pixels in the sampled files
  size_t values = 0;     // mask: the distinct values seen (up to 257)
  bool sixteen = false;  // depth: 16-bit raw units (not float metres)
  Intrinsics k;          // intrinsics: what the first file holds
};

// The regular files under `root`, at most `levels` folders down, hidden names skipped, as
// '/'-separated paths relative to root; at most `limit` of them.
std::vector<std::string> list_names(const std::filesystem::path& root, size_t levels = 3, size_t limit = 1000000);

// Groups relative names by their id: each name's digit run (outside the extension) whose replacement
// by `{id}` gives the largest group (ties: the longer run, then the later one).
std::vector<FileGroup> group_names(const std::vector<std::string>& names, const std::filesystem::path& root);

// Sets kind, what, valid, values, sixteen and k of `g` from at most two of its files (the first and the
// last), read within `config`'s input limits.
void classify(FileGroup& g, const Config& config);

// The doctor's `patterns` check (and `proposal`, the second pass) for `given`, whose input could not be
// listed and whose folder no layout recognises: adds them, and the proposed keys, to `report`.
void propose_patterns(const Config& given, const DoctorOptions& options, DoctorReport& report);

}  // namespace depthmask::detail
