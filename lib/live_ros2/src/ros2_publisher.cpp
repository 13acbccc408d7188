#include "depthmask/detail/ros2_publisher.h"

#include <cmath>
#include <cstring>
#include <limits>

#include "depthmask/cdr.h"
#include "depthmask/errors.h"
#include "depthmask/kernels/backproject.h"
#include "depthmask/ros_image.h"

namespace depthmask::detail {

struct Ros2Publisher::Impl {
  std::shared_ptr<DdsNode> node;
  std::unique_ptr<DdsWriter> depth, info, mask, reason, points;
  std::optional<Intrinsics> intrinsics;
  float invalid = 0;  // output.invalid: what a dropped pixel holds
  cv::Mat keep;       // reused: the mono8 mask plane
};

namespace {

CdrBytes shared(std::vector<uint8_t>&& v) { return std::make_shared<const std::vector<uint8_t>>(std::move(v)); }

// A mono8 / 32FC1 Image straight into CDR, the pixels copied once into the payload (no Image in between).
CdrBytes image_cdr(const cv::Mat& px, const ros::Header& header) {
  DM_EXPECT(px.type() == CV_32FC1 || px.type() == CV_8UC1, std::logic_error, "image_cdr: CV_32FC1 or CV_8UC1 only");
  const auto row = static_cast<size_t>(px.cols) * px.elemSize();
  ros::CdrWriter w;
  w.reserve(64 + header.frame_id.size() + row * static_cast<size_t>(px.rows));
  w.i32(header.stamp.sec);
  w.u32(header.stamp.nanosec);
  w.string(header.frame_id);
  w.u32(static_cast<uint32_t>(px.rows));
  w.u32(static_cast<uint32_t>(px.cols));
  w.string(px.type() == CV_32FC1 ? "32FC1" : "mono8");
  w.u8(0);  // little-endian
  w.u32(static_cast<uint32_t>(row));
  w.u32(static_cast<uint32_t>(row * static_cast<size_t>(px.rows)));
  std::vector<uint8_t>& buf = w.buffer();
  const size_t at = buf.size();
  buf.resize(at + row * static_cast<size_t>(px.rows));
  for (int y = 0; y < px.rows; ++y) std::memcpy(buf.data() + at + row * static_cast<size_t>(y), px.ptr(y), row);
  return shared(w.take());
}

ros::CameraInfo info_of(const Intrinsics& k, int width, int height, const ros::Header& header) {
  ros::CameraInfo c;
  c.header = header;
  c.width = static_cast<uint32_t>(width);
  c.height = static_cast<uint32_t>(height);
  c.distortion_model = "plumb_bob";
  c.d.assign(5, 0.0);
  const double kk[9] = {k.fx, 0, k.cx, 0, k.fy, k.cy, 0, 0, 1};
  std::memcpy(c.k, kk, sizeof kk);
  const double r[9] = {1, 0, 0, 0, 1, 0, 0, 0, 1};
  std::memcpy(c.r, r, sizeof r);
  const double p[12] = {k.fx, 0, k.cx, 0, 0, k.fy, k.cy, 0, 0, 0, 1, 0};
  std::memcpy(c.p, p, sizeof p);
  return c;
}

}  // namespace

ros::PointCloud2 depth_to_points(const cv::Mat& metres, const double k[9], const ros::Header& header, float invalid) {
  DM_EXPECT(metres.type() == CV_32FC1, std::logic_error, "depth_to_points needs CV_32FC1");
  ros::PointCloud2 pc;
  pc.header = header;
  pc.height = static_cast<uint32_t>(metres.rows);
  pc.width = static_cast<uint32_t>(metres.cols);
  pc.fields = {{"x", 0, 7, 1}, {"y", 4, 7, 1}, {"z", 8, 7, 1}};
  pc.point_step = 12;
  pc.row_step = 12 * pc.width;
  pc.data.resize(static_cast<size_t>(pc.row_step) * pc.height);
  const float nan = std::numeric_limits<float>::quiet_NaN();
  // The PLY output's rule (kernels/backproject.h), so a kept pixel's point equals its PLY vertex bit for bit.
  const Pinhole pin = make_pinhole(k[0], k[4], k[2], k[5]);
  auto* out = reinterpret_cast<float*>(pc.data.data());
  for (int v = 0; v < metres.rows; ++v) {
    const float* z = metres.ptr<float>(v);
    for (int u = 0; u < metres.cols; ++u, out += 3) {
      if (depth_kept(z[u], invalid))
        backproject_pixel(u, v, z[u], invalid, pin, out);
      else
        out[0] = out[1] = out[2] = nan;
    }
  }
  return pc;
}

Ros2Publisher::Ros2Publisher(Ros2PublishSpec spec, const Config& config)
    : spec_(std::move(spec)), impl_(std::make_unique<Impl>()) {
  Impl& m = *impl_;
  const std::string ns = "/" + spec_.node + "/";
  dds_topic_name(ns + "depth");  // a bad node name fails as a ConfigError
  try {
    m.node = DdsNode::open(spec_.domain, spec_.dds_config);
  } catch (const Error& e) {
    throw OutputError(std::string("cannot publish on ros2://") + spec_.node + " (live.publish): " + e.what());
  }
  m.depth = std::make_unique<DdsWriter>(m.node, ns + "depth", ros::kImageType, spec_.qos);
  m.info = std::make_unique<DdsWriter>(m.node, ns + "camera_info", ros::kCameraInfoType, spec_.qos);
  if (spec_.mask) m.mask = std::make_unique<DdsWriter>(m.node, ns + "mask", ros::kImageType, spec_.qos);
  if (spec_.reason) m.reason = std::make_unique<DdsWriter>(m.node, ns + "reason", ros::kImageType, spec_.qos);
  if (spec_.points) m.points = std::make_unique<DdsWriter>(m.node, ns + "points", ros::kPointCloud2Type, spec_.qos);
  m.intrinsics = config.input.intrinsics;
  m.invalid = config.output.invalid;
}

Ros2Publisher::~Ros2Publisher() = default;

bool Ros2Publisher::publish(const ros::Header& header, const ros::CameraInfo* info, const FrameSlot& slot) {
  Impl& m = *impl_;
  const cv::Mat& out = slot.out();
  bool any = false;
  if (m.depth->matched()) {
    m.depth->write(image_cdr(out, header));
    any = true;
  }
  std::optional<ros::CameraInfo> own;
  if (!info && m.intrinsics && m.intrinsics->valid()) {
    own = info_of(*m.intrinsics, out.cols, out.rows, header);
    info = &*own;
  }
  if (info && m.info->matched()) {
    ros::CameraInfo c = *info;
    c.header = header;
    m.info->write(shared(ros::encode(c)));
    any = true;
  }
  if (m.mask && m.mask->matched()) {
    // Kept where the masked depth is not output.invalid (NaN: where it is a number).
    if (std::isnan(m.invalid))
      cv::compare(out, out, m.keep, cv::CMP_EQ);
    else
      cv::compare(out, m.invalid, m.keep, cv::CMP_NE);
    m.mask->write(image_cdr(m.keep, header));
    any = true;
  }
  if (m.reason && m.reason->matched() && !slot.reason().empty()) {
    m.reason->write(image_cdr(slot.reason(), header));
    any = true;
  }
  if (m.points && m.points->matched() && info) {
    m.points->write(shared(ros::encode(depth_to_points(out, info->k, header, m.invalid))));
    any = true;
  }
  return any;
}

}  // namespace depthmask::detail
