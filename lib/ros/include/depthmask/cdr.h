// CDR (OMG XCDR1 plain CDR), the serialisation of ROS 2 messages: a 4-byte encapsulation header
// (00 00 big-endian, 00 01 little-endian; options 00 00), then the fields, each primitive aligned to its
// size relative to the byte after the header. Strings are a uint32 length that counts the NUL, the
// bytes and the NUL; sequences a uint32 count and the elements. Reading takes either byte order;
// writing is little-endian (what every ROS 2 RMW on x86 and ARM writes).
#pragma once

#include <cstddef>
#include <cstdint>
#include <string>
#include <vector>

namespace depthmask::ros {

/// Reads one CDR payload. Every read checks the bounds: running past the end, a string without its
/// NUL, a length field past the end or an unknown encapsulation throws InputError saying what and at
/// which byte of the payload (`what` names the payload in messages: "message 12 of /camera/depth").
class CdrReader {
 public:
  CdrReader(const uint8_t* data, size_t size, std::string what);
  bool big_endian() const { return big_; }
  size_t offset() const { return pos_; }  ///< bytes read, the encapsulation header included
  size_t remaining() const { return size_ - pos_; }
  uint8_t u8();
  int8_t i8();
  uint16_t u16();
  uint32_t u32();
  int32_t i32();
  uint64_t u64();
  float f32();
  double f64();
  std::string string();
  /// A sequence<uint8>: its length, then a view of its bytes inside the payload (no copy).
  std::pair<const uint8_t*, size_t> byte_sequence();
  /// A uint32 sequence length, checked against what is left assuming `min_element_size` bytes each.
  uint32_t sequence_length(size_t min_element_size);
  [[noreturn]] void fail(const std::string& problem) const;  ///< InputError naming the payload and the offset
  /// The same, at an earlier offset (where the field that is wrong began).
  [[noreturn]] void fail_at(size_t offset, const std::string& problem) const;

 private:
  void align(size_t n);
  const uint8_t* need(size_t n);
  const uint8_t* data_;
  size_t size_;
  size_t pos_ = 0;
  bool big_ = false;
  std::string what_;
};

/// Writes one little-endian CDR payload, the encapsulation header first.
class CdrWriter {
 public:
  CdrWriter();
  void reserve(size_t n) { buf_.reserve(n); }
  void u8(uint8_t v);
  void i8(int8_t v);
  void u16(uint16_t v);
  void u32(uint32_t v);
  void i32(int32_t v);
  void u64(uint64_t v);
  void f32(float v);
  void f64(double v);
  void string(const std::string& s);
  void byte_sequence(const uint8_t* data, size_t size);
  std::vector<uint8_t>& buffer() { return buf_; }
  std::vector<uint8_t> take() { return std::move(buf_); }

 private:
  void align(size_t n);
  std::vector<uint8_t> buf_;
};

}  // namespace depthmask::ros
