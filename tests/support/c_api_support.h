// The C ABI's image descriptor for a host cv::Mat, for the tests that call dm_masker_mask.
#pragma once

#include <opencv2/core.hpp>

#include <cstdint>

#include "depthmask/depthmask_c.h"

namespace dmtest {

// A 2-D host dm_image over `m` (its rows, columns and byte strides) of element type `dtype`.
inline dm_image host_dm_image(const cv::Mat& m, int32_t dtype) {
  dm_image im{};
  im.data = m.data;
  im.memory = DM_MEMORY_HOST;
  im.device = -1;
  im.dtype = dtype;
  im.ndim = 2;
  im.shape[0] = m.rows;
  im.shape[1] = m.cols;
  im.strides[0] = static_cast<int64_t>(m.step[0]);
  im.strides[1] = static_cast<int64_t>(m.elemSize());
  return im;
}

}  // namespace dmtest
