// OpenCV's EXR codec, switched on only for the EXR files the library itself reads or writes.
#pragma once

#include <cstddef>
#include <cstdint>
#include <filesystem>

namespace depthmask::detail {

// The library's one change of the process environment: OPENCV_IO_ENABLE_OPENEXR=1, which OpenCV
// builds since 4.5.2 may want before their first EXR decode or encode (a guard against untrusted
// EXR files; OpenCV reads the variable once, at that first use). Never overrides a value the host
// already set, "0" included. Called only right before the library decodes or encodes an EXR file,
// so a program that never hands the library an EXR file keeps its environment as it was.
void enable_exr_codec();

// enable_exr_codec() when `data` is an OpenEXR file (its magic number); call it before decoding bytes
// of any format.
void enable_exr_codec_for(const uint8_t* data, size_t size);

// The same for a file about to be decoded by name (cv::imread): its first bytes decide.
void enable_exr_codec_for(const std::filesystem::path& file);

}  // namespace depthmask::detail
