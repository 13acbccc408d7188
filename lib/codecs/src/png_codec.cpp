#include "depthmask/detail/png_codec.h"

#include <libdeflate.h>

#include <algorithm>
#include <cstdlib>
#include <cstring>
#include <limits>
#include <stdexcept>
#include <string>

#if defined(__SSE2__)
#include <emmintrin.h>
#endif

#include "depthmask/errors.h"

namespace depthmask::detail {

namespace {

constexpr uint8_t kSignature[8] = {0x89, 'P', 'N', 'G', '\r', '\n', 0x1a, '\n'};
constexpr uint32_t kMaxChunkLength = 0x7fffffffu;  // PNG_UINT_31_MAX
// libpng's defaults (pnglibconf.h), which OpenCV leaves as they are: larger images and chunks are errors there.
constexpr uint32_t kLibpngMaxDimension = 1000000;  // PNG_USER_WIDTH_MAX, PNG_USER_HEIGHT_MAX
constexpr size_t kLibpngMaxChunk = 8000000;        // PNG_USER_CHUNK_MALLOC_MAX
constexpr bool kLittleEndian = __BYTE_ORDER__ == __ORDER_LITTLE_ENDIAN__;

uint32_t be32(const uint8_t* p) {
  return (uint32_t{p[0]} << 24) | (uint32_t{p[1]} << 16) | (uint32_t{p[2]} << 8) | uint32_t{p[3]};
}

void put_be32(uint8_t* p, uint32_t v) {
  p[0] = static_cast<uint8_t>(v >> 24);
  p[1] = static_cast<uint8_t>(v >> 16);
  p[2] = static_cast<uint8_t>(v >> 8);
  p[3] = static_cast<uint8_t>(v);
}

bool is_type(const uint8_t* t, const char* name) { return std::memcmp(t, name, 4) == 0; }
bool is_letter(uint8_t c) { return (c >= 'A' && c <= 'Z') || (c >= 'a' && c <= 'z'); }

// The largest IDAT chunk libpng reads for this image (png_check_chunk_length in pngrutil.c): the
// uncompressed size plus zlib's worst-case overhead, and never less than its general chunk limit.
size_t libpng_idat_limit(uint32_t width, uint32_t height, int bit_depth) {
  size_t row_factor = size_t{width} * (bit_depth > 8 ? 2 : 1) + 1;
  size_t limit = height > 0xffffffffu / row_factor ? kMaxChunkLength : height * row_factor;
  row_factor = std::min<size_t>(row_factor, 32566);
  limit += 6 + 5 * (limit / row_factor + 1);
  return std::max(kLibpngMaxChunk, std::min<size_t>(limit, kMaxChunkLength));
}

// --- Unfiltering (PNG specification, section 9), in place over one row; prev is the row above,
// already unfiltered (zeros for the first row). ---

void unfilter_up(uint8_t* __restrict cur, const uint8_t* __restrict prev, size_t n) {
  for (size_t i = 0; i < n; ++i) cur[i] = static_cast<uint8_t>(cur[i] + prev[i]);
}

// Sub is a running sum per byte lane; SSE2 sums 16 bytes in log2(16 / bpp) shifted adds.
template <int Bpp>
void unfilter_sub(uint8_t* cur, size_t n) {
  size_t i = Bpp;
#if defined(__SSE2__)
  if (n >= 16 + Bpp) {
    __m128i carry = _mm_setzero_si128();  // lanes 0..Bpp-1: the bytes left of the block
    for (i = 0; i + 16 <= n; i += 16) {
      __m128i x = _mm_loadu_si128(reinterpret_cast<const __m128i*>(cur + i));
      x = _mm_add_epi8(x, carry);
      if (Bpp == 1) x = _mm_add_epi8(x, _mm_slli_si128(x, 1));
      x = _mm_add_epi8(x, _mm_slli_si128(x, 2));
      x = _mm_add_epi8(x, _mm_slli_si128(x, 4));
      x = _mm_add_epi8(x, _mm_slli_si128(x, 8));
      _mm_storeu_si128(reinterpret_cast<__m128i*>(cur + i), x);
      carry = _mm_srli_si128(x, 16 - Bpp);
    }
  }
#endif
  for (; i < n; ++i) cur[i] = static_cast<uint8_t>(cur[i] + cur[i - Bpp]);
}

template <int Bpp>
void unfilter_average(uint8_t* __restrict cur, const uint8_t* __restrict prev, size_t n) {
  for (size_t i = 0; i < Bpp; ++i) cur[i] = static_cast<uint8_t>(cur[i] + (prev[i] >> 1));
  for (size_t i = Bpp; i < n; ++i) cur[i] = static_cast<uint8_t>(cur[i] + ((cur[i - Bpp] + prev[i]) >> 1));
}

// Paeth without branches: real depth maps make the predictor's choice unpredictable, and a
// mispredicted branch per byte cost more than the arithmetic.
inline int paeth_predictor(int a, int b, int c) {
  const int pa = std::abs(b - c), pb = std::abs(a - c), pc = std::abs(a + b - 2 * c);
  const int not_a = -static_cast<int>((pa > pb) | (pa > pc));  // all ones when the predictor is b or c
  const int is_c = -static_cast<int>(pb > pc);
  return (a & ~not_a) | (((b & ~is_c) | (c & is_c)) & not_a);
}

// One Paeth row. The left byte `a` and the upper-left `c` stay in registers: only `a` is on the serial
// path, and reloading it from the row just stored would add a store-forwarding delay to every step.
template <int Bpp>
void unfilter_paeth(uint8_t* __restrict cur, const uint8_t* __restrict prev, size_t n) {
  int a[Bpp], c[Bpp];
  for (int k = 0; k < Bpp; ++k) {  // the first pixel: a = c = 0, so the predictor is b
    a[k] = (cur[k] + prev[k]) & 0xff;
    cur[k] = static_cast<uint8_t>(a[k]);
    c[k] = prev[k];
  }
  for (size_t i = Bpp; i + Bpp <= n; i += Bpp)
    for (int k = 0; k < Bpp; ++k) {
      const int b = prev[i + k];
      a[k] = (cur[i + k] + paeth_predictor(a[k], b, c[k])) & 0xff;
      cur[i + k] = static_cast<uint8_t>(a[k]);
      c[k] = b;
    }
}

#if defined(__SSE2__)
// Four consecutive 16-bit Paeth rows at once, as a wavefront: row r works on pixel t - r at step t, so
// the pixel above it (row r - 1, pixel t - r) came out of the step before. The four rows' two byte
// lanes fill the eight 16-bit lanes of one register: eight serial chains for the price of one, where
// a single row has two. Rows not yet started see zeros, which is what Paeth's first pixel needs.
void unfilter_paeth16_x4(uint8_t* const cur[4], const uint8_t* prev, size_t width) {
  const __m128i low_byte = _mm_set1_epi16(0xff);
  auto load_pixel = [](const uint8_t* p) {
    uint16_t v;
    std::memcpy(&v, p, 2);
    return static_cast<int>((v & 0xff) | ((v & 0xff00) << 8));  // byte 0 in bits 0-7, byte 1 in 16-23
  };
  __m128i a = _mm_setzero_si128();  // each row's latest pixel
  __m128i b = _mm_cvtsi32_si128(load_pixel(prev));
  __m128i c = _mm_setzero_si128();
  const size_t steps = width + 3;
  for (size_t t = 0; t < steps; ++t) {
    int raw[4];
    for (int r = 0; r < 4; ++r) raw[r] = t >= size_t(r) && t - r < width ? load_pixel(cur[r] + 2 * (t - r)) : 0;
    const __m128i x = _mm_set_epi32(raw[3], raw[2], raw[1], raw[0]);
    const __m128i bc_diff = _mm_sub_epi16(b, c), ac_diff = _mm_sub_epi16(a, c);
    const __m128i both = _mm_add_epi16(bc_diff, ac_diff);
    const __m128i pa = _mm_max_epi16(bc_diff, _mm_sub_epi16(_mm_setzero_si128(), bc_diff));
    const __m128i pb = _mm_max_epi16(ac_diff, _mm_sub_epi16(_mm_setzero_si128(), ac_diff));
    const __m128i pc = _mm_max_epi16(both, _mm_sub_epi16(_mm_setzero_si128(), both));
    const __m128i not_a = _mm_or_si128(_mm_cmpgt_epi16(pa, pb), _mm_cmpgt_epi16(pa, pc));
    const __m128i is_c = _mm_cmpgt_epi16(pb, pc);
    const __m128i b_or_c = _mm_or_si128(_mm_andnot_si128(is_c, b), _mm_and_si128(is_c, c));
    const __m128i pred = _mm_or_si128(_mm_andnot_si128(not_a, a), _mm_and_si128(not_a, b_or_c));
    a = _mm_and_si128(_mm_add_epi16(x, pred), low_byte);
    const auto packed = static_cast<uint64_t>(_mm_cvtsi128_si64(_mm_packus_epi16(a, a)));
    for (int r = 0; r < 4; ++r)
      if (t >= size_t(r) && t - r < width) {
        const auto v = static_cast<uint16_t>(packed >> (16 * r));
        std::memcpy(cur[r] + 2 * (t - r), &v, 2);
      }
    c = b;
    b = _mm_slli_si128(a, 4);  // row r's pixel above is row r - 1's latest
    if (t + 1 < width) b = _mm_or_si128(b, _mm_cvtsi32_si128(load_pixel(prev + 2 * (t + 1))));
  }
}
#endif

template <int Bpp>
bool unfilter_row(uint8_t filter, uint8_t* cur, const uint8_t* prev, size_t n) {
  switch (filter) {
    case 0:
      return true;
    case 1:
      unfilter_sub<Bpp>(cur, n);
      return true;
    case 2:
      unfilter_up(cur, prev, n);
      return true;
    case 3:
      unfilter_average<Bpp>(cur, prev, n);
      return true;
    case 4:
      unfilter_paeth<Bpp>(cur, prev, n);
      return true;
    default:
      return false;  // libpng: "bad adaptive filter value"
  }
}

// Big-endian samples (the file's order) to host order.
void copy_samples16(uint8_t* __restrict dst, const uint8_t* __restrict src, size_t bytes) {
  if (!kLittleEndian) {
    std::memcpy(dst, src, bytes);
    return;
  }
  for (size_t i = 0; i + 1 < bytes; i += 2) {
    uint16_t v;
    std::memcpy(&v, src + i, 2);
    v = static_cast<uint16_t>((v << 8) | (v >> 8));
    std::memcpy(dst + i, &v, 2);
  }
}

template <int Bpp>
bool unfilter_rows(uint8_t* filtered, const uint8_t* zero_row, const PngFastInfo& info, uint8_t* dst,
                   size_t dst_stride) {
  const size_t row_bytes = size_t{info.width} * Bpp;
  const uint8_t* prev = zero_row;
  auto emit = [&](uint32_t y, const uint8_t* cur) {
    uint8_t* out = dst + y * dst_stride;
    if (Bpp == 1)
      std::memcpy(out, cur, row_bytes);
    else
      copy_samples16(out, cur, row_bytes);
  };
  for (uint32_t y = 0; y < info.height; ++y) {
    uint8_t* row = filtered + y * (row_bytes + 1);
    uint8_t* cur = row + 1;
#if defined(__SSE2__)
    if (Bpp == 2 && y + 4 <= info.height && row[0] == 4 && row[row_bytes + 1] == 4 && row[2 * (row_bytes + 1)] == 4 &&
        row[3 * (row_bytes + 1)] == 4) {
      uint8_t* const rows4[4] = {cur, cur + (row_bytes + 1), cur + 2 * (row_bytes + 1), cur + 3 * (row_bytes + 1)};
      unfilter_paeth16_x4(rows4, prev, info.width);
      for (int r = 0; r < 4; ++r) emit(y + r, rows4[r]);
      prev = rows4[3];
      y += 3;
      continue;
    }
#endif
    if (!unfilter_row<Bpp>(row[0], cur, prev, row_bytes)) return false;
    emit(y, cur);
    prev = cur;
  }
  return true;
}

}  // namespace

uint8_t* PngFastReader::Scratch::get(size_t n) {
  if (n > capacity_) {
    bytes_ = std::make_unique<uint8_t[]>(n);  // new bytes are zero (zero_row_ relies on it)
    capacity_ = n;
  }
  return bytes_.get();
}

void PngFastReader::FreeInflater::operator()(libdeflate_decompressor* d) const { libdeflate_free_decompressor(d); }

PngFastReader::PngFastReader() : inflater_(libdeflate_alloc_decompressor()) {
  DM_EXPECT(inflater_ != nullptr, ResourceError, "cannot allocate a libdeflate decompressor");
}

PngFastReader::~PngFastReader() = default;

std::optional<PngFastInfo> PngFastReader::inspect(const uint8_t* data, size_t size) {
  inspected_data_ = nullptr;
  idat_.clear();
  if (data == nullptr || size < sizeof kSignature || std::memcmp(data, kSignature, sizeof kSignature) != 0)
    return std::nullopt;
  enum class Stage { BeforeIdat, InIdat, AfterIdat } stage = Stage::BeforeIdat;
  PngFastInfo info;
  size_t idat_limit = 0;
  bool have_ihdr = false;
  for (size_t pos = sizeof kSignature;;) {
    if (size - pos < 12) return std::nullopt;  // truncated: no IEND
    const uint32_t length = be32(data + pos);
    const uint8_t* type = data + pos + 4;
    if (length > kMaxChunkLength || size - pos - 12 < length) return std::nullopt;
    // libpng refuses chunk names that are not four letters; a lowercase third letter (the reserved
    // bit) is not PNG 1.2 either.
    if (!is_letter(type[0]) || !is_letter(type[1]) || !is_letter(type[2]) || !is_letter(type[3]) || type[2] >= 'a')
      return std::nullopt;
    const uint8_t* body = type + 4;
    if (static_cast<uint32_t>(libdeflate_crc32(0, type, size_t{length} + 4)) != be32(body + length))
      return std::nullopt;
    pos += size_t{length} + 12;
    if (!have_ihdr) {
      if (!is_type(type, "IHDR") || length != 13) return std::nullopt;
      info.width = be32(body);
      info.height = be32(body + 4);
      info.bit_depth = body[8];
      const uint8_t color_type = body[9], compression = body[10], filter = body[11], interlace = body[12];
      if (info.width == 0 || info.height == 0 || info.width > kLibpngMaxDimension ||
          info.height > kLibpngMaxDimension || (info.bit_depth != 8 && info.bit_depth != 16) || color_type != 0 ||
          compression != 0 || filter != 0 || interlace != 0)
        return std::nullopt;
      idat_limit = libpng_idat_limit(info.width, info.height, info.bit_depth);
      have_ihdr = true;
      continue;
    }
    if (is_type(type, "IDAT")) {
      if (stage == Stage::AfterIdat || length > idat_limit) return std::nullopt;
      stage = Stage::InIdat;
      if (length > 0) idat_.push_back({static_cast<size_t>(body - data), length});
      continue;
    }
    if (is_type(type, "IEND")) {
      if (length != 0 || stage == Stage::BeforeIdat) return std::nullopt;
      break;  // libpng reads nothing after IEND
    }
    // Critical chunks (IHDR again, PLTE, unknown ones) and the two that change OpenCV's output go to libpng.
    if (type[0] < 'a' || is_type(type, "tRNS") || is_type(type, "sBIT") || length > kLibpngMaxChunk)
      return std::nullopt;
    if (stage == Stage::InIdat) stage = Stage::AfterIdat;
  }
  inspected_data_ = data;
  inspected_size_ = size;
  inspected_ = info;
  return info;
}

bool PngFastReader::decode(const uint8_t* data, size_t size, const PngFastInfo& info, void* dst, size_t dst_stride) {
  auto same = [](const PngFastInfo& a, const PngFastInfo& b) {
    return a.width == b.width && a.height == b.height && a.bit_depth == b.bit_depth;
  };
  if (data == nullptr || data != inspected_data_ || size != inspected_size_ || !same(info, inspected_)) {
    const std::optional<PngFastInfo> again = inspect(data, size);
    if (!again || !same(*again, info)) return false;
  }
  inspected_data_ = nullptr;  // decode once per inspect
  const int bpp = info.bit_depth / 8;
  const size_t row_bytes = size_t{info.width} * bpp;
  if (dst == nullptr || dst_stride < row_bytes) return false;
  const size_t filtered_size = size_t{info.height} * (row_bytes + 1);

  // The zlib stream: straight from the file when it is one IDAT, else the IDATs joined.
  const uint8_t* z = nullptr;
  size_t z_size = 0;
  if (idat_.size() == 1) {
    z = data + idat_[0].offset;
    z_size = idat_[0].size;
  } else {
    for (const Span& s : idat_) z_size += s.size;
    uint8_t* joined = joined_.get(z_size);
    size_t at = 0;
    for (const Span& s : idat_) {
      std::memcpy(joined + at, data + s.offset, s.size);
      at += s.size;
    }
    z = joined;
  }
  // zlib's header: deflate, no preset dictionary, a window zlib accepts (libpng: CINFO <= 7). zlib
  // keeps only the header's window, so a smaller one must hold the whole output for zlib to reach
  // every distance libdeflate allows.
  if (z_size < 2) return false;
  const unsigned cmf = z[0], flg = z[1];
  if ((cmf & 0x0f) != 8 || (cmf >> 4) > 7 || (cmf * 256 + flg) % 31 != 0 || (flg & 0x20) != 0) return false;
  const size_t window = size_t{1} << ((cmf >> 4) + 8);
  if (window < 32768 && filtered_size > window) return false;

  uint8_t* filtered = filtered_.get(filtered_size);
  size_t in_used = 0, out_size = 0;
  const libdeflate_result r =
      libdeflate_zlib_decompress_ex(inflater_.get(), z, z_size, filtered, filtered_size, &in_used, &out_size);
  if (r != LIBDEFLATE_SUCCESS || in_used != z_size || out_size != filtered_size) return false;

  const uint8_t* zero_row = zero_row_.get(row_bytes);
  auto* out = static_cast<uint8_t*>(dst);
  return bpp == 1 ? unfilter_rows<1>(filtered, zero_row, info, out, dst_stride)
                  : unfilter_rows<2>(filtered, zero_row, info, out, dst_stride);
}

// --- Encoding ---

namespace {

// One compressor per thread and level, and the filtered rows' buffer, kept between calls: a
// compressor costs an allocation of its tables, a fresh buffer page faults on every first touch.
struct EncodeScratch {
  struct FreeCompressor {
    void operator()(libdeflate_compressor* c) const { libdeflate_free_compressor(c); }
  };
  std::unique_ptr<libdeflate_compressor, FreeCompressor> compressor;
  int level = -1;
  std::vector<uint8_t> filtered;
  std::vector<uint8_t> deflated;
};

libdeflate_compressor* compressor_of(EncodeScratch& s, int level) {
  if (s.level != level || !s.compressor) {
    s.compressor.reset(libdeflate_alloc_compressor(level));
    DM_EXPECT(s.compressor != nullptr, ResourceError, "cannot allocate a libdeflate compressor");
    s.level = level;
  }
  return s.compressor.get();
}

// The Up filter over host-order samples: each byte of the big-endian sample minus the same byte above.
void filter_up16(uint8_t* __restrict out, const uint16_t* __restrict cur, const uint16_t* __restrict prev, size_t n) {
  for (size_t i = 0; i < n; ++i) {
    out[2 * i] = static_cast<uint8_t>((cur[i] >> 8) - (prev[i] >> 8));
    out[2 * i + 1] = static_cast<uint8_t>(cur[i] - prev[i]);
  }
}

void filter_none16(uint8_t* __restrict out, const uint16_t* __restrict cur, size_t n) {
  for (size_t i = 0; i < n; ++i) {
    out[2 * i] = static_cast<uint8_t>(cur[i] >> 8);
    out[2 * i + 1] = static_cast<uint8_t>(cur[i]);
  }
}

void append_chunk(std::vector<uint8_t>& png, const char* type, const uint8_t* body, size_t length) {
  uint8_t head[8];
  put_be32(head, static_cast<uint32_t>(length));
  std::memcpy(head + 4, type, 4);
  png.insert(png.end(), head, head + 8);
  if (length > 0) png.insert(png.end(), body, body + length);
  uint8_t crc[4];
  uint32_t c = static_cast<uint32_t>(libdeflate_crc32(0, type, 4));
  if (length > 0) c = static_cast<uint32_t>(libdeflate_crc32(c, body, length));  // a null buffer resets the CRC
  put_be32(crc, c);
  png.insert(png.end(), crc, crc + 4);
}

constexpr int kEncodeLevel = 1;
// IDAT chunks of at most this size: libpng reads chunks up to PNG_USER_CHUNK_MALLOC_MAX whatever the image.
constexpr size_t kMaxIdat = kLibpngMaxChunk;

}  // namespace

namespace {

// PNG colour types (IHDR): greyscale, truecolour (RGB).
constexpr uint8_t kGrey = 0, kRgb = 2;

// Deflates scratch.filtered (rows of a filter byte + the row's bytes) and wraps it in IHDR, IDATs and
// IEND.
std::vector<uint8_t> finish_png(EncodeScratch& scratch, size_t filtered_size, int rows, int cols, uint8_t bit_depth,
                                uint8_t color_type) {
  const uint8_t* f = scratch.filtered.data();
  libdeflate_compressor* c = compressor_of(scratch, kEncodeLevel);
  const size_t bound = libdeflate_zlib_compress_bound(c, filtered_size);
  if (scratch.deflated.size() < bound) scratch.deflated.resize(bound);
  const size_t z_size = libdeflate_zlib_compress(c, f, filtered_size, scratch.deflated.data(), bound);
  DM_EXPECT(z_size > 0, OutputError, "libdeflate could not compress a " << cols << "x" << rows << " PNG");

  const size_t idat_chunks = (z_size + kMaxIdat - 1) / kMaxIdat;
  std::vector<uint8_t> png;
  png.reserve(8 + 25 + 12 * idat_chunks + z_size + 12);
  png.assign(kSignature, kSignature + 8);
  uint8_t ihdr[13];
  put_be32(ihdr, static_cast<uint32_t>(cols));
  put_be32(ihdr + 4, static_cast<uint32_t>(rows));
  ihdr[8] = bit_depth;
  ihdr[9] = color_type;
  ihdr[10] = ihdr[11] = ihdr[12] = 0;  // deflate, adaptive filtering, not interlaced
  append_chunk(png, "IHDR", ihdr, sizeof ihdr);
  for (size_t at = 0; at < z_size; at += kMaxIdat)
    append_chunk(png, "IDAT", scratch.deflated.data() + at, std::min(kMaxIdat, z_size - at));
  append_chunk(png, "IEND", nullptr, 0);
  return png;
}

// What every encoder checks of its image (rows of row_bytes, stride_bytes apart), and the filtered
// rows' buffer sized for it: a filter byte and row_bytes a row.
uint8_t* start_encode(EncodeScratch& scratch, const char* fn, const void* px, int rows, int cols, size_t row_bytes,
                      size_t stride_bytes, size_t sample_bytes) {
  DM_EXPECT(px != nullptr && rows > 0 && cols > 0, std::invalid_argument,
            fn << ": expected a non-empty image, got " << cols << "x" << rows);
  DM_EXPECT(stride_bytes >= row_bytes && stride_bytes % sample_bytes == 0, std::invalid_argument,
            fn << ": a stride of " << stride_bytes << " bytes for rows of " << row_bytes << " bytes");
  const size_t filtered_size = static_cast<size_t>(rows) * (row_bytes + 1);
  if (scratch.filtered.size() < filtered_size) scratch.filtered.resize(filtered_size);
  return scratch.filtered.data();
}

}  // namespace

std::vector<uint8_t> encode_png_grey16(const uint16_t* px, int rows, int cols, size_t stride_bytes) {
  thread_local EncodeScratch scratch;
  const size_t row_bytes = 2 * static_cast<size_t>(cols);
  uint8_t* f = start_encode(scratch, "encode_png_grey16", px, rows, cols, row_bytes, stride_bytes, 2);
  const size_t filtered_size = static_cast<size_t>(rows) * (row_bytes + 1);
  const auto* base = reinterpret_cast<const uint8_t*>(px);
  for (int y = 0; y < rows; ++y) {
    uint8_t* row = f + static_cast<size_t>(y) * (row_bytes + 1);
    const auto* cur = reinterpret_cast<const uint16_t*>(base + static_cast<size_t>(y) * stride_bytes);
    if (y == 0) {
      row[0] = 0;
      filter_none16(row + 1, cur, static_cast<size_t>(cols));
    } else {
      row[0] = 2;
      const auto* prev = reinterpret_cast<const uint16_t*>(base + static_cast<size_t>(y - 1) * stride_bytes);
      filter_up16(row + 1, cur, prev, static_cast<size_t>(cols));
    }
  }

  return finish_png(scratch, filtered_size, rows, cols, 16, kGrey);
}

std::vector<uint8_t> encode_png_grey8(const uint8_t* px, int rows, int cols, size_t stride_bytes) {
  thread_local EncodeScratch scratch;
  const size_t row_bytes = static_cast<size_t>(cols);
  uint8_t* f = start_encode(scratch, "encode_png_grey8", px, rows, cols, row_bytes, stride_bytes, 1);
  const size_t filtered_size = static_cast<size_t>(rows) * (row_bytes + 1);
  // Filter None: the planes this writes (the reason codes) are long runs, which deflate takes as they are.
  for (int y = 0; y < rows; ++y) {
    uint8_t* row = f + static_cast<size_t>(y) * (row_bytes + 1);
    row[0] = 0;
    std::memcpy(row + 1, px + static_cast<size_t>(y) * stride_bytes, row_bytes);
  }
  return finish_png(scratch, filtered_size, rows, cols, 8, kGrey);
}

std::vector<uint8_t> encode_png_bgr8(const uint8_t* px, int rows, int cols, size_t stride_bytes) {
  thread_local EncodeScratch scratch;
  const size_t row_bytes = 3 * static_cast<size_t>(cols);
  uint8_t* f = start_encode(scratch, "encode_png_bgr8", px, rows, cols, row_bytes, stride_bytes, 1);
  const size_t filtered_size = static_cast<size_t>(rows) * (row_bytes + 1);
  // BGR to PNG's RGB, and the Sub filter (each byte minus the same channel's to its left): on the
  // preview of a real capture it made the smallest files at libdeflate's fastest level, no slower
  // (docs/PERFORMANCE.md, "The preview PNG").
  for (int y = 0; y < rows; ++y) {
    uint8_t* __restrict out = f + static_cast<size_t>(y) * (row_bytes + 1);
    const uint8_t* __restrict cur = px + static_cast<size_t>(y) * stride_bytes;
    out[0] = 1;
    ++out;
    out[0] = cur[2];
    out[1] = cur[1];
    out[2] = cur[0];
    for (size_t i = 3; i < row_bytes; i += 3) {
      out[i] = static_cast<uint8_t>(cur[i + 2] - cur[i - 1]);
      out[i + 1] = static_cast<uint8_t>(cur[i + 1] - cur[i - 2]);
      out[i + 2] = static_cast<uint8_t>(cur[i] - cur[i - 3]);
    }
  }
  return finish_png(scratch, filtered_size, rows, cols, 8, kRgb);
}

}  // namespace depthmask::detail
