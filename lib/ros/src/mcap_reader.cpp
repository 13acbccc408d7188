// The MCAP reader: the summary when the footer points at one whose CRC checks, else a pass over the
// data section for the schemas and channels (mcap_chunks.cpp reads the data section: scan() and read()).
#include <fcntl.h>
#include <libdeflate.h>
#include <sys/stat.h>

#include "compression.h"
#include "depthmask/detail/log.h"
#include "mcap_reader_impl.h"

namespace depthmask::mcap {

namespace f = detail::mcap_format;
using reader_detail::kMessageHead;
using Bytes = reader_detail::Bytes;

// The head of the record at `at` (before `limit`): its opcode and content length, both checked.
std::pair<uint8_t, uint64_t> Reader::Impl::head(uint64_t at, uint64_t limit) const {
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
  footer = true;
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
bool Reader::has_footer() const { return impl_->footer; }

}  // namespace depthmask::mcap
