#include "png_palette.h"

#include <png.h>

#include <csetjmp>
#include <cstdio>
#include <cstring>
#include <vector>

#include "depthmask/errors.h"

namespace depthmask::detail {

namespace {

struct ReadContext {
  const uint8_t* data;
  size_t size;
  size_t pos;
  char error[256];
};

void on_error(png_structp png, png_const_charp msg) {
  auto* ctx = static_cast<ReadContext*>(png_get_error_ptr(png));
  std::snprintf(ctx->error, sizeof ctx->error, "%s", msg);
  png_longjmp(png, 1);
}

void on_warning(png_structp, png_const_charp) {}

void on_read(png_structp png, png_bytep out, size_t n) {
  auto* ctx = static_cast<ReadContext*>(png_get_io_ptr(png));
  if (n > ctx->size - ctx->pos) png_error(png, "the file is truncated");
  std::memcpy(out, ctx->data + ctx->pos, n);
  ctx->pos += n;
}

// libpng reports errors by longjmp back to the setjmp below, so this function holds no object with
// a destructor (the row pointers are the caller's). Returns false with ctx.error set.
bool read_indices(ReadContext& ctx, png_bytep* rows, const PngHeader& want) {
  png_structp png = png_create_read_struct(PNG_LIBPNG_VER_STRING, &ctx, on_error, on_warning);
  if (png == nullptr) {
    std::snprintf(ctx.error, sizeof ctx.error, "libpng could not start (out of memory)");
    return false;
  }
  png_infop info = png_create_info_struct(png);
  if (info == nullptr) {
    png_destroy_read_struct(&png, nullptr, nullptr);
    std::snprintf(ctx.error, sizeof ctx.error, "libpng could not start (out of memory)");
    return false;
  }
  if (setjmp(png_jmpbuf(png))) {
    png_destroy_read_struct(&png, &info, nullptr);
    return false;
  }
  png_set_read_fn(png, &ctx, on_read);
  png_read_info(png, info);
  if (png_get_color_type(png, info) != PNG_COLOR_TYPE_PALETTE || png_get_image_width(png, info) != want.width ||
      png_get_image_height(png, info) != want.height)
    png_error(png, "the header changed while reading");
  // 1/2/4-bit indices become one byte each, values unchanged. No palette_to_rgb, no tRNS expansion:
  // the pixels must stay palette indices.
  if (png_get_bit_depth(png, info) < 8) png_set_packing(png);
  png_set_interlace_handling(png);
  png_read_update_info(png, info);
  if (png_get_rowbytes(png, info) != want.width) png_error(png, "unexpected row size after unpacking");
  png_read_image(png, rows);
  png_read_end(png, nullptr);
  png_destroy_read_struct(&png, &info, nullptr);
  return true;
}

}  // namespace

void decode_palette_png(const uint8_t* data, size_t size, const PngHeader& header, const std::string& file,
                        uint8_t* dst, size_t dst_step) {
  DM_EXPECT(header.color_type == kPngColorPalette, std::logic_error, "decode_palette_png: not an indexed-colour PNG");
  DM_EXPECT(dst_step >= header.width, std::logic_error, "decode_palette_png: row step shorter than a row");
  std::vector<png_bytep> rows(header.height);
  for (uint32_t y = 0; y < header.height; ++y) rows[y] = dst + static_cast<size_t>(y) * dst_step;
  ReadContext ctx{data, size, 0, {}};
  DM_EXPECT(read_indices(ctx, rows.data(), header), InputError,
            "mask file '" << file << "' is an indexed-colour (palette) PNG that could not be decoded: " << ctx.error);
}

}  // namespace depthmask::detail
