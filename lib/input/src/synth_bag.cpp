// `depthmask synth --format mcap`: the synthetic sequence as a ROS 2 bag, recorded as a RealSense
// driver and a segmentation node would publish it: /camera/depth/image_rect_raw (16UC1 millimetres),
// /camera/color/image_raw (bgr8), /seg/mask (mono8 labels), /camera/depth/camera_info, 30 fps from
// 1700000000 s; one zstd-chunked MCAP file and its metadata.yaml (rosbag2 version 5).
#include <map>
#include <string>
#include <vector>

#include "depthmask/bag.h"
#include "depthmask/errors.h"
#include "depthmask/mcap.h"
#include "depthmask/ros_image.h"
#include "depthmask/ros_msgs.h"
#include "depthmask/synth.h"

namespace fs = std::filesystem;

namespace depthmask {

namespace {

ros::CameraInfo camera_info_of(const Intrinsics& k, const ros::Header& h) {
  ros::CameraInfo c;
  c.header = h;
  c.width = static_cast<uint32_t>(k.width);
  c.height = static_cast<uint32_t>(k.height);
  c.distortion_model = "plumb_bob";
  c.d.assign(5, 0.0);
  const double km[9] = {k.fx, 0, k.cx, 0, k.fy, k.cy, 0, 0, 1};
  const double rm[9] = {1, 0, 0, 0, 1, 0, 0, 0, 1};
  const double pm[12] = {k.fx, 0, k.cx, 0, 0, k.fy, k.cy, 0, 0, 0, 1, 0};
  std::copy(km, km + 9, c.k);
  std::copy(rm, rm + 9, c.r);
  std::copy(pm, pm + 12, c.p);
  return c;
}

}  // namespace

void write_synthetic_bag(const fs::path& dir, int frames, int width, int height, bool color,
                         const std::string& compression) {
  mcap::WriterOptions options;
  if (compression == "lz4") {
    options.compression = mcap::Compression::Lz4;
  } else if (compression == "none") {
    options.compression = mcap::Compression::None;
  } else {
    DM_EXPECT(compression == "zstd", ConfigError,
              "a synthetic bag's compression '" << compression << "': expected zstd, lz4 or none");
  }
  fs::create_directories(dir);
  const std::string file = "synthetic_0.mcap";
  mcap::Writer w(dir / file, options);
  std::vector<bag::TopicSpec> topics = {{"/camera/depth/image_rect_raw", ros::kImageType, ""},
                                        {"/seg/mask", ros::kImageType, ""},
                                        {"/camera/depth/camera_info", ros::kCameraInfoType, ""}};
  if (color) topics.push_back({"/camera/color/image_raw", ros::kImageType, ""});
  std::map<std::string, uint16_t> schema, channel;
  for (const bag::TopicSpec& t : topics) {
    if (!schema.count(t.type)) schema[t.type] = w.add_schema(t.type, "ros2msg", ros::message_definition(t.type));
    channel[t.name] =
        w.add_channel(schema[t.type], t.name, "cdr", {{"offered_qos_profiles", bag::default_offered_qos_profiles()}});
  }
  const Intrinsics k = synthetic_intrinsics(width, height);
  constexpr int64_t kStart = 1700000000LL * 1000000000LL;
  int64_t last = kStart;
  auto put = [&](const std::string& topic, int64_t t, const std::vector<uint8_t>& cdr) {
    w.write(channel.at(topic), static_cast<uint64_t>(t), static_cast<uint64_t>(t), cdr.data(), cdr.size());
  };
  for (int i = 0; i < frames; ++i) {
    const SyntheticFrame f = render_synthetic_frame(i, width, height);
    const int64_t t = kStart + int64_t{i} * 1000000000LL / 30;
    ros::Header h{ros::Time::from_nanoseconds(t), "camera_depth_optical_frame"};
    put("/camera/depth/camera_info", t, ros::encode(camera_info_of(k, h)));
    put("/camera/depth/image_rect_raw", t, ros::encode(ros::pixels_to_image(f.depth_mm, h)));
    h.frame_id = "camera_color_optical_frame";
    if (color) put("/camera/color/image_raw", t, ros::encode(ros::pixels_to_image(f.color, h)));
    put("/seg/mask", t, ros::encode(ros::pixels_to_image(f.mask, h)));
    last = t;
  }
  w.close();
  std::vector<std::pair<bag::TopicSpec, uint64_t>> counted;
  counted.reserve(topics.size());
  for (const bag::TopicSpec& t : topics) counted.emplace_back(t, static_cast<uint64_t>(frames));
  bag::write_metadata(dir, {{file, kStart, last - kStart, static_cast<uint64_t>(frames) * topics.size()}}, counted);
}

}  // namespace depthmask
