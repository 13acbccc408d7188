// The one reader of a whole file into memory (a configuration, a camera file, a list, a sidecar): a
// bound on its size, so that a stray path (a device such as /dev/zero, a huge file) cannot make the
// reader take all memory.
#pragma once

#include <cstddef>
#include <filesystem>
#include <string>

namespace depthmask::detail {

// The bound of small text files: camera files, K matrices, index lists, configurations, JSON.
inline constexpr size_t kMaxTextFileBytes = size_t{256} << 20;

// The whole of `file`, read in chunks up to `max_bytes`. Throws InputError "cannot read <what>
// '<file>': no such file or not readable" (or ": read error"), or "<what> '<file>' is larger than
// <max_bytes as MiB or bytes>, so it is not read" for a longer one; `what` names the file's kind
// ("camera file").
std::string read_file_bounded(const std::filesystem::path& file, size_t max_bytes, const std::string& what);

}  // namespace depthmask::detail
