// The served channels' messages (serve_encode.h): ROS 2 messages in CDR through lib/ros's codec,
// PNGs through the project's libdeflate writer, JPEG colour through OpenCV, the stats as JSON.
#include "depthmask/detail/serve_encode.h"

#include <nlohmann/json.hpp>
#include <opencv2/imgcodecs.hpp>

#include <algorithm>
#include <cmath>
#include <cstring>
#include <limits>

#include "depthmask/bag_output.h"
#include "depthmask/detail/png_codec.h"
#include "depthmask/encoders.h"
#include "depthmask/errors.h"
#include "depthmask/kernels/backproject.h"
#include "depthmask/ros_image.h"
#include "depthmask/ros_msgs.h"

namespace depthmask::detail {

namespace {

// JPEG quality of the colour channel: a viewer's picture, a third of quality 95's bytes.
constexpr int kJpegQuality = 80;

ros::Header header_of(const ServedCopy& f, const ServeEncoding& e) {
  ros::Header h;
  h.stamp = ros::Time::from_nanoseconds(static_cast<int64_t>(f.stamp_ns));
  h.frame_id = e.frame_id;
  return h;
}

ros::CompressedImage compressed(const ServedCopy& f, const ServeEncoding& e, const char* format,
                                std::vector<uint8_t> data) {
  ros::CompressedImage m;
  m.header = header_of(f, e);
  m.format = format;
  m.data = std::move(data);
  return m;
}

std::vector<uint8_t> png8(const cv::Mat& m) { return encode_png_grey8(m.ptr<uint8_t>(), m.rows, m.cols, m.step); }

std::vector<uint8_t> depth_message(const ServedCopy& f, const ServeEncoding& e) {
  if (!e.depth_raw) return ros::encode(compressed(f, e, "png", encode_png16_mm(f.depth, e.invalid)));
  // REP 118: 32FC1 metres, NaN where there is no depth.
  cv::Mat metres = f.depth.clone();
  const bool invalid_nan = std::isnan(e.invalid);
  if (!invalid_nan)
    metres.forEach<float>([&](float& v, const int*) {
      if (v == e.invalid) v = std::numeric_limits<float>::quiet_NaN();
    });
  return ros::encode(ros::pixels_to_image(metres, header_of(f, e)));
}

std::vector<uint8_t> points_message(const ServedCopy& f, const ServeEncoding& e) {
  ros::PointCloud2 pc;
  pc.header = header_of(f, e);
  const std::vector<float> xyz = served_points(f.depth, e.invalid, *e.intrinsics, kMaxServedPoints);
  pc.height = 1;
  pc.width = static_cast<uint32_t>(xyz.size() / 3);
  for (const char* n : {"x", "y", "z"})
    pc.fields.push_back({n, static_cast<uint32_t>(4 * pc.fields.size()), 7 /*FLOAT32*/, 1});
  pc.point_step = 12;
  pc.row_step = 12 * pc.width;
  pc.is_dense = true;  // only kept (finite) points
  pc.data.resize(xyz.size() * sizeof(float));
  if (!xyz.empty()) std::memcpy(pc.data.data(), xyz.data(), pc.data.size());
  return ros::encode(pc);
}

std::vector<uint8_t> stats_prefix(const ServedCopy& f) {
  // The id through nlohmann_json (escaped; bytes that are not UTF-8 replaced), the integers by hand.
  std::string s = "{\"sequence\":" + std::to_string(f.sequence) +
                  ",\"id\":" + nlohmann::json(f.id).dump(-1, ' ', false, nlohmann::json::error_handler_t::replace);
  // nlohmann_json prints the double whatever the C locale's decimal point is.
  s += ",\"fps\":" + nlohmann::json(std::isfinite(f.fps) ? std::round(f.fps * 1000) / 1000 : 0.0).dump();
  const ServedRunStats& r = f.stats;
  s += ",\"latency_p50_us\":" + std::to_string(r.latency_p50_us) +
       ",\"latency_p99_us\":" + std::to_string(r.latency_p99_us) + ",\"processed\":" + std::to_string(r.processed) +
       ",\"drops_overflow\":" + std::to_string(r.drops_overflow) +
       ",\"drops_unpaired\":" + std::to_string(r.drops_unpaired) + ",\"failed\":" + std::to_string(r.failed);
  return {s.begin(), s.end()};
}

}  // namespace

ChannelSpec channel_spec(ServedChannel ch, bool depth_raw) {
  ChannelSpec s;
  s.id = static_cast<uint32_t>(ch) + 1;
  s.encoding = "cdr";
  s.schema_encoding = "ros2msg";
  s.schema_name = ros::kCompressedImageType;
  switch (ch) {
    case ServedChannel::Color:
      s.topic = "/depthmask/color";
      break;
    case ServedChannel::Mask:
      s.topic = "/depthmask/mask";
      break;
    case ServedChannel::Depth:
      s.topic = "/depthmask/depth";
      if (depth_raw) s.schema_name = ros::kImageType;
      break;
    case ServedChannel::Reason:
      s.topic = "/depthmask/reason";
      break;
    case ServedChannel::CameraInfo:
      s.topic = "/depthmask/camera_info";
      s.schema_name = ros::kCameraInfoType;
      break;
    case ServedChannel::Points:
      s.topic = "/depthmask/points";
      s.schema_name = ros::kPointCloud2Type;
      break;
    case ServedChannel::Stats:
      s.topic = "/depthmask/stats";
      s.encoding = "json";
      s.schema_encoding = "jsonschema";
      s.schema_name = "depthmask.LiveStats";
      s.schema =
          R"({"type":"object","properties":{"sequence":{"type":"integer"},"id":{"type":"string"},)"
          R"("fps":{"type":"number"},"latency_p50_us":{"type":"integer"},"latency_p99_us":{"type":"integer"},)"
          R"("processed":{"type":"integer"},"drops_overflow":{"type":"integer"},"drops_unpaired":{"type":"integer"},)"
          R"("failed":{"type":"integer"},"client_dropped":{"type":"integer"}}})";
      return s;
  }
  s.schema = ros::message_definition(s.schema_name);
  return s;
}

std::vector<uint8_t> encode_channel(ServedChannel ch, const ServedCopy& f, const ServeEncoding& e) {
  switch (ch) {
    case ServedChannel::Color: {
      std::vector<uint8_t> jpeg;
      cv::imencode(".jpg", f.color, jpeg, {cv::IMWRITE_JPEG_QUALITY, kJpegQuality});
      return ros::encode(compressed(f, e, "jpeg", std::move(jpeg)));
    }
    case ServedChannel::Mask:
      return ros::encode(compressed(f, e, "png", png8(kept_mask(f.depth, e.invalid))));
    case ServedChannel::Depth:
      return depth_message(f, e);
    case ServedChannel::Reason:
      return ros::encode(compressed(f, e, "png", png8(f.reason)));
    case ServedChannel::CameraInfo: {
      ros::CameraInfo ci = pinhole_camera_info(e.intrinsics, f.depth.cols, f.depth.rows);
      ci.header = header_of(f, e);
      return ros::encode(ci);
    }
    case ServedChannel::Points:
      return points_message(f, e);
    case ServedChannel::Stats:
      return stats_prefix(f);
  }
  return {};
}

std::vector<uint8_t> stats_for_client(const std::vector<uint8_t>& prefix, uint64_t client_dropped) {
  std::vector<uint8_t> out(prefix);
  const std::string tail = ",\"client_dropped\":" + std::to_string(client_dropped) + "}";
  out.insert(out.end(), tail.begin(), tail.end());
  return out;
}

cv::Mat kept_mask(const cv::Mat& depth, float invalid) {
  DM_EXPECT(depth.type() == CV_32FC1, std::invalid_argument, "kept_mask: expected CV_32FC1");
  const bool invalid_nan = std::isnan(invalid);
  cv::Mat kept(depth.size(), CV_8UC1);
  for (int y = 0; y < depth.rows; ++y) {
    const float* d = depth.ptr<float>(y);
    uint8_t* k = kept.ptr<uint8_t>(y);
    for (int x = 0; x < depth.cols; ++x) k[x] = (invalid_nan ? std::isnan(d[x]) : d[x] == invalid) ? 0 : 255;
  }
  return kept;
}

std::vector<float> served_points(const cv::Mat& depth, float invalid, const Intrinsics& k, size_t max_points,
                                 size_t* kept) {
  DM_EXPECT(depth.type() == CV_32FC1, std::invalid_argument, "served_points: expected CV_32FC1");
  const size_t total = count_kept(depth, invalid);
  if (kept) *kept = total;
  const size_t n = std::min(total, max_points);
  std::vector<float> xyz(n * 3);
  if (n == 0) return xyz;
  const Pinhole pin = make_pinhole(k.fx, k.fy, k.cx, k.cy);
  // The i-th point is kept pixel floor(i * total / n): every one when n == total, evenly spaced otherwise.
  size_t rank = 0, next = 0, i = 0;
  for (int v = 0; v < depth.rows && i < n; ++v) {
    const float* d = depth.ptr<float>(v);
    for (int u = 0; u < depth.cols && i < n; ++u) {
      if (!depth_kept(d[u], invalid)) continue;
      if (rank == next) {
        backproject_pixel(u, v, d[u], invalid, pin, &xyz[3 * i]);
        ++i;
        next = static_cast<size_t>((uint64_t{i} * total) / n);
      }
      ++rank;
    }
  }
  return xyz;
}

}  // namespace depthmask::detail
