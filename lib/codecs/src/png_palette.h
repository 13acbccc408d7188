// Indexed (palette) PNG masks, read with libpng so that pixels stay palette indices: OpenCV expands
// a palette to BGR, which would turn label images into colours.
#pragma once

#include <cstddef>
#include <cstdint>
#include <optional>
#include <string>

namespace depthmask::detail {

// The fields of a PNG's IHDR chunk.
struct PngHeader {
  uint32_t width = 0;
  uint32_t height = 0;
  int bit_depth = 0;
  int color_type = 0;  // 0 gray, 2 RGB, 3 palette, 4 gray+alpha, 6 RGBA
  int interlace = 0;
};
inline constexpr int kPngColorPalette = 3;

// The IHDR read from the file's bytes (signature, then IHDR as the first chunk, as the PNG
// specification requires), or nullopt when the bytes do not start like a PNG.
std::optional<PngHeader> png_header(const uint8_t* data, size_t size);

// Decodes an indexed-colour PNG into header.width x header.height palette indices, one byte per pixel
// (1-, 2- and 4-bit indices unpacked, never expanded to colours), rows `dst_step` bytes apart.
// Throws InputError naming `file` when the PNG is corrupt, truncated or not what `header` says.
void decode_palette_png(const uint8_t* data, size_t size, const PngHeader& header, const std::string& file,
                        uint8_t* dst, size_t dst_step);

}  // namespace depthmask::detail
