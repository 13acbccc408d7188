/// \file
/// Output files: float32 TIFF, NPY and EXR depth maps, 16-bit millimetre PNG, PLY point clouds and the
/// preview PNG, all written atomically; and where a frame's outputs go. The JSON sidecar: sidecar.h.
#pragma once

#include <opencv2/core.hpp>

#include <cstdint>
#include <filesystem>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include <sys/types.h>

#include "depthmask/atomic_file.h"
#include "depthmask/config.h"
#include "depthmask/dataset.h"

namespace depthmask {

/// A .npy (format 1.0) image of a CV_32FC1 matrix: '<f4', C order, shape (rows, cols). npy_file's
/// parts are the header and views of `f32`'s rows (as tiff_file's); encode_npy is one vector.
FileBytes npy_file(const cv::Mat& f32);
/// npy_file's bytes in one vector.
std::vector<uint8_t> encode_npy(const cv::Mat& f32);
/// Parses what encode_npy writes (and numpy's own 2-D '<f4' files); throws InputError otherwise.
cv::Mat decode_npy(const std::vector<uint8_t>& bytes, const std::string& name);

/// A float32 TIFF of a CV_32FC1 matrix: baseline little-endian TIFF, one uncompressed plane,
/// SAMPLEFORMAT_IEEEFP (the tags OpenCV's writer sets), strips of about 8 KiB as libtiff makes them.
/// tiff_file's parts are a header block and views of `f32`'s rows, which must outlive the FileBytes;
/// encode_tiff is the same file in one vector. Throws OutputError past classic TIFF's 4 GiB.
FileBytes tiff_file(const cv::Mat& f32);
/// tiff_file's bytes in one vector.
std::vector<uint8_t> encode_tiff(const cv::Mat& f32);

/// A float32 OpenEXR image of a CV_32FC1 matrix (one channel "Y", FLOAT pixels, OpenCV's default
/// compression), bit-exact on read-back with cv::imread(IMREAD_UNCHANGED).
std::vector<uint8_t> encode_exr(const cv::Mat& f32);

/// Depth in whole millimetres for 16-bit PNG consumers (`{id}.mm.png`): kept pixels (depth_kept: finite,
/// > 0, not `invalid`) are rounded to the nearest millimetre (halves away from zero) and clamped to
/// 65535 (65.535 m); every other pixel, and a kept depth below 0.5 mm, is 0, the usual 16-bit "no
/// measurement" (whatever output.invalid is).
cv::Mat depth_to_mm16(const cv::Mat& f32, float invalid);
/// depth_to_mm16's image as a 16-bit greyscale PNG file.
std::vector<uint8_t> encode_png16_mm(const cv::Mat& f32, float invalid);

/// How many output pixels are kept (depth_kept).
size_t count_kept(const cv::Mat& f32, float invalid);

/// A binary little-endian PLY point cloud of the points in `xyz` (CV_32FC3, metres; a pixel with z == 0
/// is no point, as the backprojection writes it), in row-major pixel order: `element vertex N` with
/// float x, y, z and, when `color_bgr` (CV_8UC3, same size) is given, uchar red, green, blue.
std::vector<uint8_t> encode_ply(const cv::Mat& xyz, const cv::Mat& color_bgr = cv::Mat());

/// Color | mask | colorized masked depth, side by side (BGR, 8-bit). Missing color shows as grey.
/// Depth colours span the valid output values; pixels equal to `invalid` (or NaN) are black.
/// With a `reason` plane (CV_8UC1 codes, the depth's size) a fourth panel shows it in the colours of
/// depthmask/reason.h (reason_colors()).
cv::Mat make_preview(const cv::Mat& color, const cv::Mat& mask, const cv::Mat& depth_out, float invalid,
                     const cv::Mat& reason = cv::Mat());
/// A reason plane (CV_8UC1 codes) in the colours of depthmask/reason.h (BGR); codes beyond the table
/// are white.
cv::Mat reason_colors(const cv::Mat& reason);

/// The output file names of frame `id` ({id}.tiff, {id}.npy, {id}.preview.png).
std::filesystem::path output_path(const std::filesystem::path& dir, const std::string& id, const std::string& kind_ext);

/// Where frame f's outputs go, without the extension: \<output.dir\>/\<id\> (layout flat), or
/// \<output.dir\>/\<folder of f.relative\>/\<depth file stem\> (layout mirror: the input's folders and names,
/// e.g. seq1/depth/frame-000003.depth.png gives seq1/depth/frame-000003.depth.tiff). f.relative,
/// when empty, is the depth file relative to `input_root`. Throws ConfigError when the mirrored path
/// would leave the output folder (a depth file outside input.root).
std::filesystem::path output_stem(const OutputConfig& out, const FrameEntry& f,
                                  const std::filesystem::path& input_root);
/// stem + "." + ext (stem "a/b.depth", ext "mm.png" gives "a/b.depth.mm.png").
std::filesystem::path with_ext(const std::filesystem::path& stem, const std::string& ext);

/// One file a frame wrote: its path relative to output.dir (generic form), size and CRC-32 (zlib's).
struct OutputFile {
  std::string name;    ///< relative to output.dir, with '/'
  uint64_t size = 0;   ///< bytes
  uint32_t crc32 = 0;  ///< CRC-32 of its bytes
};

}  // namespace depthmask
