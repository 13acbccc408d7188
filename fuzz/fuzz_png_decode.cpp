// The PNG fast path (detail::PngFastReader), differentially: whenever it accepts and decodes a file,
// libpng (cv::imdecode) must decode the same bytes to the same type, size and pixels; otherwise the
// target aborts. ASan/UBSan catch any read outside the input or the buffers.
// The first byte of an input is its mode, the rest is the file. Mode bit 0: rewrite every chunk's CRC
// before decoding, so mutations inside chunks reach the inflater and the unfiltering instead of
// stopping at a CRC mismatch; bit 1: also rewrite the zlib stream's Adler-32 to what its deflate data
// inflates to (libdeflate's reading), so changed pixels and filter bytes reach the unfiltering.
#include <libdeflate.h>
#include <zlib.h>

#include <opencv2/core.hpp>
#include <opencv2/imgcodecs.hpp>

#include <cstddef>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <vector>

#include "depthmask/detail/png_codec.h"

namespace {

using Bytes = std::vector<uint8_t>;

uint32_t be32(const uint8_t* p) {
  return (uint32_t{p[0]} << 24) | (uint32_t{p[1]} << 16) | (uint32_t{p[2]} << 8) | uint32_t{p[3]};
}
void put_be32(uint8_t* p, uint32_t v) {
  for (int i = 0; i < 4; ++i) p[i] = static_cast<uint8_t>(v >> (24 - 8 * i));
}

struct ChunkAt {
  size_t at;
  uint32_t length;
};

std::vector<ChunkAt> chunks_of(const Bytes& png) {
  std::vector<ChunkAt> out;
  for (size_t at = 8; png.size() >= 12 && at <= png.size() - 12;) {
    const uint32_t length = be32(png.data() + at);
    if (length > png.size() - 12 - at) break;
    out.push_back({at, length});
    if (std::memcmp(png.data() + at + 4, "IEND", 4) == 0) break;
    at += 12 + size_t{length};
  }
  return out;
}

void fix_crcs(Bytes& png) {
  for (const ChunkAt& c : chunks_of(png))
    put_be32(png.data() + c.at + 8 + c.length,
             static_cast<uint32_t>(crc32(0, png.data() + c.at + 4, static_cast<uInt>(c.length + 4))));
}

// The IDAT payloads joined, as the reader sees them; the Adler-32 after the deflate data is rewritten
// in place (in whichever chunk holds each of its bytes).
void fix_adler(Bytes& png) {
  std::vector<size_t> where;  // file offset of each zlib byte
  for (const ChunkAt& c : chunks_of(png))
    if (std::memcmp(png.data() + c.at + 4, "IDAT", 4) == 0)
      for (size_t i = 0; i < c.length; ++i) where.push_back(c.at + 8 + i);
  if (where.size() < 6) return;
  Bytes z(where.size());
  for (size_t i = 0; i < z.size(); ++i) z[i] = png[where[i]];
  static libdeflate_decompressor* d = libdeflate_alloc_decompressor();
  Bytes out(size_t{1} << 22);
  size_t in_used = 0, out_size = 0;
  if (libdeflate_deflate_decompress_ex(d, z.data() + 2, z.size() - 2, out.data(), out.size(), &in_used, &out_size) !=
      LIBDEFLATE_SUCCESS)
    return;
  const size_t trailer = 2 + in_used;
  if (trailer + 4 > z.size()) return;
  uint8_t adler[4];
  put_be32(adler, libdeflate_adler32(1, out.data(), out_size));
  for (size_t i = 0; i < 4; ++i) png[where[trailer + i]] = adler[i];
}

[[noreturn]] void mismatch(const char* what) {
  std::fprintf(stderr, "fuzz_png_decode: the fast path accepted a file, but %s\n", what);
  std::abort();
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  static depthmask::detail::PngFastReader reader;
  if (size < 2) return 0;
  const uint8_t mode = data[0];
  Bytes png(data + 1, data + size);
  if (mode & 2) fix_adler(png);
  if (mode & 3) fix_crcs(png);

  const std::optional<depthmask::detail::PngFastInfo> info = reader.inspect(png.data(), png.size());
  if (!info) return 0;
  // The loader checks sizes before decoding; this bound keeps within libFuzzer's memory limit and
  // OpenCV's (OPENCV_IO_MAX_IMAGE_PIXELS, scripts/fuzz.sh).
  if (uint64_t{info->width} * info->height > (uint64_t{1} << 22)) return 0;
  const int type = info->bit_depth == 16 ? CV_16UC1 : CV_8UC1;
  cv::Mat fast(static_cast<int>(info->height), static_cast<int>(info->width), type);
  if (!reader.decode(png.data(), png.size(), *info, fast.data, fast.step)) return 0;

  cv::Mat ref;
  try {
    ref = cv::imdecode(cv::_InputArray(png.data(), static_cast<int>(png.size())), cv::IMREAD_UNCHANGED);
  } catch (const cv::Exception&) {
    mismatch("cv::imdecode threw");
  }
  if (ref.empty()) mismatch("libpng refuses it");
  if (ref.type() != fast.type() || ref.size() != fast.size()) mismatch("libpng gives another type or size");
  for (int y = 0; y < ref.rows; ++y)
    if (std::memcmp(ref.ptr(y), fast.ptr(y), static_cast<size_t>(ref.cols) * ref.elemSize()) != 0)
      mismatch("libpng gives other pixels");
  return 0;
}
