// Files written whole or not at all, the temporaries that makes, and CRC-32 of what was written.
#include "depthmask/atomic_file.h"

#include <fcntl.h>
#include <libdeflate.h>
#include <signal.h>
#include <sys/uio.h>
#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <cerrno>
#include <cstdlib>
#include <cstring>
#include <limits>
#include <regex>

#include "depthmask/detail/host.h"
#include "depthmask/errors.h"

namespace fs = std::filesystem;

namespace depthmask {

namespace {

std::string sys_error(int e) { return std::strerror(e); }

// Unique per host, process and call, so parallel writers never share a temporary name, on one
// machine or on many sharing the folder. The host and pid in the name let remove_stale_temp_files tell
// a killed run's leftovers from a live writer's (TempFileOwner).
std::string temp_name(const fs::path& path, std::string_view shard) {
  static std::atomic<uint64_t> counter{0};
  static const std::string host = host_name();
  return "." + path.filename().string() + ".tmp@" + host + "-" + std::to_string(::getpid()) + "-" +
         std::string(shard.empty() ? "all" : shard) + "-" + std::to_string(counter++);
}
const char* const kProbePrefix = ".depthmask-write-test@";

// All digits (at least one).
bool digits(std::string_view s) {
  return !s.empty() && std::all_of(s.begin(), s.end(), [](char c) { return c >= '0' && c <= '9'; });
}

}  // namespace

void FileBytes::add_owned(std::vector<uint8_t> bytes) {
  if (bytes.empty()) return;
  owned_.push_back(std::make_unique<std::vector<uint8_t>>(std::move(bytes)));
  add_view(owned_.back()->data(), owned_.back()->size());
}

void FileBytes::add_view(const void* data, size_t bytes) {
  if (bytes == 0) return;
  const auto* p = static_cast<const uint8_t*>(data);
  // Rows of a continuous image arrive one after another: one part (one iovec) for all of them.
  if (!parts_.empty() && parts_.back().data + parts_.back().size == p)
    parts_.back().size += bytes;
  else
    parts_.push_back({p, bytes});
  size_ += bytes;
}

uint32_t FileBytes::crc32() const {
  uint32_t crc = 0;
  for (const Part& part : parts_) crc = crc32_of(part.data, part.size, crc);
  return crc;
}

std::vector<uint8_t> FileBytes::flatten() const {
  std::vector<uint8_t> out;
  out.reserve(size_);
  for (const Part& part : parts_) out.insert(out.end(), part.data, part.data + part.size);
  return out;
}

void write_file_atomic(const fs::path& path, const void* data, size_t bytes, bool do_fsync, std::string_view shard) {
  FileBytes b;
  b.add_view(data, bytes);
  write_file_atomic(path, b, do_fsync, shard);
}

void write_file_atomic(const fs::path& path, const FileBytes& bytes, bool do_fsync, std::string_view shard) {
  const fs::path dir = path.parent_path().empty() ? fs::path(".") : path.parent_path();
  const fs::path tmp = dir / temp_name(path, shard);
  const int fd = ::open(tmp.c_str(), O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, 0644);
  DM_EXPECT(fd >= 0, OutputError, "cannot write '" << path.string() << "': " << sys_error(errno));
  auto fail = [&](const char* step) {
    const int e = errno;
    ::close(fd);
    ::unlink(tmp.c_str());
    throw OutputError("cannot write '" + path.string() + "' (" + step + "): " + sys_error(e));
  };
  // writev over the parts, at most kMaxIov at a time, resuming after short writes.
  constexpr size_t kMaxIov = 64;
  const std::vector<FileBytes::Part>& parts = bytes.parts();
  size_t next = 0, done_in_next = 0;  // first part not fully written, and how much of it is
  while (next < parts.size()) {
    iovec iov[kMaxIov];
    size_t n_iov = 0;
    for (size_t i = next; i < parts.size() && n_iov < kMaxIov; ++i, ++n_iov) {
      const size_t skip = i == next ? done_in_next : 0;
      iov[n_iov].iov_base = const_cast<uint8_t*>(parts[i].data + skip);
      iov[n_iov].iov_len = parts[i].size - skip;
    }
    ssize_t n = ::writev(fd, iov, static_cast<int>(n_iov));
    if (n < 0) {
      if (errno == EINTR) continue;
      fail("write");
    }
    if (n == 0) {
      errno = EIO;
      fail("write");
    }
    auto left = static_cast<size_t>(n);
    while (left > 0 && next < parts.size()) {
      const size_t rest = parts[next].size - done_in_next;
      if (left >= rest) {
        left -= rest;
        ++next;
        done_in_next = 0;
      } else {
        done_in_next += left;
        left = 0;
      }
    }
  }
  if (do_fsync && ::fsync(fd) != 0) fail("fsync");
  if (::close(fd) != 0) {
    const int e = errno;
    ::unlink(tmp.c_str());
    throw OutputError("cannot write '" + path.string() + "' (close): " + sys_error(e));
  }
  if (::rename(tmp.c_str(), path.c_str()) != 0) {
    const int e = errno;
    ::unlink(tmp.c_str());
    throw OutputError("cannot write '" + path.string() + "' (rename): " + sys_error(e));
  }
  if (do_fsync) {
    // Make the rename itself durable.
    const int dfd = ::open(dir.c_str(), O_RDONLY | O_DIRECTORY | O_CLOEXEC);
    if (dfd >= 0) {
      (void)::fsync(dfd);
      ::close(dfd);
    }
  }
}

// libdeflate's CRC-32 (the polynomial and values of zlib's crc32, several times faster with PCLMUL):
// the manifest checksums every output file, so this runs over every byte a run writes.
uint32_t crc32_of(const void* data, size_t bytes, uint32_t crc) { return libdeflate_crc32(crc, data, bytes); }

std::optional<TempFileOwner> temp_file_owner(const std::string& name) {
  if (name.size() < 2 || name[0] != '.') return std::nullopt;
  TempFileOwner o;
  auto pid_of = [&](std::string_view text) {
    if (!digits(text) || text.size() > 10) return false;
    const long long pid = std::atoll(std::string(text).c_str());
    if (pid <= 0 || pid > std::numeric_limits<pid_t>::max()) return false;
    o.pid = static_cast<pid_t>(pid);
    return true;
  };
  // Today's names: "<head>@<host>-<pid>[-<shard>-<n>]", where head is ".<file>.tmp" or
  // ".depthmask-write-test". The host holds no '@', the pid, shard and counter no '-': split at the
  // last '@', then take the fields from the right, and what is left is the host ('-' and '.' and all).
  const size_t at = name.rfind('@');
  if (at != std::string::npos) {
    const std::string_view head(name.data(), at), tail(name.data() + at + 1, name.size() - at - 1);
    const bool probe = head == ".depthmask-write-test";
    const bool temp = !probe && head.size() > 5 && head.substr(head.size() - 4) == ".tmp";
    if (!probe && !temp) return std::nullopt;
    std::string_view rest = tail;
    if (temp) {
      const size_t n_at = rest.rfind('-');
      if (n_at == std::string_view::npos || !digits(rest.substr(n_at + 1))) return std::nullopt;
      rest = rest.substr(0, n_at);
      const size_t shard_at = rest.rfind('-');
      if (shard_at == std::string_view::npos || shard_at + 1 == rest.size()) return std::nullopt;
      o.shard = std::string(rest.substr(shard_at + 1));
      rest = rest.substr(0, shard_at);
    }
    const size_t pid_at = rest.rfind('-');
    if (pid_at == std::string_view::npos || pid_at == 0 || !pid_of(rest.substr(pid_at + 1))) return std::nullopt;
    o.host = std::string(rest.substr(0, pid_at));
    return o;
  }
  // The names of earlier versions, without a host: ".<file>.tmp-<pid>-<n>", ".depthmask-write-test-<pid>".
  static const std::regex old_temp(R"(\..+\.tmp-(\d+)-\d+)");
  static const std::regex old_probe(R"(\.depthmask-write-test-(\d+))");
  std::smatch m;
  if ((std::regex_match(name, m, old_temp) || std::regex_match(name, m, old_probe)) && pid_of(m[1].str())) return o;
  return std::nullopt;
}

size_t remove_stale_temp_files(const fs::path& dir) {
  const std::string here = host_name();
  size_t removed = 0;
  std::error_code ec;
  fs::recursive_directory_iterator it(dir, fs::directory_options::skip_permission_denied, ec);
  for (; !ec && it != fs::recursive_directory_iterator(); it.increment(ec)) {
    std::error_code e2;
    if (!it->is_regular_file(e2) || it->is_symlink(e2)) continue;
    const std::string name = it->path().filename().string();
    if (name.empty() || name[0] != '.') continue;
    const std::optional<TempFileOwner> owner = temp_file_owner(name);
    if (!owner) continue;
    // Another machine's (a shared folder): its pid means nothing here, and its writer may be at work.
    // Names without a host (earlier versions) are taken to be this machine's, as they always were.
    if (owner->host && *owner->host != here) continue;
    // Still running (or not ours to signal, EPERM): maybe a live writer; leave it.
    if (::kill(owner->pid, 0) == 0 || errno != ESRCH) continue;
    if (fs::remove(it->path(), e2)) ++removed;
  }
  return removed;
}

void ensure_output_dir(const fs::path& dir) {
  std::error_code ec;
  fs::create_directories(dir, ec);
  DM_EXPECT(!ec, OutputError, "cannot create output folder '" << dir.string() << "': " << ec.message());
  DM_EXPECT(fs::is_directory(dir, ec), OutputError, "output path '" << dir.string() << "' is not a folder");
  const fs::path probe = dir / (kProbePrefix + host_name() + "-" + std::to_string(::getpid()));
  const int fd = ::open(probe.c_str(), O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);
  DM_EXPECT(fd >= 0, OutputError, "output folder '" << dir.string() << "' is not writable: " << sys_error(errno));
  ::close(fd);
  ::unlink(probe.c_str());
}

}  // namespace depthmask
