// Sharded batch runs (DESIGN.md, "Beyond one machine"): N processes — a Slurm job array, a Kubernetes
// Indexed Job, or N commands by hand — each run `depthmask run --shard K/N` over the same input and
// output folders and together process every frame once.
//
// The partition: the run's frames sorted by manifest_key (byte-wise; the depth file's path relative to
// input.root); the frame at position i of that order belongs to shard i % N. So
//  - it depends only on the keys: every machine, filesystem and directory-listing order gives the
//    same shares, and a frame's shard never depends on which other shards run;
//  - the shares are balanced to one frame (sizes differ by at most 1);
//  - round-robin interleaves: each sequence (a folder of consecutive frames) is spread over all
//    shards, so no shard gets the one long or slow sequence. Contiguous blocks would keep a sequence
//    together but make the shares depend on where block edges fall.
// Within its share a run keeps its usual frame order (the listing's natural order). The N shares are
// disjoint and their union is the whole listing.
//
// Each shard keeps its own manifest (manifest_name) and lock (ShardLock) in the shared output folder;
// a run resumes from every manifest there (ResumeLog::plan), so a re-run with another N, or without
// sharding, skips what any of them finished.
#pragma once

#include <cstddef>
#include <filesystem>
#include <functional>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "depthmask/config.h"
#include "depthmask/dataset.h"
#include "depthmask/detail/host.h"
#include "depthmask/errors.h"
#include "depthmask/shard_spec.h"

namespace depthmask {

// The listing positions of shard s's frames, ascending (the listing's order), as the header says:
// position i of the manifest_key order belongs to shard i % s.count (equal keys: by depth path).
std::vector<size_t> shard_positions(const std::vector<FrameEntry>& frames, const Shard& s);
// The frames of shard s, in the listing's order (their index fields unchanged).
std::vector<FrameEntry> shard_frames(const std::vector<FrameEntry>& frames, const Shard& s);

// Reads an environment variable: its value, or nullopt when it is not set. process_env() reads the
// process's environment; tests pass a map.
using EnvGetter = std::function<std::optional<std::string>(const char* name)>;
EnvGetter process_env();

// What a run's shard settings resolve to.
struct ShardChoice {
  std::optional<Shard> shard;  // none: the run processes every frame
  // One sentence for the log (info), or empty: with run.shard auto, the variables used and the
  // result; without sharding, a note when a job engine's index variable is set (this run does not
  // shard itself; --shard auto would).
  std::string log;
};

// Resolves run.shard and run.shard_count:
//  - "" : no shard (a note in `log` when SLURM_ARRAY_TASK_ID or JOB_COMPLETION_INDEX is set;
//    run.shard_count set is refused: it means nothing without auto);
//  - "K/N": that shard (run.shard_count, when set, must be N);
//  - "auto": from the job engine's variables, read through `env`:
//    Slurm: K = (SLURM_ARRAY_TASK_ID - SLURM_ARRAY_TASK_MIN) / SLURM_ARRAY_TASK_STEP (STEP 1 when
//    unset), N = SLURM_ARRAY_TASK_COUNT; an array whose indices are not MIN, MIN+STEP, ..., MAX
//    (--array=1,5,9 with STEP 1) cannot be mapped onto 0..N-1 and is refused;
//    Kubernetes Indexed Jobs: K = JOB_COMPLETION_INDEX, N = run.shard_count (--shard-count), else
//    DEPTHMASK_SHARD_COUNT (the Job's completions).
// Throws ConfigError naming the variable: a missing or malformed one, a sparse array, K out of range,
// both engines' variables at once, or none of them.
ShardChoice resolve_shard(const RunConfig& run, const EnvGetter& env);

// Thrown when another process holds the lock of the same shard on the same output folder: it is
// doing this work, so a scheduler should not retry (exit code 5).
class ShardBusyError : public Error {
 public:
  explicit ShardBusyError(const std::string& what) : Error(Failure::Busy, what) {}
};

// The lock of one shard's manifest, `<manifest>.lock` in the output folder, held while this object
// lives: an advisory lock on an open descriptor, so it dies with its holder — a SIGKILLed run leaves
// no stale lock. On NFS and every other filesystem not known to be local, an fcntl() lock
// (open-file-description locks where the kernel has them, POSIX record locks otherwise), which the
// client carries to the server (NLM / NFSv4 locks) and which needs a descriptor open for writing; on
// local filesystems (ext4, xfs, btrfs, tmpfs, overlayfs, zfs, f2fs) flock() on a read-only
// descriptor, so that a run holds nothing open for writing between its writes. (A process on an NFS
// server writing to the exported folder directly, and one on a client, would not see each other's
// lock: run every shard through the same kind of mount.) The file holds the holder's host and pid
// for the message of the process refused; it is removed when the lock is released (a crashed run's
// file is harmless: nobody holds a lock on it). Different shards and the unsharded run take
// different locks.
class ShardLock {
 public:
  // How the lock is taken: by the filesystem (Auto, as the comment above says), or one way (tests).
  enum class Kind { Auto, Flock, Fcntl };
  // Takes the lock at once or throws ShardBusyError naming the folder, the shard and the holder (host
  // and pid); OutputError when the lock file cannot be created.
  ShardLock(const std::filesystem::path& dir, const std::optional<Shard>& shard, Kind kind = Kind::Auto);
  ShardLock(ShardLock&& o) noexcept;
  ShardLock& operator=(ShardLock&&) = delete;
  ShardLock(const ShardLock&) = delete;
  ~ShardLock();

  const std::filesystem::path& path() const { return path_; }

 private:
  std::filesystem::path path_;
  int fd_ = -1;
};

}  // namespace depthmask
