/// \file
/// Files written whole or not at all (a temporary file renamed over the target), who left a temporary
/// file behind, and the CRC-32 the manifest records of every file a run writes.
#pragma once

#include <cstdint>
#include <filesystem>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include <sys/types.h>

namespace depthmask {

/// The bytes of one file, as parts written in order: blocks owned here (a header, a table) and views
/// of memory the caller keeps alive until the file is written (a frame's output rows). A large image
/// is then written from where it lies, with no encoder buffer to grow, fault in and copy first.
class FileBytes {
 public:
  /// One run of bytes of the file.
  struct Part {
    const uint8_t* data;  ///< where they lie (owned by the FileBytes or viewed)
    size_t size;          ///< how many
  };
  FileBytes() = default;
  /// A file of one owned block.
  explicit FileBytes(std::vector<uint8_t> bytes) { add_owned(std::move(bytes)); }
  /// Appends a block the FileBytes keeps (its address stays put when more parts are added).
  void add_owned(std::vector<uint8_t> bytes);
  /// Appends a view of `bytes` bytes at `data`, which the caller keeps alive until the file is written.
  void add_view(const void* data, size_t bytes);
  /// The parts, in file order.
  const std::vector<Part>& parts() const { return parts_; }
  /// The file's size: the sum of the parts' sizes.
  size_t size() const { return size_; }
  uint32_t crc32() const;                ///< crc32_of over the parts, in order
  std::vector<uint8_t> flatten() const;  ///< one contiguous copy

 private:
  std::vector<std::unique_ptr<std::vector<uint8_t>>> owned_;  ///< heap blocks: parts_ point into them
  std::vector<Part> parts_;
  size_t size_ = 0;
};

/// Writes `bytes` to a temporary file in path's folder, optionally fsyncs it, then renames it over
/// `path`, so readers see the old file or the new one, never a torn one. Throws OutputError naming
/// the file and the system error; the temporary file is removed on failure. The temporary file is
/// ".<name>.tmp@<host>-<pid>-<shard>-<n>" (TempFileOwner), `shard` being the writer's shard_tag
/// (shard.h: "KofN", or "all", the default).
void write_file_atomic(const std::filesystem::path& path, const FileBytes& bytes, bool fsync,
                       std::string_view shard = "all");
/// The same for `bytes` contiguous bytes at `data`.
void write_file_atomic(const std::filesystem::path& path, const void* data, size_t bytes, bool fsync,
                       std::string_view shard = "all");

/// CRC-32 (zlib's polynomial and values) of `bytes` bytes at `data`, continuing from `crc`.
uint32_t crc32_of(const void* data, size_t bytes, uint32_t crc = 0);

/// Who wrote a temporary file of write_file_atomic (".<name>.tmp@<host>-<pid>-<shard>-<n>") or a
/// folder probe of ensure_output_dir (".depthmask-write-test@<host>-<pid>"), from its file name; the
/// names of earlier versions (".<name>.tmp-<pid>-<n>", ".depthmask-write-test-<pid>") give no host.
/// The host (host_name(): no '@') may hold '-' and '.': the name splits at its last '@', and the pid,
/// shard and counter (none holds a '-') are taken from the right. nullopt: not such a file.
struct TempFileOwner {
  std::optional<std::string> host;  ///< none: an earlier version's name
  pid_t pid = 0;                    ///< the writer's process id
  std::string shard;                ///< a temporary file's shard_tag; empty for a probe or an earlier name
};
/// Parses a file name as TempFileOwner describes; nullopt when it is not such a file.
std::optional<TempFileOwner> temp_file_owner(const std::string& file_name);

/// Removes what an interrupted (killed) run left in `dir` and its subfolders: the temporary files of
/// write_file_atomic and the folder probe of ensure_output_dir, written on this host (host_name())
/// by a process that is no longer running. Other hosts' files are left alone: on a shared folder
/// their writers may be at work, and a pid says nothing across machines. Names without a host
/// (earlier versions) are judged by their pid alone, as before. Returns how many were removed;
/// never throws (a file that cannot be removed is skipped).
size_t remove_stale_temp_files(const std::filesystem::path& dir);

/// Checks that `dir` exists or can be created and is writable (by creating and removing a probe file).
/// Throws OutputError naming the folder and the system error.
void ensure_output_dir(const std::filesystem::path& dir);

}  // namespace depthmask
