// Indexed (palette) PNG masks, read with libpng so that pixels stay palette indices: OpenCV expands
// a palette to BGR, which would turn label images into colours.
#pragma once

#include <cstddef>
#include <cstdint>
#include <string>

#include "depthmask/detail/image_header.h"  // PngHeader, png_header

namespace depthmask::detail {

// Decodes an indexed-colour PNG into header.width x header.height palette indices, one byte per pixel
// (1-, 2- and 4-bit indices unpacked, never expanded to colours), rows `dst_step` bytes apart.
// Throws InputError naming `file` when the PNG is corrupt, truncated or not what `header` says.
void decode_palette_png(const uint8_t* data, size_t size, const PngHeader& header, const std::string& file,
                        uint8_t* dst, size_t dst_step);

}  // namespace depthmask::detail
