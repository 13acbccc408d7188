// The MCAP writer: the `ros2` profile's layout as the reference writers lay it out — schemas and
// channels in the data section before their first message, chunks (zstd, lz4 frames or none) each
// followed by its message indexes, Data End with the data section's CRC (counted from the file's
// first byte, the leading magic included, as the reference writers count it), then the summary
// (schemas, channels, statistics, chunk indexes, grouped by opcode), its summary offsets and the footer
// with the summary's CRC. The file is `<name>.part` until close() renames it.
#include <fcntl.h>
#include <libdeflate.h>
#include <unistd.h>
#include <zlib.h>

#include <cerrno>
#include <cstring>
#include <stdexcept>

#include "compression.h"
#include "depthmask/detail/log.h"
#include "depthmask/errors.h"
#include "depthmask/mcap.h"
#include "mcap_format.h"

namespace depthmask::mcap {
namespace {

namespace f = detail::mcap_format;
using Bytes = std::vector<uint8_t>;

struct ChunkIndex {
  uint64_t start = 0, end = 0, offset = 0, length = 0, index_length = 0, compressed = 0, uncompressed = 0;
  std::map<uint16_t, uint64_t> index_offsets;
  std::string compression;
};

const char* compression_name(Compression c) {
  switch (c) {
    case Compression::Zstd:
      return "zstd";
    case Compression::Lz4:
      return "lz4";
    case Compression::None:
      break;
  }
  return "";
}

Bytes schema_record(const Schema& s) {
  Bytes b;
  const size_t c = f::begin_record(b, f::kSchema);
  f::put_int(b, s.id);
  f::put_str(b, s.name);
  f::put_str(b, s.encoding);
  f::put_str(b, s.data);
  f::end_record(b, c);
  return b;
}

Bytes channel_record(const Channel& ch) {
  Bytes b;
  const size_t c = f::begin_record(b, f::kChannel);
  f::put_int(b, ch.id);
  f::put_int(b, ch.schema_id);
  f::put_str(b, ch.topic);
  f::put_str(b, ch.message_encoding);
  f::put_string_map(b, ch.metadata);
  f::end_record(b, c);
  return b;
}

}  // namespace

struct Writer::Impl {
  std::filesystem::path file;
  std::filesystem::path part;
  WriterOptions opt;
  int fd = -1;
  uint64_t pos = 0;
  uLong crc = ::crc32(0, nullptr, 0);  // of the data section, from the file's first byte
  std::vector<Schema> schemas;
  std::vector<Channel> channels;
  std::vector<uint32_t> sequence;  // per channel
  Bytes chunk;                     // the open chunk's records
  uint64_t chunk_start = 0, chunk_end = 0, chunk_messages = 0;
  std::map<uint16_t, std::vector<std::pair<uint64_t, uint64_t>>> chunk_index;  // log_time, offset
  std::vector<ChunkIndex> chunk_indexes;
  std::map<uint16_t, uint64_t> counts;
  uint64_t messages = 0, on_disk = 0, first = UINT64_MAX, last = 0;
  bool closed = false;

  ~Impl() {
    if (fd >= 0) ::close(fd);
  }

  [[noreturn]] void fail(const std::string& what) const {
    throw OutputError("cannot write MCAP file '" + part.string() + "': " + what + ": " + std::strerror(errno));
  }

  void put(const void* data, size_t n) {
    const auto* p = static_cast<const uint8_t*>(data);
    if (n == 0) return;  // (crc32 of a null pointer is its initial value, not the crc unchanged)
    crc = ::libdeflate_crc32(static_cast<uint32_t>(crc), p, n);
    for (size_t done = 0; done < n;) {
      const ssize_t w = ::write(fd, p + done, n - done);
      if (w < 0 && errno == EINTR) continue;
      if (w < 0) fail("write");
      done += static_cast<size_t>(w);
    }
    pos += n;
  }
  void put(const Bytes& b) { put(b.data(), b.size()); }

