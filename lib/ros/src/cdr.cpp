#include "depthmask/cdr.h"

#include <cstring>
#include <utility>

#include "depthmask/errors.h"

namespace depthmask::ros {
namespace {

constexpr size_t kHeader = 4;  // the encapsulation header: representation id (2 bytes), options (2)

template <typename T>
T swap_bytes(T v) {
  uint8_t b[sizeof(T)];
  std::memcpy(b, &v, sizeof(T));
  for (size_t i = 0; i < sizeof(T) / 2; ++i) {
    std::swap(b[i], b[sizeof(T) - 1 - i]);
  }
  std::memcpy(&v, b, sizeof(T));
  return v;
}

}  // namespace

CdrReader::CdrReader(const uint8_t* data, size_t size, std::string what)
    : data_(data), size_(size), what_(std::move(what)) {
  if (size_ < kHeader) {
    fail("it is shorter than CDR's 4-byte encapsulation header");
  }
  // 00 00: CDR_BE, 00 01: CDR_LE (PL_CDR variants 00 02 / 00 03 are not what ROS 2 messages use).
  if (data_[0] != 0 || data_[1] > 1) {
    fail("its encapsulation header is not plain CDR (00 00 or 00 01)");
  }
  big_ = data_[1] == 0;
  pos_ = kHeader;
}

void CdrReader::fail(const std::string& problem) const { fail_at(pos_, problem); }

void CdrReader::fail_at(size_t offset, const std::string& problem) const {
  throw InputError(what_ + ": " + problem + " (at byte " + std::to_string(offset) + " of " + std::to_string(size_) +
                   ")");
}

void CdrReader::align(size_t n) {
  const size_t rel = pos_ - kHeader;
  const size_t pad = (n - rel % n) % n;
  if (pad > size_ - pos_) {
    fail("it ends inside alignment padding");
  }
  pos_ += pad;
}

const uint8_t* CdrReader::need(size_t n) {
  if (n > size_ - pos_) {
    fail("a field of " + std::to_string(n) + " bytes runs past the end");
  }
  const uint8_t* p = data_ + pos_;
  pos_ += n;
  return p;
}

namespace {
template <typename T>
T read_as(const uint8_t* p, bool big) {
  T v;
  std::memcpy(&v, p, sizeof(T));
  return big ? swap_bytes(v) : v;  // this code runs on little-endian machines (x86, ARM)
}
}  // namespace

uint8_t CdrReader::u8() { return *need(1); }
int8_t CdrReader::i8() { return static_cast<int8_t>(*need(1)); }
uint16_t CdrReader::u16() {
  align(2);
  return read_as<uint16_t>(need(2), big_);
}
uint32_t CdrReader::u32() {
  align(4);
  return read_as<uint32_t>(need(4), big_);
}
int32_t CdrReader::i32() {
  align(4);
  return read_as<int32_t>(need(4), big_);
}
uint64_t CdrReader::u64() {
  align(8);
  return read_as<uint64_t>(need(8), big_);
}
float CdrReader::f32() {
  align(4);
  return read_as<float>(need(4), big_);
}
double CdrReader::f64() {
  align(8);
  return read_as<double>(need(8), big_);
}

std::string CdrReader::string() {
  const uint32_t n = u32();
  if (n == 0) {
    fail("a string's length is 0 (CDR strings count their NUL)");
  }
  if (n > remaining()) {
    fail("a string's length " + std::to_string(n) + " runs past the end");
  }
  const uint8_t* p = need(n);
  if (p[n - 1] != 0) {
    pos_ -= 1;
    fail("a string does not end with its NUL");
  }
  return std::string(reinterpret_cast<const char*>(p), n - 1);
}

uint32_t CdrReader::sequence_length(size_t min_element_size) {
  const uint32_t n = u32();
  if (min_element_size > 0 && n > remaining() / min_element_size) {
    fail("a sequence of " + std::to_string(n) + " elements runs past the end");
  }
  return n;
}

std::pair<const uint8_t*, size_t> CdrReader::byte_sequence() {
  const uint32_t n = sequence_length(1);
  return {need(n), n};
}

CdrWriter::CdrWriter() { buf_ = {0x00, 0x01, 0x00, 0x00}; }

void CdrWriter::align(size_t n) {
  const size_t rel = buf_.size() - kHeader;
  buf_.resize(buf_.size() + (n - rel % n) % n, 0);
}

namespace {
template <typename T>
void put(std::vector<uint8_t>& buf, T v) {
  const size_t at = buf.size();
  buf.resize(at + sizeof(T));
  std::memcpy(buf.data() + at, &v, sizeof(T));
}
}  // namespace

void CdrWriter::u8(uint8_t v) { buf_.push_back(v); }
void CdrWriter::i8(int8_t v) { buf_.push_back(static_cast<uint8_t>(v)); }
void CdrWriter::u16(uint16_t v) {
  align(2);
  put(buf_, v);
}
void CdrWriter::u32(uint32_t v) {
  align(4);
  put(buf_, v);
}
void CdrWriter::i32(int32_t v) {
  align(4);
  put(buf_, v);
}
void CdrWriter::u64(uint64_t v) {
  align(8);
  put(buf_, v);
}
void CdrWriter::f32(float v) {
  align(4);
  put(buf_, v);
}
void CdrWriter::f64(double v) {
  align(8);
  put(buf_, v);
}
void CdrWriter::string(const std::string& s) {
  u32(static_cast<uint32_t>(s.size() + 1));
  buf_.insert(buf_.end(), s.begin(), s.end());
  buf_.push_back(0);
}
void CdrWriter::byte_sequence(const uint8_t* data, size_t size) {
  u32(static_cast<uint32_t>(size));
  buf_.insert(buf_.end(), data, data + size);
}

}  // namespace depthmask::ros
