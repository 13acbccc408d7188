// PNG files written with libpng directly, for the cases OpenCV's writer does not make (indexed colour).
#pragma once

#include <gtest/gtest.h>
#include <png.h>

#include <opencv2/core.hpp>

#include <csetjmp>
#include <cstdio>
#include <filesystem>
#include <vector>

namespace dmtest {

// An indexed-colour PNG written with libpng: `indices` (CV_8UC1) at `bit_depth` (1, 2, 4 or 8) with a
// colourful palette of `colors` entries, optionally Adam7-interlaced and with a tRNS chunk.
inline void write_palette_png(const std::filesystem::path& path, const cv::Mat& indices, int bit_depth, int colors,
                              bool interlace, bool trns) {
  std::filesystem::create_directories(path.parent_path());
  FILE* fp = std::fopen(path.string().c_str(), "wb");
  ASSERT_NE(fp, nullptr);
  png_structp png = png_create_write_struct(PNG_LIBPNG_VER_STRING, nullptr, nullptr, nullptr);
  png_infop info = png_create_info_struct(png);
  std::vector<png_color> palette(static_cast<size_t>(colors));
  for (int i = 0; i < colors; ++i)
    palette[static_cast<size_t>(i)] = {static_cast<png_byte>((i * 37 + 200) % 256),
                                       static_cast<png_byte>((255 - i * 53) & 255),
                                       static_cast<png_byte>((i * 91 + 17) % 256)};
  std::vector<png_byte> alpha(static_cast<size_t>(colors), 128);
  std::vector<png_bytep> rows(static_cast<size_t>(indices.rows));
  for (int y = 0; y < indices.rows; ++y) rows[static_cast<size_t>(y)] = const_cast<png_bytep>(indices.ptr<uint8_t>(y));
  volatile bool ok = false;
  if (!setjmp(png_jmpbuf(png))) {
    png_init_io(png, fp);
    png_set_IHDR(png, info, static_cast<png_uint_32>(indices.cols), static_cast<png_uint_32>(indices.rows), bit_depth,
                 PNG_COLOR_TYPE_PALETTE, interlace ? PNG_INTERLACE_ADAM7 : PNG_INTERLACE_NONE,
                 PNG_COMPRESSION_TYPE_DEFAULT, PNG_FILTER_TYPE_DEFAULT);
    png_set_PLTE(png, info, palette.data(), colors);
    if (trns) png_set_tRNS(png, info, alpha.data(), colors, nullptr);
    png_write_info(png, info);
    if (bit_depth < 8) png_set_packing(png);  // one index per byte in, packed bits out
    png_write_image(png, rows.data());
    png_write_end(png, nullptr);
    ok = true;
  }
  png_destroy_write_struct(&png, &info);
  std::fclose(fp);
  ASSERT_TRUE(ok) << "libpng failed writing " << path;
}

}  // namespace dmtest
