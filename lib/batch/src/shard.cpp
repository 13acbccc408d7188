#include "depthmask/shard.h"

#include <fcntl.h>
#include <sys/file.h>
#include <sys/stat.h>
#include <sys/vfs.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <charconv>
#include <cstdlib>
#include <cstring>
#include <numeric>

#include "depthmask/detail/text_numbers.h"
#include "depthmask/manifest.h"

namespace fs = std::filesystem;

namespace depthmask {

std::vector<size_t> shard_positions(const std::vector<FrameEntry>& frames, const Shard& s) {
  std::vector<std::string> keys;
  keys.reserve(frames.size());
  for (const FrameEntry& f : frames) keys.push_back(manifest_key(f));
  std::vector<size_t> order(frames.size());
  std::iota(order.begin(), order.end(), size_t{0});
  // Keys are unique in a listing; the depth path only orders what should never tie, so that even
  // then the order does not depend on the listing's.
  std::sort(order.begin(), order.end(), [&](size_t a, size_t b) {
    if (keys[a] != keys[b]) return keys[a] < keys[b];
    return frames[a].depth.native() < frames[b].depth.native();
  });
  std::vector<size_t> mine;
  mine.reserve(frames.size() / s.count + 1);
  for (size_t i = s.index; i < order.size(); i += s.count) mine.push_back(order[i]);
  std::sort(mine.begin(), mine.end());
  return mine;
}

std::vector<FrameEntry> shard_frames(const std::vector<FrameEntry>& frames, const Shard& s) {
  std::vector<FrameEntry> out;
  const std::vector<size_t> mine = shard_positions(frames, s);
  out.reserve(mine.size());
  for (size_t i : mine) out.push_back(frames[i]);
  return out;
}

EnvGetter process_env() {
  return [](const char* name) -> std::optional<std::string> {
    const char* v = std::getenv(name);
    if (!v) return std::nullopt;
    return std::string(v);
  };
}

namespace {

constexpr const char* kSlurmId = "SLURM_ARRAY_TASK_ID";
constexpr const char* kJobIndex = "JOB_COMPLETION_INDEX";
constexpr const char* kShardCountEnv = "DEPTHMASK_SHARD_COUNT";

std::string assignment(const char* name, const std::string& value) { return std::string(name) + "=" + value; }

// An environment variable that must hold a non-negative integer.
unsigned long long env_number(const EnvGetter& env, const char* name, const std::string& why) {
  const auto v = env(name);
  if (!v) throw ConfigError("run.shard auto: " + why + " but " + name + " is not set");
  const auto n = detail::parse_decimal(*v);
  if (!n) throw ConfigError("run.shard auto: " + assignment(name, "'" + *v + "'") + " is not a non-negative integer");
  return *n;
}

ShardChoice from_slurm(const RunConfig& run, const EnvGetter& env) {
  const std::string why = std::string(kSlurmId) + " is set (a Slurm job array),";
  const auto id = env_number(env, kSlurmId, why);
  const auto min = env_number(env, "SLURM_ARRAY_TASK_MIN", why);
  const auto max = env_number(env, "SLURM_ARRAY_TASK_MAX", why);
  const auto count = env_number(env, "SLURM_ARRAY_TASK_COUNT", why);
  const bool has_step = env("SLURM_ARRAY_TASK_STEP").has_value();
  const auto step = has_step ? env_number(env, "SLURM_ARRAY_TASK_STEP", why) : 1ull;
  const std::string vars = assignment(kSlurmId, std::to_string(id)) + ", SLURM_ARRAY_TASK_MIN=" + std::to_string(min) +
                           ", SLURM_ARRAY_TASK_MAX=" + std::to_string(max) +
                           ", SLURM_ARRAY_TASK_STEP=" + (has_step ? std::to_string(step) : "(unset: 1)") +
                           ", SLURM_ARRAY_TASK_COUNT=" + std::to_string(count);
  if (step == 0) throw ConfigError("run.shard auto: SLURM_ARRAY_TASK_STEP is 0 (" + vars + ")");
  if (count == 0 || count > kMaxShards)
    throw ConfigError("run.shard auto: SLURM_ARRAY_TASK_COUNT must be 1.." + std::to_string(kMaxShards) + " (" + vars +
                      ")");
  if (id < min || id > max || max < min)
    throw ConfigError("run.shard auto: SLURM_ARRAY_TASK_ID is outside SLURM_ARRAY_TASK_MIN..MAX (" + vars + ")");
  // The array must be MIN, MIN+STEP, ..., MAX: then task i of the array is shard i. A list such as
  // --array=1,5,9 (STEP 1, COUNT 3) has no such mapping without knowing the list.
  if ((max - min) % step != 0 || (max - min) / step + 1 != count || (id - min) % step != 0)
    throw ConfigError("run.shard auto: the Slurm array is not evenly spaced (" + vars +
                      "), so its task ids cannot be numbered 0..COUNT-1; submit it as --array=0-" +
                      std::to_string(count - 1) + " (or MIN-MAX:STEP), or give --shard K/N");
  const Shard s{static_cast<size_t>((id - min) / step), static_cast<size_t>(count)};
  if (run.shard_count > 0 && static_cast<size_t>(run.shard_count) != s.count)
    throw ConfigError("run.shard auto: run.shard_count (--shard-count) is " + std::to_string(run.shard_count) +
                      ", but the Slurm array has " + std::to_string(count) + " tasks (" + vars + ")");
  return {s, "run.shard auto: shard " + to_string(s) + " from Slurm's " + vars};
}

ShardChoice from_kubernetes(const RunConfig& run, const EnvGetter& env) {
  const auto text = *env(kJobIndex);
  const auto index = detail::parse_decimal(text);
  if (!index)
    throw ConfigError("run.shard auto: " + assignment(kJobIndex, "'" + text + "'") + " is not a non-negative integer");
  size_t count = 0;
  std::string from;
  if (run.shard_count > 0) {
    count = static_cast<size_t>(run.shard_count);
    from = "run.shard_count (--shard-count) " + std::to_string(count);
  } else if (const auto c = env(kShardCountEnv)) {
    const auto n = detail::parse_decimal(*c);
    if (!n || *n == 0 || *n > kMaxShards)
      throw ConfigError("run.shard auto: " + assignment(kShardCountEnv, "'" + *c + "'") + " is not a count 1.." +
                        std::to_string(kMaxShards));
    count = static_cast<size_t>(*n);
    from = assignment(kShardCountEnv, *c);
  } else {
    throw ConfigError("run.shard auto: " + assignment(kJobIndex, text) +
                      " is set (a Kubernetes Indexed Job), but the shard count is not: set " + kShardCountEnv +
                      " (the Job's spec.completions) or give --shard-count N (run.shard_count)");
  }
  if (*index >= count)
    throw ConfigError("run.shard auto: " + assignment(kJobIndex, text) + " is out of range for " + from +
                      " (expected 0.." + std::to_string(count - 1) + ")");
  const Shard s{static_cast<size_t>(*index), count};
  return {
      s, "run.shard auto: shard " + to_string(s) + " from Kubernetes' " + assignment(kJobIndex, text) + " and " + from};
}

}  // namespace

ShardChoice resolve_shard(const RunConfig& run, const EnvGetter& env) {
  const bool slurm = env(kSlurmId).has_value(), kube = env(kJobIndex).has_value();
  if (run.shard.empty()) {
    if (run.shard_count > 0)
      throw ConfigError("run.shard_count (--shard-count) is " + std::to_string(run.shard_count) +
                        ", but run.shard is empty (no sharding): give --shard auto (or --shard K/N)");
    ShardChoice c;
    if (slurm || kube)
      c.log = std::string(slurm ? kSlurmId : kJobIndex) +
              " is set, but this run is not sharded (run.shard is empty): "
              "it processes every frame; --shard auto (run.shard: auto) would make it one shard of the job";
    return c;
  }
  if (run.shard != "auto") {
    const auto s = parse_shard(run.shard);
    if (!s) throw ConfigError("run.shard '" + run.shard + "': expected \"\", auto or K/N with 0 <= K < N (0-based)");
    if (run.shard_count > 0 && static_cast<size_t>(run.shard_count) != s->count)
      throw ConfigError("run.shard is " + run.shard + ", but run.shard_count (--shard-count) is " +
                        std::to_string(run.shard_count));
    return {s, ""};
  }
  if (slurm && kube)
    throw ConfigError(std::string("run.shard auto: both ") + kSlurmId + " (Slurm) and " + kJobIndex +
                      " (Kubernetes) are set, so the shard is ambiguous; give --shard K/N");
  if (slurm) return from_slurm(run, env);
  if (kube) return from_kubernetes(run, env);
  throw ConfigError(std::string("run.shard auto: no job engine's index is set: looked for ") + kSlurmId +
                    " (with SLURM_ARRAY_TASK_MIN, _MAX, _STEP, _COUNT: a Slurm job array) and " + kJobIndex +
                    " (with " + kShardCountEnv +
                    " or --shard-count: a Kubernetes Indexed Job); give --shard K/N to run one shard by hand");
}

// ---------------------------------------------------------------------------------------------------
// The lock

namespace {

std::string shard_words(const std::optional<Shard>& s) {
  return s ? "shard " + to_string(*s) : std::string("the unsharded run");
}

// Filesystems only this machine reaches (statfs f_type): there flock() on a read-only descriptor is
// exclusive among all processes that can see the folder. Everywhere else (NFS, Lustre, GPFS, CephFS,
// anything unknown) fcntl() locks, which network filesystems carry to the server and which need a
// descriptor open for writing for an exclusive lock.
bool local_filesystem(const fs::path& dir) {
  struct statfs st {};
  if (::statfs(dir.c_str(), &st) != 0) return false;
  switch (static_cast<unsigned long>(st.f_type)) {
    case 0xEF53UL:      // ext2/3/4
    case 0x58465342UL:  // xfs
    case 0x9123683EUL:  // btrfs
    case 0x01021994UL:  // tmpfs
    case 0x794C7630UL:  // overlayfs (containers)
    case 0x2FC12FC1UL:  // zfs
    case 0xF2F52010UL:  // f2fs
      return true;
    default:
      return false;
  }
}

// Takes an exclusive lock on the whole file without waiting: true when taken, false when another
// holds it; throws OutputError on any other failure.
bool try_lock(int fd, bool local, const fs::path& path) {
  auto failed = [&](int e) { return OutputError("cannot lock '" + path.string() + "': " + std::strerror(e)); };
  if (local) {
    if (::flock(fd, LOCK_EX | LOCK_NB) == 0) return true;
    if (errno == EWOULDBLOCK) return false;
    throw failed(errno);
  }
  struct flock fl {};
  fl.l_type = F_WRLCK;
  fl.l_whence = SEEK_SET;
#ifdef F_OFD_SETLK
  // Per open file description, as flock(): two runs in one process conflict too, and closing another
  // descriptor of the file does not drop it (both are so with classic POSIX record locks).
  if (::fcntl(fd, F_OFD_SETLK, &fl) == 0) return true;
  if (errno == EAGAIN || errno == EACCES) return false;
  if (errno != EINVAL) throw failed(errno);
  fl = {};
  fl.l_type = F_WRLCK;
  fl.l_whence = SEEK_SET;
#endif
  if (::fcntl(fd, F_SETLK, &fl) == 0) return true;
  if (errno == EAGAIN || errno == EACCES) return false;
  throw failed(errno);
}

std::string holder_of(int fd) {
  char buf[256] = {};
  const ssize_t n = ::pread(fd, buf, sizeof buf - 1, 0);
  std::string s(buf, n > 0 ? static_cast<size_t>(n) : 0);
  while (!s.empty() && (s.back() == '\n' || s.back() == '\r' || s.back() == ' ')) s.pop_back();
  return s;
}

}  // namespace

ShardLock::ShardLock(const fs::path& dir, const std::optional<Shard>& shard, Kind kind)
    : path_(dir / (manifest_name(shard) + ".lock")) {
  // The holder removes the file before it lets go: a descriptor opened on the removed file may get the
  // lock afterwards, so the lock counts only when the path still names the file locked.
  // A read-only descriptor where flock() serves: a run then holds no file open for writing between
  // its writes (the folder can still be remounted read-only under it, as tests/integration/
  // test_faults.cpp does).
  const bool local = kind == Kind::Auto ? local_filesystem(dir) : kind == Kind::Flock;
  for (int attempt = 0; attempt < 100; ++attempt) {
    const int fd = ::open(path_.c_str(), (local ? O_RDONLY : O_RDWR) | O_CREAT | O_CLOEXEC, 0644);
    if (fd < 0) throw OutputError("cannot create the lock file '" + path_.string() + "': " + std::strerror(errno));
    bool locked = false;
    try {
      locked = try_lock(fd, local, path_);
    } catch (...) {
      ::close(fd);
      throw;
    }
    if (!locked) {
      const std::string holder = holder_of(fd);
      ::close(fd);
      throw ShardBusyError("output folder '" + dir.string() + "': " + shard_words(shard) +
                           " is already running there (" + (holder.empty() ? "its holder" : holder) + " holds '" +
                           path_.filename().string() + "'); this process leaves the work to it");
    }
    struct stat held {
    }, named{};
    if (::fstat(fd, &held) == 0 && ::stat(path_.c_str(), &named) == 0 && held.st_dev == named.st_dev &&
        held.st_ino == named.st_ino) {
      // Who holds it, for the message of a process refused; without it that message is vaguer. (A second
      // descriptor: closing it drops neither an flock() nor an open-file-description lock; with classic
      // POSIX locks, the fallback of old kernels, the locked descriptor itself writes.)
      const std::string me = "host " + host_name() + ", pid " + std::to_string(::getpid()) + "\n";
      const int wfd = local ? ::open(path_.c_str(), O_WRONLY | O_TRUNC | O_CLOEXEC) : fd;
      if (wfd >= 0) {
        if (wfd == fd) (void)!::ftruncate(fd, 0);
        (void)!::pwrite(wfd, me.data(), me.size(), 0);
        if (wfd != fd) ::close(wfd);
      }
      fd_ = fd;
      return;
    }
    ::close(fd);  // a holder removed it meanwhile: try the new one
  }
  throw OutputError("cannot lock '" + path_.string() + "': it keeps being replaced");
}

ShardLock::ShardLock(ShardLock&& o) noexcept : path_(std::move(o.path_)), fd_(o.fd_) { o.fd_ = -1; }

ShardLock::~ShardLock() {
  if (fd_ < 0) return;
  // Removed while still held (see the constructor), then released by the close.
  (void)::unlink(path_.c_str());
  (void)::close(fd_);
}

}  // namespace depthmask
