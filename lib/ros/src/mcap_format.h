// MCAP's bytes (https://mcap.dev/spec), shared by the reader and the writer: the magic, the opcodes
// and their names, a bounded little-endian reader of a record's fields and the appenders that write
// them. Internal to the ros room.
#pragma once

#include <cstddef>
#include <cstdint>
#include <cstring>
#include <map>
#include <stdexcept>
#include <string>
#include <vector>

namespace depthmask::detail::mcap_format {

inline constexpr uint8_t kMagic[8] = {0x89, 'M', 'C', 'A', 'P', '0', '\r', '\n'};
inline constexpr size_t kMagicSize = sizeof(kMagic);
inline constexpr size_t kRecordHead = 9;      // opcode (1) + content length (8)
inline constexpr size_t kFooterContent = 20;  // summary_start, summary_offset_start, crc
inline constexpr size_t kFooterRecord = kRecordHead + kFooterContent;
inline constexpr size_t kFooterCrcSpan = kRecordHead + 16;  // the footer's bytes the summary CRC covers

enum Op : uint8_t {
  kHeader = 0x01,
  kFooter = 0x02,
  kSchema = 0x03,
  kChannel = 0x04,
  kMessage = 0x05,
  kChunk = 0x06,
  kMessageIndex = 0x07,
  kChunkIndex = 0x08,
  kAttachment = 0x09,
  kAttachmentIndex = 0x0A,
  kStatistics = 0x0B,
  kMetadata = 0x0C,
  kMetadataIndex = 0x0D,
  kSummaryOffset = 0x0E,
  kDataEnd = 0x0F,
};

// "Chunk", "Message", ... or "unknown (opcode 0x42)" for one this reader does not know.
inline std::string op_name(uint8_t op) {
  static const char* const names[] = {
      "",         "Header",         "Footer",         "Schema",     "Channel",          "Message",
      "Chunk",    "Message Index",  "Chunk Index",    "Attachment", "Attachment Index", "Statistics",
      "Metadata", "Metadata Index", "Summary Offset", "Data End"};
  if (op >= 1 && op <= 0x0F) return names[op];
  static const char hex[] = "0123456789ABCDEF";
  return std::string("unknown (opcode 0x") + hex[op >> 4] + hex[op & 15] + ")";
}

// Reads the fields of one record's content; running past its end throws FieldError (the callers say
// which file and record).
struct FieldError : std::runtime_error {
  using std::runtime_error::runtime_error;
};

class Fields {
 public:
  Fields(const uint8_t* data, size_t size) : p_(data), n_(size) {}
  size_t pos() const { return pos_; }
  size_t left() const { return n_ - pos_; }
  const uint8_t* here() const { return p_ + pos_; }
  uint8_t u8() { return fixed<uint8_t>("uint8"); }
  uint16_t u16() { return fixed<uint16_t>("uint16"); }
  uint32_t u32() { return fixed<uint32_t>("uint32"); }
  uint64_t u64() { return fixed<uint64_t>("uint64"); }
  std::string str(const char* field) {
    const uint32_t n = u32();
    need(n, field);
    std::string s(reinterpret_cast<const char*>(p_ + pos_), n);
    pos_ += n;
    return s;
  }
  // A uint32 (Schema data, maps, arrays) or uint64 (Chunk records) length-prefixed run of bytes.
  const uint8_t* bytes(uint64_t n, const char* field) {
    need(n, field);
    const uint8_t* at = p_ + pos_;
    pos_ += static_cast<size_t>(n);
    return at;
  }
  std::map<std::string, std::string> string_map(const char* field) {
    const uint32_t n = u32();
    need(n, field);
    Fields inner(p_ + pos_, n);
    pos_ += n;
    std::map<std::string, std::string> m;
    while (inner.left() > 0) {
      std::string k = inner.str(field);
      m[k] = inner.str(field);
    }
    return m;
  }
  std::map<uint16_t, uint64_t> id_map(const char* field) {
    const uint32_t n = u32();
    need(n, field);
    Fields inner(p_ + pos_, n);
    pos_ += n;
    std::map<uint16_t, uint64_t> m;
    while (inner.left() > 0) {
      const uint16_t k = inner.u16();
      m[k] = inner.u64();
    }
    return m;
  }

 private:
  void need(uint64_t n, const char* field) const {
    if (n > n_ - pos_) {
      throw FieldError(std::string("its ") + field + " field runs " + std::to_string(n - (n_ - pos_)) +
                       " bytes past the record's end");
    }
  }
  template <typename T>
  T fixed(const char* type) {
    need(sizeof(T), type);
    T v;
    std::memcpy(&v, p_ + pos_, sizeof(T));  // MCAP is little-endian, as every host depthmask builds for
    pos_ += sizeof(T);
    return v;
  }
  const uint8_t* p_;
  size_t n_;
  size_t pos_ = 0;
};

// Appenders of the writer.
inline void put(std::vector<uint8_t>& b, const void* data, size_t n) {
  const auto* p = static_cast<const uint8_t*>(data);
  b.insert(b.end(), p, p + n);
}
template <typename T>
void put_int(std::vector<uint8_t>& b, T v) {
  put(b, &v, sizeof v);
}
inline void put_str(std::vector<uint8_t>& b, const std::string& s) {
  put_int(b, static_cast<uint32_t>(s.size()));
  put(b, s.data(), s.size());
}
inline void put_string_map(std::vector<uint8_t>& b, const std::map<std::string, std::string>& m) {
  std::vector<uint8_t> inner;
  for (const auto& [k, v] : m) {
    put_str(inner, k);
    put_str(inner, v);
  }
  put_int(b, static_cast<uint32_t>(inner.size()));
  put(b, inner.data(), inner.size());
}
inline void put_id_map(std::vector<uint8_t>& b, const std::map<uint16_t, uint64_t>& m) {
  put_int(b, static_cast<uint32_t>(m.size() * 10));
  for (const auto& [k, v] : m) {
    put_int(b, k);
    put_int(b, v);
  }
}
// Starts a record: the opcode and a length patched by end_record().
inline size_t begin_record(std::vector<uint8_t>& b, uint8_t op) {
  b.push_back(op);
  put_int(b, uint64_t{0});
  return b.size();
}
inline void end_record(std::vector<uint8_t>& b, size_t content_start) {
  const uint64_t n = b.size() - content_start;
  std::memcpy(b.data() + content_start - 8, &n, 8);
}

}  // namespace depthmask::detail::mcap_format
