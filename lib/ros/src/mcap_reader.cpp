// The MCAP reader: the summary when the footer points at one whose CRC checks, else a pass over the
// data section for the schemas and channels; scan() walks the data section record by record (the
// messages outside chunks and those in chunks alike), checking chunk and data-section CRCs; read()
// finds one message again, decompressing its chunk through a small cache.
#include <fcntl.h>
#include <libdeflate.h>
#include <sys/stat.h>
#include <unistd.h>
#include <zlib.h>

#include <cerrno>
#include <cstring>
#include <list>
#include <mutex>
#include <utility>

#include "compression.h"
#include "depthmask/detail/log.h"
#include "depthmask/errors.h"
#include "depthmask/mcap.h"
#include "mcap_format.h"

namespace depthmask::mcap {
namespace {

namespace f = detail::mcap_format;

constexpr uint64_t kMaxChunkBytes = uint64_t{2} << 30;  // a decompressed chunk's bound: 2 GiB
constexpr uint64_t kMaxRatio = 1000;                    // and 1000x its compressed size ...
constexpr uint64_t kRatioFloor = uint64_t{64} << 20;    // ... once over 64 MiB (zeros compress far)
constexpr size_t kCachedChunks = 4;
constexpr size_t kMessageHead = 2 + 4 + 8 + 8;  // channel_id, sequence, log_time, publish_time

using Bytes = std::vector<uint8_t>;
using ChunkPtr = std::shared_ptr<const Bytes>;

}  // namespace

struct Reader::Impl {
  std::filesystem::path file;
  int fd = -1;
  uint64_t size = 0;
  std::string profile;
  std::map<uint16_t, Schema> schemas;
  std::map<uint16_t, Channel> channels;
  std::map<uint16_t, uint64_t> counts;
  bool summary = false;
  uint64_t data_limit = 0;  // the data section ends before this (the summary's start, or the file's end)
  std::mutex cache_mu;
  std::list<std::pair<uint64_t, ChunkPtr>> cache;  // most recent first

  ~Impl() {
    if (fd >= 0) ::close(fd);
  }

