// RVL (A. D. Wilson, "Fast Lossless Depth Image Compression", ISS 2017), as image_transport's
// compressedDepth "rvl" stores it. The pixels, row by row, are alternating runs: a count of zeros, a
// count of non-zeros, then each non-zero as the zigzag code of its difference from the previous
// non-zero (the first from 0). Every number is a variable-length code of 3-bit groups, least
// significant first, each in a nibble whose high bit says that another follows. Nibbles fill 32-bit
// words from the most significant end; the words are stored little-endian (the byte order of the
// machines image_transport runs on), the last one padded with zero nibbles.
#include <cstring>

#include "depthmask/errors.h"
#include "depthmask/ros_image.h"

namespace depthmask::ros {
namespace {

class NibbleWriter {
 public:
  void put(uint32_t nibble) {
    word_ = (word_ << 4) | nibble;
    if (++count_ == 8) flush_word();
  }
  // A number as 3-bit groups, least significant first.
  void put_number(uint32_t value) {
    do {
      uint32_t nibble = value & 7u;
      value >>= 3;
      if (value != 0) nibble |= 8u;
      put(nibble);
    } while (value != 0);
  }
  std::vector<uint8_t> finish() {
    if (count_ != 0) {
      word_ <<= 4 * (8 - count_);
      flush_word();
    }
    return std::move(out_);
  }

 private:
  void flush_word() {
    for (int i = 0; i < 4; ++i) out_.push_back(static_cast<uint8_t>(word_ >> (8 * i)));
    word_ = 0;
    count_ = 0;
  }
  std::vector<uint8_t> out_;
  uint32_t word_ = 0;
  int count_ = 0;
};

class NibbleReader {
 public:
  NibbleReader(const uint8_t* data, size_t size, const std::string& what) : data_(data), size_(size), what_(what) {}
  uint32_t get() {
    if (left_ == 0) {
      if (size_ - at_ < 4) {
        throw InputError(what_ + ": the RVL stream ends before its pixels do (at byte " + std::to_string(at_) + " of " +
                         std::to_string(size_) + " of the RVL words)");
      }
      uint32_t w = 0;
      for (int i = 0; i < 4; ++i) w |= uint32_t{data_[at_ + i]} << (8 * i);
      word_ = w;
      at_ += 4;
      left_ = 8;
    }
    const uint32_t nibble = word_ >> 28;
    word_ <<= 4;
    --left_;
    return nibble;
  }
  // A number of at most 11 groups (33 bits: every count and code of a 2^31-pixel image fits).
  uint64_t get_number() {
    uint64_t value = 0;
    for (int shift = 0;; shift += 3) {
      if (shift > 30) fail("a variable-length number longer than 11 nibbles");
      const uint32_t nibble = get();
      value |= uint64_t{nibble & 7u} << shift;
      if ((nibble & 8u) == 0) return value;
    }
  }
  [[noreturn]] void fail(const std::string& problem) const {
    throw InputError(what_ + ": the RVL stream is corrupt: " + problem + " (in the word ending at byte " +
                     std::to_string(at_) + " of " + std::to_string(size_) + ")");
  }

 private:
  const uint8_t* data_;
  size_t size_;
  size_t at_ = 0;
  uint32_t word_ = 0;
  int left_ = 0;
  const std::string& what_;
};

}  // namespace

std::vector<uint8_t> rvl_encode(const cv::Mat& depth16) {
  DM_EXPECT(depth16.type() == CV_16UC1, InputError,
            "RVL encodes 16-bit depth (CV_16UC1), not an image of OpenCV type " << depth16.type());
  NibbleWriter out;
  uint16_t previous = 0;
  uint32_t zeros = 0;
  std::vector<uint16_t> run;  // the non-zeros of the current run
  const auto flush = [&] {
    out.put_number(zeros);
    out.put_number(static_cast<uint32_t>(run.size()));
    for (uint16_t v : run) {
      const int32_t delta = int32_t{v} - int32_t{previous};
      out.put_number((static_cast<uint32_t>(delta) << 1) ^ static_cast<uint32_t>(delta >> 31));  // zigzag
      previous = v;
    }
    zeros = 0;
    run.clear();
  };
  for (int y = 0; y < depth16.rows; ++y) {
    const uint16_t* row = depth16.ptr<uint16_t>(y);
    for (int x = 0; x < depth16.cols; ++x) {
      if (row[x] == 0) {
        if (!run.empty()) flush();  // a zero after non-zeros starts the next pair of runs
        ++zeros;
      } else {
        run.push_back(row[x]);
      }
    }
  }
  if (zeros != 0 || !run.empty()) flush();
  return out.finish();
}

cv::Mat rvl_decode(const uint8_t* data, size_t size, int width, int height, const std::string& what) {
  DM_EXPECT(width > 0 && height > 0 && int64_t{width} * height <= (int64_t{1} << 31), InputError,
            what << ": an RVL image of " << width << "x" << height << " pixels is not a size it can have");
  cv::Mat out(height, width, CV_16UC1);
  uint16_t* px = out.ptr<uint16_t>(0);  // a fresh Mat is continuous
  const uint64_t total = uint64_t(width) * uint64_t(height);
  uint64_t done = 0;
  uint16_t previous = 0;
  NibbleReader in(data, size, what);
  while (done < total) {
    const uint64_t zeros = in.get_number();
    if (zeros > total - done) in.fail("a run of " + std::to_string(zeros) + " zeros runs past the image's end");
    std::memset(px + done, 0, zeros * sizeof(uint16_t));
    done += zeros;
    if (done == total) break;  // image_transport writes a count of 0 non-zeros here; it is not needed
    const uint64_t nonzeros = in.get_number();
    if (nonzeros > total - done) {
      in.fail("a run of " + std::to_string(nonzeros) + " values runs past the image's end");
    }
    for (uint64_t i = 0; i < nonzeros; ++i) {
      const auto code = static_cast<uint32_t>(in.get_number());
      const uint32_t delta = (code >> 1) ^ (0u - (code & 1u));  // zigzag back to a two's complement
      previous = static_cast<uint16_t>(previous + delta);
      px[done++] = previous;
    }
  }
  return out;
}

}  // namespace depthmask::ros
