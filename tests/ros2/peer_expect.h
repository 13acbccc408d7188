// The Fast-DDS peer's side of the comparison (dds_peer.cpp): the APC captures as a camera driver
// publishes them, and what `depthmask run` wrote for the same frames as a folder, read back from
// its files with no depthmask code (the .npy, .reason.png and .ply formats as OUTPUTS.md states them).
#pragma once

#include <opencv2/core.hpp>

#include <cstdint>
#include <string>
#include <vector>

namespace peer {

constexpr int kFrames = 8;

std::string frame_id(int i);
/// The size the peer publishes: the captures' 640x480, or DDS_PEER_SIZE=WxH (the 4K case on the GPU
/// machine: 3840x2160), to which every capture is scaled by nearest neighbour (no new depth values).
cv::Size frame_size();
/// The environment variable `name` as a count of milliseconds (1 to 10000), or `fallback` when unset.
int env_ms(const char* name, int fallback);
cv::Mat depth_mm(const std::string& data, int i);  // CV_16UC1, millimetres
cv::Mat depth_m(const std::string& data, int i);   // CV_32FC1, metres
cv::Mat mask_of(const std::string& data, int i);   // CV_8UC1, the ground-truth labels
/// APC's colour K (cam.info.txt), scaled with the frames, as camera_info's row-major 3x3: the
/// intrinsics of the run's PLY too.
const double* camera_k();
/// Writes the captures as folders `depthmask run` reads (DIR/mm, DIR/m), and DIR/k.txt: the `--set`
/// argument that gives `run` camera_k() exactly; 0, or 2 on a write error.
int prepare(const std::string& data, const std::string& dir);

/// What `depthmask run` wrote for one frame: the masked depth (.npy's float32 payload), the reason
/// codes (.reason.png's pixels), the mask the publisher derives from them (255 where the code is 0,
/// the kept pixels), and the PLY's vertices (x y z float32 each, row-major order of the kept pixels).
struct Expected {
  std::vector<uint8_t> depth, reason, mask, vertices;
  size_t kept = 0;  // the PLY's vertex count
};
/// Throws std::runtime_error naming the file that is missing or not as expected.
Expected expected_of(const std::string& dir, const std::string& id);

/// The finite points of an organised x y z float32 cloud (12-byte points), in order, as bytes.
std::vector<uint8_t> finite_points(const std::vector<uint8_t>& cloud);

}  // namespace peer
