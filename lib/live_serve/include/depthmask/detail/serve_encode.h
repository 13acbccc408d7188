// What `live --serve` sends per frame: the channels (their topics, types and schemas) and each
// channel's message, encoded once for all clients (docs/LIVE.md, "Watching it live: --serve").
#pragma once

#include <opencv2/core.hpp>

#include <cstddef>
#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "depthmask/detail/foxglove_protocol.h"
#include "depthmask/intrinsics.h"
#include "depthmask/live_server.h"

namespace depthmask::detail {

// The served channels; a channel's id on the wire is its value + 1.
enum class ServedChannel : uint8_t { Color, Mask, Depth, Reason, CameraInfo, Points, Stats };
inline constexpr int kServedChannels = 7;
inline constexpr size_t kMaxServedPoints = 50000;

// What the encoder needs of the configuration.
struct ServeEncoding {
  float invalid = 0;                     // output.invalid: the depth's dropped pixels
  bool depth_raw = false;                // live.serve_depth raw: Image 32FC1, else 16-bit millimetre PNG
  std::optional<Intrinsics> intrinsics;  // input.intrinsics: camera_info's K and the points
  std::string frame_id;                  // output.mcap.frame_id
};

// A served frame as the encoder holds it (copied from the runner's slot).
struct ServedCopy {
  std::string id;
  uint64_t sequence = 0;
  uint64_t stamp_ns = 0;  // the capture time, wall clock
  cv::Mat depth, color, reason;
  ServedRunStats stats;
  double fps = 0;  // frames processed per second since the previous served frame
};

// The channel's advertisement (topic, encoding, schema) under `id`.
ChannelSpec channel_spec(ServedChannel ch, bool depth_raw);

// The channel's message for `f` (CDR for the ROS types, JSON text for stats without its closing
// client_dropped field: stats_for_client completes it).
std::vector<uint8_t> encode_channel(ServedChannel ch, const ServedCopy& f, const ServeEncoding& e);

// The stats message of one client: `prefix` (encode_channel's Stats bytes) with its own drop count.
std::vector<uint8_t> stats_for_client(const std::vector<uint8_t>& prefix, uint64_t client_dropped);

// 255 where the output keeps the pixel (not output.invalid; not NaN when invalid is NaN), as the
// bag's /depthmask/mask; 0 elsewhere.
cv::Mat kept_mask(const cv::Mat& depth, float invalid);

// The kept pixels (depth_kept) back-projected (backproject_pixel), row-major: all of them when at
// most `max_points`, else max_points of them evenly spaced in that order (the i-th is the
// floor(i * kept / max_points)-th kept pixel). x, y, z per point; `kept` receives the kept count.
std::vector<float> served_points(const cv::Mat& depth, float invalid, const Intrinsics& k, size_t max_points,
                                 size_t* kept = nullptr);

}  // namespace depthmask::detail