  void close_chunk();
  void write_summary();
};

void Writer::Impl::close_chunk() {
  if (chunk.empty()) return;
  Bytes packed;
  const uint8_t* data = chunk.data();
  size_t size = chunk.size();
  if (opt.compression == Compression::Zstd) {
    packed = detail::zstd_compress(chunk.data(), chunk.size(), opt.zstd_level);
  } else if (opt.compression == Compression::Lz4) {
    packed = detail::lz4f_compress(chunk.data(), chunk.size());
  }
  if (opt.compression != Compression::None) {
    data = packed.data();
    size = packed.size();
  }
  ChunkIndex ci;
  ci.start = chunk_start;
  ci.end = chunk_end;
  ci.offset = pos;
  ci.compression = compression_name(opt.compression);
  ci.compressed = size;
  ci.uncompressed = chunk.size();
  Bytes head;
  const size_t c = f::begin_record(head, f::kChunk);
  f::put_int(head, chunk_start);
  f::put_int(head, chunk_end);
  f::put_int(head, uint64_t{chunk.size()});
  f::put_int(head, static_cast<uint32_t>(::libdeflate_crc32(0, chunk.data(), chunk.size())));  // chunk is not empty
  f::put_str(head, ci.compression);
  f::put_int(head, uint64_t{size});
  f::end_record(head, c);
  const uint64_t content = head.size() - c + size;
  std::memcpy(head.data() + c - 8, &content, 8);  // the records follow the head, not copied into it
  put(head);
  put(data, size);
  ci.length = pos - ci.offset;
  if (opt.index) {
    const uint64_t index_start = pos;
    for (const auto& [channel, entries] : chunk_index) {
      ci.index_offsets[channel] = pos;
      Bytes b;
      const size_t r = f::begin_record(b, f::kMessageIndex);
      f::put_int(b, channel);
      f::put_int(b, static_cast<uint32_t>(entries.size() * 16));
      for (const auto& [time, offset] : entries) {
        f::put_int(b, time);
        f::put_int(b, offset);
      }
      f::end_record(b, r);
      put(b);
    }
    ci.index_length = pos - index_start;
  }
  chunk_indexes.push_back(std::move(ci));
  on_disk += chunk_messages;
  chunk.clear();
  chunk_index.clear();
  chunk_messages = 0;
}

void Writer::Impl::write_summary() {
  const uint64_t start = pos;
  Bytes s;
  std::vector<std::pair<uint8_t, std::pair<uint64_t, uint64_t>>> groups;  // opcode, start, length
  const auto group = [&](uint8_t op, size_t from) {
    if (s.size() > from) groups.push_back({op, {start + from, s.size() - from}});
  };
  size_t from = s.size();
  for (const Schema& sc : schemas) {
    const Bytes b = schema_record(sc);
    f::put(s, b.data(), b.size());
  }
  group(f::kSchema, from);
  from = s.size();
  for (const Channel& ch : channels) {
    const Bytes b = channel_record(ch);
    f::put(s, b.data(), b.size());
  }
  group(f::kChannel, from);
  from = s.size();
  const size_t st = f::begin_record(s, f::kStatistics);
  f::put_int(s, messages);
  f::put_int(s, static_cast<uint16_t>(schemas.size()));
  f::put_int(s, static_cast<uint32_t>(channels.size()));
  f::put_int(s, uint32_t{0});  // attachments
  f::put_int(s, uint32_t{0});  // metadata
  f::put_int(s, static_cast<uint32_t>(chunk_indexes.size()));
  f::put_int(s, messages ? first : uint64_t{0});
  f::put_int(s, last);
  f::put_id_map(s, counts);
  f::end_record(s, st);
  group(f::kStatistics, from);
  from = s.size();
  for (const ChunkIndex& ci : chunk_indexes) {
    const size_t r = f::begin_record(s, f::kChunkIndex);
    for (uint64_t v : {ci.start, ci.end, ci.offset, ci.length}) f::put_int(s, v);
    f::put_id_map(s, ci.index_offsets);
    f::put_int(s, ci.index_length);
    f::put_str(s, ci.compression);
    f::put_int(s, ci.compressed);
    f::put_int(s, ci.uncompressed);
    f::end_record(s, r);
  }
  group(f::kChunkIndex, from);
  const uint64_t offsets = start + s.size();
  for (const auto& [op, span] : groups) {
    const size_t r = f::begin_record(s, f::kSummaryOffset);
    f::put_int(s, op);
    f::put_int(s, span.first);
    f::put_int(s, span.second);
    f::end_record(s, r);
  }
  s.push_back(f::kFooter);  // the length written now: the summary's CRC covers it
  f::put_int(s, uint64_t{f::kFooterContent});
  f::put_int(s, start);
  f::put_int(s, offsets);
  f::put_int(s, static_cast<uint32_t>(::libdeflate_crc32(0, s.data(), s.size())));
  put(s);
}

Writer::Writer(const std::filesystem::path& file, WriterOptions options) : impl_(std::make_unique<Impl>()) {
  if (!detail::rosbag_built()) throw ConfigError(detail::kNoRosbag);
  Impl& m = *impl_;
  m.file = file;
  m.part = file.string() + ".part";
  m.opt = std::move(options);
  if (m.opt.chunk_size == 0) m.opt.chunk_size = 1;
  m.fd = ::open(m.part.c_str(), O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);
  if (m.fd < 0) m.fail("open");
  m.put(f::kMagic, f::kMagicSize);
  Bytes b;
  const size_t c = f::begin_record(b, f::kHeader);
  f::put_str(b, m.opt.profile);
  f::put_str(b, m.opt.library);
  f::end_record(b, c);
  m.put(b);
}

Writer::~Writer() {
  try {
    close();
  } catch (const std::exception& e) {
    detail::log().error("MCAP file '{}' was not finished: {}", impl_->part.string(), e.what());
  }
}

uint16_t Writer::add_schema(const std::string& name, const std::string& encoding, const std::string& data) {
  Impl& m = *impl_;
  if (m.closed) throw std::logic_error("mcap::Writer::add_schema after close()");
  if (m.schemas.size() >= UINT16_MAX) throw std::length_error("an MCAP file holds at most 65535 schemas");
  m.schemas.push_back({static_cast<uint16_t>(m.schemas.size() + 1), name, encoding, data});
  m.put(schema_record(m.schemas.back()));
  return m.schemas.back().id;
}

uint16_t Writer::add_channel(uint16_t schema_id, const std::string& topic, const std::string& message_encoding,
                             const std::map<std::string, std::string>& metadata) {
  Impl& m = *impl_;
  if (m.closed) throw std::logic_error("mcap::Writer::add_channel after close()");
  if (schema_id > m.schemas.size())
    throw std::invalid_argument("mcap::Writer::add_channel: no schema " + std::to_string(schema_id));
  if (m.channels.size() >= UINT16_MAX) throw std::length_error("an MCAP file holds at most 65535 channels");
  m.channels.push_back({static_cast<uint16_t>(m.channels.size() + 1), schema_id, topic, message_encoding, metadata});
  m.sequence.push_back(0);
  m.put(channel_record(m.channels.back()));
  return m.channels.back().id;
}

void Writer::write(uint16_t channel_id, uint64_t log_time, uint64_t publish_time, const uint8_t* data, size_t size,
                   std::optional<uint32_t> sequence) {
  Impl& m = *impl_;
  if (m.closed) throw std::logic_error("mcap::Writer::write after close()");
  if (channel_id == 0 || channel_id > m.channels.size()) {
    throw std::invalid_argument("mcap::Writer::write: no channel " + std::to_string(channel_id));
  }
  Bytes head;
  const size_t c = f::begin_record(head, f::kMessage);
  f::put_int(head, channel_id);
  const uint32_t counted = m.sequence[channel_id - 1]++;
  f::put_int(head, sequence.value_or(counted));
  f::put_int(head, log_time);
  f::put_int(head, publish_time);
  f::end_record(head, c);
  const uint64_t content = head.size() - c + size;
  std::memcpy(head.data() + c - 8, &content, 8);
  ++m.messages;
  ++m.counts[channel_id];
  m.first = std::min(m.first, log_time);
  m.last = std::max(m.last, log_time);
  if (!m.opt.chunked) {
    m.put(head);
    m.put(data, size);
    ++m.on_disk;
    return;
  }
  if (m.chunk.empty()) m.chunk_start = m.chunk_end = log_time;
  m.chunk_start = std::min(m.chunk_start, log_time);
  m.chunk_end = std::max(m.chunk_end, log_time);
  m.chunk_index[channel_id].push_back({log_time, m.chunk.size()});
  f::put(m.chunk, head.data(), head.size());
  f::put(m.chunk, data, size);
  ++m.chunk_messages;
  if (m.chunk.size() >= m.opt.chunk_size) m.close_chunk();
}

uint64_t Writer::flush(bool sync) {
  Impl& m = *impl_;
  if (m.closed) return m.on_disk;
  m.close_chunk();
  if (sync && ::fsync(m.fd) != 0) m.fail("fsync");
  return m.on_disk;
}

void Writer::close() {
  Impl& m = *impl_;
  if (m.closed) return;
  m.closed = true;  // a failure below leaves the part, and the destructor does not try again
  m.close_chunk();
  Bytes b;
  const size_t c = f::begin_record(b, f::kDataEnd);
  f::put_int(b, static_cast<uint32_t>(m.crc));
  f::end_record(b, c);
  m.put(b);
  if (m.opt.index) {
    m.write_summary();
  } else {
    b.clear();
    const size_t r = f::begin_record(b, f::kFooter);
    f::put_int(b, uint64_t{0});
    f::put_int(b, uint64_t{0});
    f::put_int(b, uint32_t{0});
    f::end_record(b, r);
    m.put(b);
  }
  m.put(f::kMagic, f::kMagicSize);
  if (::fsync(m.fd) != 0) m.fail("fsync");
  if (::close(m.fd) != 0) {
    m.fd = -1;
    m.fail("close");
  }
  m.fd = -1;
  std::error_code ec;
  std::filesystem::rename(m.part, m.file, ec);
  if (ec) throw OutputError("cannot rename '" + m.part.string() + "' to '" + m.file.string() + "': " + ec.message());
  const int dir = ::open(m.file.parent_path().empty() ? "." : m.file.parent_path().c_str(), O_RDONLY | O_CLOEXEC);
  if (dir >= 0) {
    (void)::fsync(dir);  // the rename itself on disk; a folder that cannot be synced is no error
    ::close(dir);
  }
}

}  // namespace depthmask::mcap