  [[noreturn]] void fail(uint8_t op, uint64_t at, const std::string& problem, const std::string& topic = "") const {
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

  // The head of the record at `at` (before `limit`): its opcode and content length, both checked.
  std::pair<uint8_t, uint64_t> head(uint64_t at, uint64_t limit) const {
    uint8_t h[f::kRecordHead];
    const size_t got = at < limit ? read_at(at, std::min<uint64_t>(f::kRecordHead, limit - at), h) : 0;
    if (got < f::kRecordHead) {
      throw InputError("MCAP file '" + file.string() + "' is cut off at byte " + std::to_string(at) +
                       " inside a record's head (truncated, or still being written)");
    }
    uint64_t len = 0;
    std::memcpy(&len, h + 1, 8);
    if (len > limit - at - f::kRecordHead) {
      fail(h[0], at,
           "its length " + std::to_string(len) + " runs past the end of the " +
               (limit == size ? "file (" + std::to_string(size) + " bytes): truncated or corrupt"
                              : std::string("data section")));
    }
    return {h[0], len};
  }

  void read_content(uint8_t op, uint64_t at, uint64_t len, Bytes& buf) const {
    buf.resize(static_cast<size_t>(len));
    if (read_at(at + f::kRecordHead, buf.size(), buf.data()) != buf.size()) fail(op, at, "the file ends inside it");
  }

  std::string topic_of(uint16_t channel) const {
    const auto it = channels.find(channel);
    return it == channels.end() ? "" : it->second.topic;
  }

  void open();
  bool read_summary();
  void add_definition(uint8_t op, uint64_t at, const uint8_t* p, uint64_t n);
  ChunkPtr decode_chunk(uint64_t at, const uint8_t* p, uint64_t n) const;
  ChunkPtr chunk(uint64_t at);
  // Walks the data section; `messages`: deliver messages and check CRCs (scan), else only collect
  // schemas and channels (the pass of a file without a usable summary).
  void walk(bool messages, const std::function<bool(const MessageInfo&, const uint8_t*, size_t)>& visit);
  bool chunk_records(uint64_t at, const Bytes& records, bool messages,
                     const std::function<bool(const MessageInfo&, const uint8_t*, size_t)>& visit);
  MessageInfo message(uint8_t op, uint64_t at, const uint8_t* p, uint64_t n, const std::string& where) const;
};
void Reader::Impl::open() {
  fd = ::open(file.c_str(), O_RDONLY | O_CLOEXEC);
  struct stat st {};
  if (fd < 0 || ::fstat(fd, &st) != 0) {
    throw InputError("cannot open MCAP file '" + file.string() + "': " + std::strerror(errno));
  }
  size = static_cast<uint64_t>(st.st_size);
  data_limit = size;
  uint8_t magic[f::kMagicSize] = {};
  if (read_at(0, f::kMagicSize, magic) != f::kMagicSize || std::memcmp(magic, f::kMagic, f::kMagicSize) != 0) {
    throw InputError("'" + file.string() + "' is not an MCAP file: it does not start with MCAP's magic bytes");
  }
  const auto [op, len] = head(f::kMagicSize, size);
  if (op != f::kHeader) fail(op, f::kMagicSize, "the first record is not the Header");
  Bytes buf;
  read_content(op, f::kMagicSize, len, buf);
  try {
    f::Fields r(buf.data(), buf.size());
    profile = r.str("profile");
  } catch (const f::FieldError& e) {
    fail(op, f::kMagicSize, e.what());
  }
  summary = read_summary();
  if (summary) return;
  try {
    walk(false, nullptr);  // the schemas and channels; damage is scan()'s to report
  } catch (const InputError& e) {
    detail::log().debug("MCAP file '{}': definitions read up to the damage: {}", file.string(), e.what());
  }
}

// The summary section, when the footer points at one and its CRC (if any) checks.
bool Reader::Impl::read_summary() {
  constexpr uint64_t kTail = f::kFooterRecord + f::kMagicSize;
  if (size < f::kMagicSize + kTail) return false;
  uint8_t tail[kTail];
  if (read_at(size - kTail, kTail, tail) != kTail) return false;
  uint64_t len = 0;
  std::memcpy(&len, tail + 1, 8);
  if (tail[0] != f::kFooter || len != f::kFooterContent || std::memcmp(tail + f::kFooterRecord, f::kMagic, 8) != 0) {
    return false;  // no footer: a file cut off or still being written
  }
  uint64_t start = 0, offsets = 0;
  uint32_t crc = 0;
  std::memcpy(&start, tail + 9, 8);
  std::memcpy(&offsets, tail + 17, 8);
  std::memcpy(&crc, tail + 25, 4);
  const uint64_t footer_at = size - kTail;
  if (start == 0) return false;
  if (start < f::kMagicSize || start > footer_at || (offsets != 0 && (offsets < start || offsets > footer_at))) {
    detail::log().warn("MCAP file '{}': its footer points outside the file; reading it by scanning", file.string());
    return false;
  }
  Bytes buf(static_cast<size_t>(footer_at + f::kFooterCrcSpan - start));
  if (read_at(start, buf.size(), buf.data()) != buf.size()) return false;
  if (crc != 0 && static_cast<uint32_t>(::libdeflate_crc32(0, buf.data(), buf.size())) != crc) {
    detail::log().warn("MCAP file '{}': its summary's CRC differs; reading it by scanning", file.string());
    return false;
  }
  const uint64_t end = offsets != 0 ? offsets : footer_at;
  try {
    for (uint64_t pos = start; pos < end;) {
      const auto [op, n] = head(pos, end);
      const uint8_t* p = buf.data() + (pos - start) + f::kRecordHead;
      if (op == f::kSchema || op == f::kChannel) add_definition(op, pos, p, n);
      if (op == f::kStatistics) {
        f::Fields r(p, n);
        r.bytes(8 + 2 + 4 * 4 + 8 + 8, "Statistics");
        counts = r.id_map("channel_message_counts");
      }
      pos += f::kRecordHead + n;
    }
  } catch (const std::exception& e) {  // InputError, FieldError
    detail::log().warn("MCAP file '{}': its summary is damaged ({}); reading it by scanning", file.string(), e.what());
    schemas.clear();
    channels.clear();
    counts.clear();
    return false;
  }
  data_limit = start;
  return true;
}

void Reader::Impl::add_definition(uint8_t op, uint64_t at, const uint8_t* p, uint64_t n) {
  try {
    f::Fields r(p, static_cast<size_t>(n));
    if (op == f::kSchema) {
      Schema s;
      s.id = r.u16();
      s.name = r.str("name");
      s.encoding = r.str("encoding");
      const uint32_t dn = r.u32();
      const uint8_t* d = r.bytes(dn, "data");
      s.data.assign(reinterpret_cast<const char*>(d), dn);
      if (s.id != 0) schemas.emplace(s.id, std::move(s));  // a schema id of 0 is invalid: ignored
      return;
    }
    Channel c;
    c.id = r.u16();
    c.schema_id = r.u16();
    c.topic = r.str("topic");
    c.message_encoding = r.str("message_encoding");
    c.metadata = r.string_map("metadata");
    channels.emplace(c.id, std::move(c));
  } catch (const f::FieldError& e) {
    fail(op, at, e.what());
  }
}

MessageInfo Reader::Impl::message(uint8_t op, uint64_t at, const uint8_t* p, uint64_t n,
                                  const std::string& where) const {
  MessageInfo m;
  if (n < kMessageHead) {
    fail(op, at, where + "it is " + std::to_string(n) + " bytes, shorter than a Message's 22-byte head");
  }
  std::memcpy(&m.channel_id, p, 2);
  std::memcpy(&m.sequence, p + 2, 4);
  std::memcpy(&m.log_time, p + 6, 8);
  std::memcpy(&m.publish_time, p + 14, 8);
  if (channels.find(m.channel_id) == channels.end()) {
    fail(op, at, where + "its channel " + std::to_string(m.channel_id) + " has no Channel record");
  }
  return m;
}

ChunkPtr Reader::Impl::decode_chunk(uint64_t at, const uint8_t* p, uint64_t n) const {
  constexpr uint8_t op = f::kChunk;
  try {
    f::Fields r(p, static_cast<size_t>(n));
    r.u64();  // message_start_time
    r.u64();  // message_end_time
    const uint64_t usize = r.u64();
    const uint32_t crc = r.u32();
    const std::string compression = r.str("compression");
    const uint64_t csize = r.u64();
    const uint8_t* data = r.bytes(csize, "records");
    if (usize > kMaxChunkBytes) fail(op, at, "its uncompressed size " + std::to_string(usize) + " is over 2 GiB");
    if (compression.empty() && usize != csize) {
      fail(op, at, "it is uncompressed but declares " + std::to_string(usize) + " bytes for " + std::to_string(csize));
    }
    if (!compression.empty() && usize > std::max(kRatioFloor, csize * kMaxRatio)) {
      fail(op, at,
           "its uncompressed size " + std::to_string(usize) + " is over 1000 times its " + std::to_string(csize) +
               " compressed bytes");
    }
    auto out = std::make_shared<Bytes>();
    std::string why;
    if (compression.empty()) {
      out->assign(data, data + csize);
    } else if (compression == "zstd" || compression == "lz4") {
      out->resize(static_cast<size_t>(usize));
      why = compression == "zstd" ? detail::zstd_decompress(data, csize, out->data(), out->size())
                                  : detail::lz4f_decompress(data, csize, out->data(), out->size());
    } else {
      why = "its compression '" + compression + "' is not one depthmask reads (zstd, lz4 or none)";
    }
    if (!why.empty()) fail(op, at, "it does not decompress: " + why);
    const uLong got = out->empty() ? 0 : ::libdeflate_crc32(0, out->data(), out->size());
    if (crc != 0 && static_cast<uint32_t>(got) != crc) {
      fail(op, at, "the CRC of its records differs from the one it records (the chunk is damaged)");
    }
    return out;
  } catch (const f::FieldError& e) {
    fail(op, at, e.what());
  }
}

ChunkPtr Reader::Impl::chunk(uint64_t at) {
  {
    std::lock_guard<std::mutex> lock(cache_mu);
    for (auto it = cache.begin(); it != cache.end(); ++it) {
      if (it->first == at) {
        cache.splice(cache.begin(), cache, it);
        return it->second;
      }
    }
  }
  const auto [op, len] = head(at, size);
  if (op != f::kChunk) fail(op, at, "a Chunk was expected there");
  Bytes buf;
  read_content(op, at, len, buf);
  ChunkPtr c = decode_chunk(at, buf.data(), len);
  std::lock_guard<std::mutex> lock(cache_mu);
  cache.emplace_front(at, c);
  if (cache.size() > kCachedChunks) cache.pop_back();
  return c;
}

bool Reader::Impl::chunk_records(uint64_t at, const Bytes& records, bool messages,
                                 const std::function<bool(const MessageInfo&, const uint8_t*, size_t)>& visit) {
  const uint64_t n = records.size();
  for (uint64_t pos = 0; pos < n;) {
    const std::string where = "at byte " + std::to_string(pos) + " of its records, ";
    if (n - pos < f::kRecordHead) fail(f::kChunk, at, where + "a record's head is cut off");
    const uint8_t op = records[pos];
    uint64_t len = 0;
    std::memcpy(&len, records.data() + pos + 1, 8);
    if (len > n - pos - f::kRecordHead) {
      fail(f::kChunk, at,
           where + "a " + f::op_name(op) + " record's length " + std::to_string(len) + " runs past them");
    }
    const uint8_t* p = records.data() + pos + f::kRecordHead;
    if (op == f::kSchema || op == f::kChannel) {
      add_definition(op, at, p, len);
    } else if (op == f::kMessage && messages) {
      MessageInfo m = message(f::kChunk, at, p, len, where);
      m.location = {at, pos};
      if (!visit(m, p + kMessageHead, static_cast<size_t>(len - kMessageHead))) return false;
    }
    pos += f::kRecordHead + len;
  }
  return true;
}

void Reader::Impl::walk(bool messages, const std::function<bool(const MessageInfo&, const uint8_t*, size_t)>& visit) {
  Bytes buf;
  const uint32_t magic_crc = static_cast<uint32_t>(::libdeflate_crc32(0, f::kMagic, f::kMagicSize));
  uLong crc = ::crc32(0, nullptr, 0);  // of the data section after the magic
  for (uint64_t pos = f::kMagicSize; pos < data_limit || !summary;) {
    if (!summary && pos == size) {
      throw InputError("MCAP file '" + file.string() + "' ends at byte " + std::to_string(size) +
                       " without its Data End record and footer (truncated, or still being written)");
    }
    const auto [op, len] = head(pos, data_limit);
    if (op == f::kFooter) return;  // a file without a Data End record
    const bool skip = !messages && op != f::kSchema && op != f::kChannel && op != f::kChunk;
    if (skip) {
      pos += f::kRecordHead + len;
      continue;
    }
    read_content(op, pos, len, buf);
    if (op == f::kDataEnd) {
      uint32_t want = 0;
      if (len >= 4) std::memcpy(&want, buf.data(), 4);
      const auto from8 = static_cast<uint32_t>(crc);
      const auto from0 = static_cast<uint32_t>(::crc32_combine(magic_crc, crc, static_cast<z_off_t>(pos - 8)));
      // The reference writers count the leading magic in; accept a writer that starts after it too.
      if (messages && want != 0 && want != from0 && want != from8) {
        fail(op, pos, "the data section's CRC differs from the one it records (the file is damaged)");
      }
      return;
    }
    if (messages) {
      uint8_t h[f::kRecordHead] = {op};
      std::memcpy(h + 1, &len, 8);
      crc = ::libdeflate_crc32(static_cast<uint32_t>(crc), h, f::kRecordHead);
      if (!buf.empty()) crc = ::libdeflate_crc32(static_cast<uint32_t>(crc), buf.data(), buf.size());
    }
    if (op == f::kSchema || op == f::kChannel) {
      add_definition(op, pos, buf.data(), len);
    } else if (op == f::kMessage) {
      MessageInfo m = message(op, pos, buf.data(), len, "");
      m.location = {UINT64_MAX, pos};
      if (!visit(m, buf.data() + kMessageHead, static_cast<size_t>(len - kMessageHead))) return;
    } else if (op == f::kChunk) {
      const ChunkPtr c = decode_chunk(pos, buf.data(), len);
      if (!chunk_records(pos, *c, messages, visit)) return;
    }
    pos += f::kRecordHead + len;
  }
}

Reader::Reader(const std::filesystem::path& file) : impl_(std::make_unique<Impl>()) {
  if (!detail::rosbag_built()) throw InputError(detail::kNoRosbag);
  impl_->file = file;
  impl_->open();
}

Reader::~Reader() = default;

const std::filesystem::path& Reader::file() const { return impl_->file; }
const std::string& Reader::profile() const { return impl_->profile; }
const std::map<uint16_t, Schema>& Reader::schemas() const { return impl_->schemas; }
const std::map<uint16_t, Channel>& Reader::channels() const { return impl_->channels; }
const std::map<uint16_t, uint64_t>& Reader::message_counts() const { return impl_->counts; }
bool Reader::has_summary() const { return impl_->summary; }

void Reader::scan(const std::function<bool(const MessageInfo&, const uint8_t* data, size_t size)>& visit) {
  impl_->walk(true, visit);
}

// Touches only the file, its size and the chunk cache (under its lock), never the channel maps that a
// scan of a file without a summary may be adding to: safe from several threads.
std::vector<uint8_t> Reader::read(const MessageLocation& where) {
  Impl& m = *impl_;
  if (where.chunk_offset == UINT64_MAX) {
    const auto [op, len] = m.head(where.offset, m.size);
    if (op != f::kMessage) m.fail(op, where.offset, "a Message was expected there");
    Bytes buf;
    if (len < kMessageHead) m.fail(op, where.offset, "it is shorter than a Message's 22-byte head");
    m.read_content(op, where.offset, len, buf);
    return Bytes(buf.begin() + kMessageHead, buf.end());
  }
  const ChunkPtr c = m.chunk(where.chunk_offset);
  const uint64_t pos = where.offset;
  const std::string at = "at byte " + std::to_string(pos) + " of its records, ";
  if (pos > c->size() || c->size() - pos < f::kRecordHead || (*c)[pos] != f::kMessage) {
    m.fail(f::kChunk, where.chunk_offset, at + "no Message record is there");
  }
  uint64_t len = 0;
  std::memcpy(&len, c->data() + pos + 1, 8);
  if (len > c->size() - pos - f::kRecordHead) m.fail(f::kChunk, where.chunk_offset, at + "the Message runs past them");
  if (len < kMessageHead) m.fail(f::kChunk, where.chunk_offset, at + "the Message is shorter than its 22-byte head");
  const uint8_t* p = c->data() + pos + f::kRecordHead;
  return Bytes(p + kMessageHead, p + len);
}

}  // namespace depthmask::mcap
