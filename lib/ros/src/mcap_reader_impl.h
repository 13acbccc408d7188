// The MCAP reader's state, shared by mcap_reader.cpp (opening: the header, the summary, the
// definitions) and mcap_chunks.cpp (the data section: chunks decompressed in parallel while scanning,
// the chunk cache that read() and view() go through). Internal to the ros room.
#pragma once

#include <unistd.h>

#include <cerrno>
#include <cstring>
#include <functional>
#include <future>
#include <list>
#include <map>
#include <memory>
#include <mutex>
#include <string>
#include <tuple>
#include <utility>
#include <vector>

#include "depthmask/errors.h"
#include "depthmask/mcap.h"
#include "mcap_format.h"

namespace depthmask::mcap {
namespace reader_detail {

namespace f = detail::mcap_format;

inline constexpr size_t kMessageHead = 2 + 4 + 8 + 8;  // channel_id, sequence, log_time, publish_time

using Bytes = std::vector<uint8_t>;

/// The buffers of chunks read before, for the next chunks: a bag's chunks are about one size, and a
/// buffer used again costs nothing, while a new one of some MiB is new pages the kernel must fault in
/// and zero one by one (most of a bag run's page faults, all inside the decompressor). Holds at most
/// kMaxBytes; a buffer is reused for a chunk of at least 3/4 its size.
class BufferPool {
 public:
  using Buffer = std::unique_ptr<uint8_t[]>;
  static constexpr size_t kMaxBytes = size_t{64} << 20;

  /// A buffer of at least n bytes (not zero-filled) and its capacity.
  std::pair<Buffer, size_t> take(size_t n) {
    {
      std::lock_guard<std::mutex> lock(mu_);
      size_t best = free_.size();
      for (size_t i = 0; i < free_.size(); ++i)
        if (free_[i].second >= n && free_[i].second / 4 * 3 <= n &&
            (best == free_.size() || free_[i].second < free_[best].second))
          best = i;
      if (best < free_.size()) {
        std::pair<Buffer, size_t> b = std::move(free_[best]);
        free_.erase(free_.begin() + static_cast<std::ptrdiff_t>(best));
        bytes_ -= b.second;
        return b;
      }
    }
    return {Buffer(new uint8_t[n]), n};  // NOLINT(cppcoreguidelines-owning-memory)
  }
  void give(Buffer b, size_t capacity) {
    std::lock_guard<std::mutex> lock(mu_);
    if (bytes_ + capacity > kMaxBytes) return;  // freed here
    bytes_ += capacity;
    free_.emplace_back(std::move(b), capacity);
  }

 private:
  std::mutex mu_;
  std::vector<std::pair<Buffer, size_t>> free_;
  size_t bytes_ = 0;
};

/// A decompressed chunk's records, allocated without zero-filling: the decompressor writes every byte
/// (a std::vector's resize would write them twice). The buffer goes back to its pool when the last
/// reader of the chunk lets go.
class Records {
 public:
  Records(size_t n, std::shared_ptr<BufferPool> pool) : pool_(std::move(pool)), size_(n) {
    std::tie(bytes_, capacity_) = pool_->take(n);
  }
  ~Records() { pool_->give(std::move(bytes_), capacity_); }
  Records(const Records&) = delete;
  Records& operator=(const Records&) = delete;
  uint8_t* data() { return bytes_.get(); }
  const uint8_t* data() const { return bytes_.get(); }
  size_t size() const { return size_; }
  uint8_t operator[](size_t i) const { return bytes_[i]; }

 private:
  std::shared_ptr<BufferPool> pool_;
  BufferPool::Buffer bytes_;
  size_t size_;
  size_t capacity_ = 0;
};

using ChunkPtr = std::shared_ptr<const Records>;
using Visit = std::function<bool(const MessageInfo&, const uint8_t*, size_t)>;

}  // namespace reader_detail

struct Reader::Impl {
  using Bytes = reader_detail::Bytes;
  using ChunkPtr = reader_detail::ChunkPtr;
  using Visit = reader_detail::Visit;

  std::filesystem::path file;
  int fd = -1;
  uint64_t size = 0;
  std::string profile;
  std::map<uint16_t, Schema> schemas;
  std::map<uint16_t, Channel> channels;
  std::map<uint16_t, uint64_t> counts;
  bool summary = false;
  bool footer = false;      // the file ends with a Footer record and the magic
  uint64_t data_limit = 0;  // the data section ends before this (the summary's start, or the file's end)
  std::mutex cache_mu;
  // The last chunks read, most recent first; a chunk being decompressed is in it already, so that the
  // threads that want it too wait for it instead of decompressing it again.
  std::list<std::pair<uint64_t, std::shared_future<ChunkPtr>>> cache;
  // The first chunks a scan decompressed, kept (up to a byte budget) for the reads that follow it: a
  // listing scans, then the frames read their messages in about the same order, from the start.
  std::map<uint64_t, ChunkPtr> kept;
  uint64_t kept_bytes = 0;
  uint64_t keep_budget = 0;  // keep_scanned_chunks
  std::shared_ptr<reader_detail::BufferPool> buffers = std::make_shared<reader_detail::BufferPool>();

  ~Impl() {
    if (fd >= 0) ::close(fd);
  }

  [[noreturn]] void fail(uint8_t op, uint64_t at, const std::string& problem, const std::string& topic = "") const {
    namespace f = reader_detail::f;
    std::string msg = "MCAP file '" + file.string() + "': " + f::op_name(op) + " record at byte " + std::to_string(at);
    if (!topic.empty()) msg += " (topic '" + topic + "')";
    throw InputError(msg + ": " + problem);
  }

  // Up to n bytes at `at`; fewer only at the end of the file.
  size_t read_at(uint64_t at, size_t n, void* dst) const {
    size_t got = 0;
    while (got < n) {
      const ssize_t r = ::pread(fd, static_cast<char*>(dst) + got, n - got, static_cast<off_t>(at + got));
      if (r < 0 && errno == EINTR) continue;
      if (r < 0) throw InputError("cannot read MCAP file '" + file.string() + "': " + std::strerror(errno));
      if (r == 0) break;
      got += static_cast<size_t>(r);
    }
    return got;
  }

  std::pair<uint8_t, uint64_t> head(uint64_t at, uint64_t limit) const;
  void read_content(uint8_t op, uint64_t at, uint64_t len, Bytes& buf) const {
    buf.resize(static_cast<size_t>(len));
    if (read_at(at + reader_detail::f::kRecordHead, buf.size(), buf.data()) != buf.size()) {
      fail(op, at, "the file ends inside it");
    }
  }

  void open();
  bool read_summary();
  void add_definition(uint8_t op, uint64_t at, const uint8_t* p, uint64_t n);
  ChunkPtr decode_chunk(uint64_t at, const uint8_t* p, uint64_t n) const;
  ChunkPtr chunk(uint64_t at);
  void keep(uint64_t at, const ChunkPtr& c);
  // Walks the data section; `messages`: deliver messages and check CRCs (scan), else only collect
  // schemas and channels (the pass of a file without a usable summary).
  void walk(bool messages, const Visit& visit);
  bool chunk_records(uint64_t at, const reader_detail::Records& records, bool messages, const Visit& visit);
  MessageInfo message(uint8_t op, uint64_t at, const uint8_t* p, uint64_t n, const std::string& where) const;
};

}  // namespace depthmask::mcap
