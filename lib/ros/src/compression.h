// The compressors of ROS 2 bags (zstd, LZ4's frame format), in one place so that a build without
// them (DEPTHMASK_WITH_ROSBAG=OFF) swaps one file. Decompressors write into a buffer of a size the
// caller bounded; each returns "" on success or what went wrong, which the caller puts in an error
// naming the file and the record.
#pragma once

#include <cstddef>
#include <cstdint>
#include <string>
#include <vector>

namespace depthmask::detail {

// True when the bag libraries (libzstd, liblz4, libsqlite3) were built in.
bool rosbag_built();
// The InputError message of a reader in a build without them.
inline constexpr const char* kNoRosbag =
    "this depthmask was built without ROS 2 bag support (DEPTHMASK_WITH_ROSBAG=OFF)";

// Exactly `dst_size` bytes out of the zstd frames at src (fewer or more is an error).
std::string zstd_decompress(const uint8_t* src, size_t size, uint8_t* dst, size_t dst_size);
// One zstd frame of unknown (or known) content size, at most `cap` bytes out, into `out`.
std::string zstd_decompress_bounded(const uint8_t* src, size_t size, size_t cap, std::vector<uint8_t>& out);
// Exactly `dst_size` bytes out of the LZ4 frames at src.
std::string lz4f_decompress(const uint8_t* src, size_t size, uint8_t* dst, size_t dst_size);

// One zstd frame (with its content size) / one LZ4 frame of the bytes.
std::vector<uint8_t> zstd_compress(const uint8_t* src, size_t size, int level);
std::vector<uint8_t> lz4f_compress(const uint8_t* src, size_t size);

}  // namespace depthmask::detail
