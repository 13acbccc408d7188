// Output files: float32 TIFF and NPY depth maps and the preview PNG, all written atomically.
#pragma once

#include <opencv2/core.hpp>

#include <cstdint>
#include <filesystem>
#include <string>
#include <vector>

#include "depthmask/config.h"

namespace depthmask {

// Writes `bytes` to a temporary file in path's folder, optionally fsyncs it, then renames it over
// `path`, so readers see the old file or the new one, never a torn one. Throws OutputError naming
// the file and the system error; the temporary file is removed on failure.
void write_file_atomic(const std::filesystem::path& path, const void* data, size_t bytes, bool fsync);

// A .npy (format 1.0) image of a CV_32FC1 matrix: '<f4', C order, shape (rows, cols).
std::vector<uint8_t> encode_npy(const cv::Mat& f32);
// Parses what encode_npy writes (and numpy's own 2-D '<f4' files); throws InputError otherwise.
cv::Mat decode_npy(const std::vector<uint8_t>& bytes, const std::string& name);

// A float32 TIFF of a CV_32FC1 matrix (SAMPLEFORMAT_IEEEFP, as OpenCV writes it).
std::vector<uint8_t> encode_tiff(const cv::Mat& f32);

// Color | mask | colorized masked depth, side by side (BGR, 8-bit). Missing color shows as grey.
// Depth colours span the valid output values; pixels equal to `invalid` (or NaN) are black.
cv::Mat make_preview(const cv::Mat& color, const cv::Mat& mask, const cv::Mat& depth_out, float invalid);

// The output file names of frame `id` ({id}.tiff, {id}.npy, {id}.preview.png).
std::filesystem::path output_path(const std::filesystem::path& dir, const std::string& id, const std::string& kind_ext);

// Checks that `dir` exists or can be created and is writable (by creating and removing a probe file).
// Throws OutputError naming the folder and the system error.
void ensure_output_dir(const std::filesystem::path& dir);

}  // namespace depthmask
