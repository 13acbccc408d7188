#include "depthmask/detail/image_header.h"

#include <cstring>

#include "depthmask/errors.h"

namespace depthmask::detail {

namespace {

uint32_t rd32(const uint8_t* p, bool big) {
  return big ? (uint32_t{p[0]} << 24) | (uint32_t{p[1]} << 16) | (uint32_t{p[2]} << 8) | uint32_t{p[3]}
             : (uint32_t{p[3]} << 24) | (uint32_t{p[2]} << 16) | (uint32_t{p[1]} << 8) | uint32_t{p[0]};
}
uint16_t rd16(const uint8_t* p, bool big) {
  return static_cast<uint16_t>(big ? (p[0] << 8) | p[1] : (p[1] << 8) | p[0]);
}

// TIFF 6.0: "II*\0" or "MM\0*", the first IFD's offset, then 12-byte entries (tag, type, count,
// value). ImageWidth 256 and ImageLength 257 are SHORT (3) or LONG (4) held in the value field.
std::optional<ImageSize> tiff_size(const uint8_t* d, size_t n) {
  if (n < 8) return std::nullopt;
  const bool big = d[0] == 'M';
  if (!((d[0] == 'I' && d[1] == 'I') || (d[0] == 'M' && d[1] == 'M')) || rd16(d + 2, big) != 42) return std::nullopt;
  const uint32_t ifd = rd32(d + 4, big);
  if (ifd < 8 || ifd > n - 2) return std::nullopt;
  const size_t count = rd16(d + ifd, big);
  std::optional<uint64_t> w, h;
  for (size_t i = 0; i < count; ++i) {
    const size_t at = ifd + 2 + 12 * i;
    if (at + 12 > n) return std::nullopt;
    const uint16_t tag = rd16(d + at, big), type = rd16(d + at + 2, big);
    if (tag != 256 && tag != 257) continue;
    if (rd32(d + at + 4, big) != 1 || (type != 3 && type != 4)) return std::nullopt;
    const uint64_t v = type == 3 ? rd16(d + at + 8, big) : rd32(d + at + 8, big);
    (tag == 256 ? w : h) = v;
  }
  if (!w || !h) return std::nullopt;
  return ImageSize{"TIFF", *w, *h};
}

// OpenEXR: magic 76 2f 31 01, a version word, then attributes "name\0type\0" int32 size, value,
// until an empty name. dataWindow is a box2i: xMin yMin xMax yMax (int32, little-endian).
std::optional<ImageSize> exr_size(const uint8_t* d, size_t n) {
  if (n < 8 || !is_exr(d, n)) return std::nullopt;
  size_t at = 8;
  auto cstr = [&](std::string& s) {
    const void* z = at < n ? std::memchr(d + at, 0, n - at) : nullptr;
    if (z == nullptr) return false;
    const size_t len = static_cast<size_t>(static_cast<const uint8_t*>(z) - (d + at));
    s.assign(reinterpret_cast<const char*>(d + at), len);
    at += len + 1;
    return true;
  };
  std::string name, type;
  while (cstr(name) && !name.empty()) {
    if (!cstr(type) || at + 4 > n) return std::nullopt;
    const uint32_t len = rd32(d + at, false);
    at += 4;
    if (len > n - at) return std::nullopt;
    if (name == "dataWindow" && type == "box2i" && len == 16) {
      const auto v = [&](size_t k) { return static_cast<int64_t>(static_cast<int32_t>(rd32(d + at + 4 * k, false))); };
      const int64_t w = v(2) - v(0) + 1, h = v(3) - v(1) + 1;
      return ImageSize{"EXR", static_cast<uint64_t>(w > 0 ? w : 0), static_cast<uint64_t>(h > 0 ? h : 0)};
    }
    at += len;
  }
  return std::nullopt;
}

// JPEG: SOI, then marker segments FFxx + 16-bit length; SOF0..SOF15 (not DHT C4, JPG C8, DAC CC) hold
// precision, height, width.
std::optional<ImageSize> jpeg_size(const uint8_t* d, size_t n) {
  if (n < 4 || d[0] != 0xFF || d[1] != 0xD8) return std::nullopt;
  size_t at = 2;
  while (at + 4 <= n) {
    if (d[at] != 0xFF) return std::nullopt;
    const uint8_t m = d[at + 1];
    if (m == 0xFF) {  // fill byte
      ++at;
      continue;
    }
    if (m == 0xD8 || m == 0x01 || (m >= 0xD0 && m <= 0xD7)) {  // markers without a length
      at += 2;
      continue;
    }
    const size_t len = rd16(d + at + 2, true);
    if (len < 2) return std::nullopt;
    if (m >= 0xC0 && m <= 0xCF && m != 0xC4 && m != 0xC8 && m != 0xCC) {
      if (at + 9 > n || len < 7) return std::nullopt;
      return ImageSize{"JPEG", rd16(d + at + 7, true), rd16(d + at + 5, true)};
    }
    if (m == 0xDA || m == 0xD9) return std::nullopt;  // scan data before any frame header
    at += 2 + len;
  }
  return std::nullopt;
}

}  // namespace

std::optional<PngHeader> png_header(const uint8_t* data, size_t size) {
  static const uint8_t kSignature[8] = {0x89, 'P', 'N', 'G', '\r', '\n', 0x1A, '\n'};
  if (size < 33 || std::memcmp(data, kSignature, 8) != 0) return std::nullopt;
  if (rd32(data + 8, true) != 13 || std::memcmp(data + 12, "IHDR", 4) != 0) return std::nullopt;
  PngHeader h;
  h.width = rd32(data + 16, true);
  h.height = rd32(data + 20, true);
  h.bit_depth = data[24];
  h.color_type = data[25];
  h.interlace = data[28];
  return h;
}

bool is_exr(const uint8_t* data, size_t size) {
  static const uint8_t magic[4] = {0x76, 0x2f, 0x31, 0x01};
  return data != nullptr && size >= 4 && std::memcmp(data, magic, 4) == 0;
}

std::optional<ImageSize> image_size(const uint8_t* data, size_t size) {
  if (data == nullptr) return std::nullopt;
  if (const auto png = png_header(data, size)) return ImageSize{"PNG", png->width, png->height};
  if (auto t = tiff_size(data, size)) return t;
  if (auto e = exr_size(data, size)) return e;
  return jpeg_size(data, size);
}

void check_image_size(const uint8_t* data, size_t size, uint64_t max_pixels, const std::string& what,
                      const std::string& file) {
  const auto s = image_size(data, size);
  if (!s) return;
  // Each side at most 2^32: the product cannot overflow 64 bits.
  const bool ok = s->width > 0 && s->height > 0 && s->width <= max_pixels && s->height <= max_pixels &&
                  s->width * s->height <= max_pixels;
  DM_EXPECT(ok, InputError,
            what << " file '" << file << "' is a " << s->format << " image of " << s->width << "x" << s->height
                 << " pixels by its header; expected 1 to " << max_pixels
                 << " pixels (input.max_image_pixels), so it is not decoded");
}

}  // namespace depthmask::detail
