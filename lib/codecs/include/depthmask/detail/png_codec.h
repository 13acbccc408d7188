// A fast path for the PNGs depthmask reads and writes most: non-interlaced 8- and 16-bit greyscale
// (depth maps and label masks). Reading inflates all IDAT data in one libdeflate call and unfilters
// in place; writing filters and deflates with libdeflate. Whatever the reader does not accept goes to
// libpng (through OpenCV), so the pixels it gives are libpng's by construction.
#pragma once

#include <cstddef>
#include <cstdint>
#include <memory>
#include <optional>
#include <vector>

struct libdeflate_decompressor;

namespace depthmask::detail {

// What PngFastReader::inspect() found: the image's size and sample depth.
struct PngFastInfo {
  uint32_t width = 0, height = 0;
  int bit_depth = 0;  // 8 or 16
};

// Decodes the PNGs it accepts, frame after frame, into the caller's buffer. One per frame slot or
// decoding thread: not thread-safe. Owns a libdeflate decompressor and scratch buffers that only grow,
// so the steady state allocates nothing.
class PngFastReader {
 public:
  PngFastReader();
  ~PngFastReader();
  PngFastReader(const PngFastReader&) = delete;
  PngFastReader& operator=(const PngFastReader&) = delete;

  // Parses the chunk structure (every CRC, no inflating). nullopt = not accepted: the caller decodes
  // with libpng (OpenCV). Accepted: signature; IHDR first (greyscale, 8 or 16 bits, not interlaced,
  // width and height 1..1,000,000: libpng's default limits); consecutive IDAT chunks; IEND; ancillary
  // chunks anywhere but tRNS and sBIT (they change what OpenCV returns). Allocates nothing for the
  // image itself: the caller checks the size against its limits before decode().
  std::optional<PngFastInfo> inspect(const uint8_t* data, size_t size);

  // Right after inspect() accepted the same bytes: inflates and unfilters into dst (info.height rows
  // of width * bit_depth / 8 bytes, dst_stride bytes apart; 16-bit samples in host byte order).
  // false = not accepted after all (bad zlib stream, Adler-32 mismatch, short output, data after the
  // zlib stream, a window zlib would refuse, a bad filter byte); dst's contents are then unspecified
  // and the caller decodes with libpng.
  bool decode(const uint8_t* data, size_t size, const PngFastInfo& info, void* dst, size_t dst_stride);

 private:
  struct Span {
    size_t offset, size;
  };
  // A buffer that keeps its largest size; its bytes are not cleared between uses.
  class Scratch {
   public:
    uint8_t* get(size_t n);

   private:
    std::unique_ptr<uint8_t[]> bytes_;
    size_t capacity_ = 0;
  };
  struct FreeInflater {
    void operator()(libdeflate_decompressor* d) const;
  };

  std::unique_ptr<libdeflate_decompressor, FreeInflater> inflater_;
  std::vector<Span> idat_;  // the IDAT payloads inspect() found, in file order
  const uint8_t* inspected_data_ = nullptr;
  size_t inspected_size_ = 0;
  PngFastInfo inspected_{};
  Scratch joined_;    // several IDAT payloads, concatenated
  Scratch filtered_;  // the inflated rows, each a filter byte and the row's bytes; unfiltered in place
  Scratch zero_row_;  // the row "above" the first one
};

// A 16-bit greyscale PNG of rows x cols host-order samples (rows stride_bytes apart), filtered and
// deflated with libdeflate; readable by libpng with identical samples. Throws std::invalid_argument
// for an empty image or a stride shorter than a row.
std::vector<uint8_t> encode_png_grey16(const uint16_t* px, int rows, int cols, size_t stride_bytes);
// An 8-bit greyscale PNG of rows x cols pixels (filter None, libdeflate level 1): the reason output.
// Throws as encode_png_grey16.
std::vector<uint8_t> encode_png_grey8(const uint8_t* px, int rows, int cols, size_t stride_bytes);
// An 8-bit truecolour PNG of rows x cols BGR pixels (OpenCV's order; written as PNG's RGB), filter Sub,
// libdeflate level 1: the preview ({id}.preview.png; docs/PERFORMANCE.md compares it with
// cv::imencode). Throws as encode_png_grey16.
std::vector<uint8_t> encode_png_bgr8(const uint8_t* px, int rows, int cols, size_t stride_bytes);

}  // namespace depthmask::detail
