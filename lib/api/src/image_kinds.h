// The facade's pixel types and memory kinds, one row each with everything that names or sizes them:
// the word messages use, the bytes of a pixel, OpenCV's depth and the C ABI's number. masker.cpp
// (to_string, pixel_bytes, ImageRef::of, the cv::Mat headers) and c_api.cpp (a dm_image's view) read
// these rows, so a new type is one row.
#pragma once

#include <opencv2/core/hal/interface.h>

#include <cstddef>
#include <cstdint>
#include <string_view>

#include "depthmask/depthmask_c.h"
#include "depthmask/detail/enum_names.h"
#include "depthmask/masker.h"

namespace depthmask::detail {

struct PixelKind {
  PixelType value;
  std::string_view name;
  size_t bytes;
  int cv_depth;   // the OpenCV depth of its cv::Mat headers
  int32_t dtype;  // enum dm_dtype
};
// uint8 before bool: a CV_8U cv::Mat is a uint8 image.
inline constexpr PixelKind kPixelKinds[] = {{PixelType::U8, "uint8", 1, CV_8U, DM_DTYPE_UINT8},
                                            {PixelType::U16, "uint16", 2, CV_16U, DM_DTYPE_UINT16},
                                            {PixelType::F32, "float32", 4, CV_32F, DM_DTYPE_FLOAT32},
                                            {PixelType::Bool, "bool", 1, CV_8U, DM_DTYPE_BOOL}};

struct MemoryKindRow {
  MemoryKind value;
  std::string_view name;
  int32_t memory;  // enum dm_memory
};
inline constexpr MemoryKindRow kMemoryKinds[] = {{MemoryKind::Host, "host memory", DM_MEMORY_HOST},
                                                 {MemoryKind::Device, "CUDA device memory", DM_MEMORY_CUDA},
                                                 {MemoryKind::Mapped, "mapped host memory", DM_MEMORY_MAPPED}};

// The row whose column `field` equals `key` (the first such); nullptr when none does.
template <class Row, size_t N, class Field, class Key>
constexpr const Row* find_row(const Row (&rows)[N], Field Row::*field, Key key) {
  for (const Row& r : rows)
    if (r.*field == key) return &r;
  return nullptr;
}

}  // namespace depthmask::detail
