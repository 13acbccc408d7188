#include "peer_expect.h"

#include <opencv2/imgcodecs.hpp>
#include <opencv2/imgproc.hpp>

#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <fstream>
#include <iterator>
#include <stdexcept>

namespace peer {
namespace {

std::vector<uint8_t> file_bytes(const std::string& path) {
  std::ifstream f(path, std::ios::binary);
  if (!f) throw std::runtime_error(path + ": cannot read (did depthmask run write it?)");
  return std::vector<uint8_t>((std::istreambuf_iterator<char>(f)), std::istreambuf_iterator<char>());
}

// A capture at frame_size(): each pixel repeated (nearest neighbour), so no value is made up.
cv::Mat scaled(const cv::Mat& px) {
  if (px.size() == frame_size()) return px;
  cv::Mat out;
  cv::resize(px, out, frame_size(), 0, 0, cv::INTER_NEAREST);
  return out;
}

// APC's depth: deci-millimetres, each word rotated left by 3 bits (the dataset's README).
cv::Mat apc_decimm(const std::string& data, int i) {
  const std::string path = data + "/apc-vision-toolbox/scene-0000/" + frame_id(i) + ".depth.png";
  cv::Mat raw = cv::imread(path, cv::IMREAD_UNCHANGED);
  if (raw.type() != CV_16UC1) throw std::runtime_error(path + ": not a 16-bit depth PNG");
  raw.forEach<uint16_t>([](uint16_t& v, const int*) { v = static_cast<uint16_t>((v >> 3) | (v << 13)); });
  return scaled(raw);
}

// The float32 payload of a .npy file (little-endian '<f4', C order).
std::vector<uint8_t> npy_payload(const std::string& path) {
  std::vector<uint8_t> b = file_bytes(path);
  if (b.size() < 12 || std::memcmp(b.data(), "\x93NUMPY", 6) != 0) throw std::runtime_error(path + ": not a .npy file");
  const size_t header = b[6] == 1 ? 10 + (b[8] | (b[9] << 8)) : 12 + (b[8] | (b[9] << 8) | (b[10] << 16));
  return std::vector<uint8_t>(b.begin() + static_cast<std::ptrdiff_t>(header), b.end());
}

// A binary little-endian PLY of float x y z vertices (no colour: the peer's frames have none).
std::vector<uint8_t> ply_vertices(const std::string& path, size_t& count) {
  const std::vector<uint8_t> b = file_bytes(path);
  const std::string text(b.begin(), b.begin() + static_cast<std::ptrdiff_t>(std::min<size_t>(b.size(), 512)));
  const size_t end = text.find("end_header\n");
  const size_t el = text.find("element vertex ");
  if (end == std::string::npos || el == std::string::npos ||
      text.find("format binary_little_endian 1.0") == std::string::npos ||
      text.find("property uchar") != std::string::npos)
    throw std::runtime_error(path + ": not a binary little-endian PLY of x y z vertices");
  count = std::strtoull(text.c_str() + el + 15, nullptr, 10);
  const size_t at = end + 11;
  if (b.size() - at != count * 12) throw std::runtime_error(path + ": the vertex count does not match the data");
  return std::vector<uint8_t>(b.begin() + static_cast<std::ptrdiff_t>(at), b.end());
}

}  // namespace

std::string frame_id(int i) {
  char b[32];
  std::snprintf(b, sizeof b, "frame-%06d", i);
  return b;
}

cv::Mat depth_mm(const std::string& data, int i) {
  cv::Mat mm;
  apc_decimm(data, i).convertTo(mm, CV_16UC1, 0.1);
  return mm;
}

cv::Mat depth_m(const std::string& data, int i) {
  cv::Mat m;
  apc_decimm(data, i).convertTo(m, CV_32FC1, 1e-4);
  return m;
}

cv::Mat mask_of(const std::string& data, int i) {
  const std::string path = data + "/apc-vision-toolbox/scene-0000/segm/" + frame_id(i) + ".segm.png";
  cv::Mat m = cv::imread(path, cv::IMREAD_UNCHANGED);
  if (m.type() != CV_8UC1) throw std::runtime_error(path + ": not an 8-bit label image");
  return scaled(m);
}

cv::Size frame_size() {
  static const cv::Size size = [] {
    const char* env = std::getenv("DDS_PEER_SIZE");
    int w = 640, h = 480;
    if (env != nullptr && *env != 0 &&
        (std::sscanf(env, "%dx%d", &w, &h) != 2 || w < 64 || h < 48 || w > 8192 || h > 8192))
      throw std::runtime_error(std::string("DDS_PEER_SIZE='") + env + "': expected WIDTHxHEIGHT, 64x48 to 8192x8192");
    return cv::Size(w, h);
  }();
  return size;
}

int env_ms(const char* name, int fallback) {
  const char* env = std::getenv(name);
  if (env == nullptr || *env == 0) return fallback;
  const int v = std::atoi(env);
  if (v < 1 || v > 10000) throw std::runtime_error(std::string(name) + "='" + env + "': expected 1 to 10000 ms");
  return v;
}

const double* camera_k() {
  static const std::vector<double> k = [] {
    const double sx = frame_size().width / 640.0, sy = frame_size().height / 480.0;
    return std::vector<double>{615.195190 * sx, 0, 298.442688 * sx, 0, 615.195251 * sy, 247.519196 * sy, 0, 0, 1};
  }();
  return k.data();
}

int prepare(const std::string& data, const std::string& dir) {
  for (const char* sub : {"/mm/depth", "/mm/mask", "/m/depth", "/m/mask"})
    if (std::system(("mkdir -p '" + dir + sub + "'").c_str()) != 0) return 2;
  for (int i = 0; i < kFrames; ++i) {
    const std::string id = frame_id(i);
    const cv::Mat mask = mask_of(data, i);
    auto at = [&](const char* sub, const char* ext) { return std::string(dir).append(sub).append(id).append(ext); };
    const bool ok =
        cv::imwrite(at("/mm/depth/", ".png"), depth_mm(data, i)) && cv::imwrite(at("/mm/mask/", ".png"), mask) &&
        cv::imwrite(at("/m/depth/", ".tiff"), depth_m(data, i)) && cv::imwrite(at("/m/mask/", ".png"), mask);
    if (!ok) {
      std::fprintf(stderr, "dds_peer: cannot write frame %s under %s\n", id.c_str(), dir.c_str());
      return 2;
    }
  }
  // %.17g: the run parses the very doubles camera_info carries.
  const double* k = camera_k();
  char set[256];
  std::snprintf(set, sizeof set, "input.intrinsics={fx: %.17g, fy: %.17g, cx: %.17g, cy: %.17g}\n", k[0], k[4], k[2],
                k[5]);
  std::ofstream f(dir + "/k.txt");
  f << set;
  return f.flush() ? 0 : 2;
}

Expected expected_of(const std::string& dir, const std::string& id) {
  Expected e;
  e.depth = npy_payload(dir + "/" + id + ".npy");
  const std::string rpath = dir + "/" + id + ".reason.png";
  const cv::Mat reason = cv::imread(rpath, cv::IMREAD_UNCHANGED);
  if (reason.type() != CV_8UC1 || !reason.isContinuous()) throw std::runtime_error(rpath + ": not an 8-bit PNG");
  e.reason.assign(reason.data, reason.data + reason.total());
  e.mask.resize(e.reason.size());
  for (size_t i = 0; i < e.reason.size(); ++i) e.mask[i] = e.reason[i] == 0 ? 255 : 0;
  e.vertices = ply_vertices(dir + "/" + id + ".ply", e.kept);
  if (e.kept == 0) throw std::runtime_error(dir + "/" + id + ".ply: no point (nothing to compare)");
  return e;
}

std::vector<uint8_t> finite_points(const std::vector<uint8_t>& cloud) {
  std::vector<uint8_t> out;
  for (size_t at = 0; at + 12 <= cloud.size(); at += 12) {
    float xyz[3];
    std::memcpy(xyz, cloud.data() + at, 12);
    if (std::isfinite(xyz[0]) && std::isfinite(xyz[1]) && std::isfinite(xyz[2]))
      out.insert(out.end(), cloud.begin() + static_cast<std::ptrdiff_t>(at),
                 cloud.begin() + static_cast<std::ptrdiff_t>(at + 12));
  }
  return out;
}

}  // namespace peer
