// Image sizes read from the first bytes of a file, before any decoder allocates: the input limits
// (input.max_image_pixels) are checked against what the header claims, so a crafted header cannot
// make OpenCV's or libpng's decoder ask for gigabytes. In base: the image files' readers (codecs) and
// the compressed image messages of ROS 2 (ros) both check sizes with it.
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

struct ImageSize {
  const char* format = "";  // "PNG", "TIFF", "EXR", "JPEG"
  uint64_t width = 0, height = 0;
};

// The size the header of a PNG (IHDR), TIFF (first IFD's ImageWidth/ImageLength, either byte order),
// OpenEXR (dataWindow) or JPEG (the first SOFn) file claims. nullopt when the bytes are none of
// these formats or the header is cut short or malformed (the decoder then reports it).
std::optional<ImageSize> image_size(const uint8_t* data, size_t size);

// Whether the bytes begin as an OpenEXR file does (its magic number 76 2f 31 01).
bool is_exr(const uint8_t* data, size_t size);

// Throws InputError "<what> file '<file>' ..." when the header claims 0 pixels or more than
// `max_pixels` (input.max_image_pixels). Bytes of no known format pass: their decoder decides.
void check_image_size(const uint8_t* data, size_t size, uint64_t max_pixels, const std::string& what,
                      const std::string& file);

}  // namespace depthmask::detail
