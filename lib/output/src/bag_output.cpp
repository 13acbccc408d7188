// output.format mcap (bag_output.h): a frame's messages, this run's part, the lock around the parts.
#include "depthmask/bag_output.h"

#include <fcntl.h>
#include <sys/file.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cmath>
#include <cstdio>
#include <cstring>
#include <optional>
#include <system_error>

#include "bag_parts.h"
#include "depthmask/atomic_file.h"
#include "depthmask/detail/bag_frame.h"
#include "depthmask/detail/log.h"
#include "depthmask/errors.h"
#include "depthmask/layouts.h"
#include "depthmask/mcap.h"
#include "depthmask/ros_image.h"
#include "depthmask/ros_msgs.h"

namespace fs = std::filesystem;

namespace depthmask {

bool writes_bag(const Config& c) {
  const auto& f = c.output.formats;
  return std::find(f.begin(), f.end(), OutputFormat::Mcap) != f.end();
}

std::vector<bag::TopicSpec> bag_topics(const Config& c) {
  const OutputConfig::Mcap& o = c.output.mcap;
  const std::string ns = o.ns == "/" ? "" : o.ns;
  std::vector<bag::TopicSpec> t{{ns + "/depth", ros::kImageType, ""}, {ns + "/camera_info", ros::kCameraInfoType, ""}};
  if (o.mask) t.push_back({ns + "/mask", ros::kImageType, ""});
  if (o.reason) t.push_back({ns + "/reason", ros::kImageType, ""});
  if (o.compressed_depth) t.push_back({ns + "/depth/compressedDepth", ros::kCompressedImageType, ""});
  return t;
}

namespace {

// The topics' places in bag_topics' order.
struct TopicIndex {
  uint8_t mask = 0, reason = 0, compressed = 0;  // 0: not written (depth is 0, camera_info 1)
  explicit TopicIndex(const OutputConfig::Mcap& o) {
    uint8_t next = 2;
    if (o.mask) mask = next++;
    if (o.reason) reason = next++;
    if (o.compressed_depth) compressed = next++;
  }
};

// The frame's header: the bag input's depth header, else its timestamp (or index / fps) and
// output.mcap.frame_id.
ros::Header frame_header(const Config& c, const FrameEntry& f) {
  if (f.bag) return f.bag->header;
  ros::Header h;
  const double seconds = f.timestamp >= 0 ? f.timestamp : static_cast<double>(f.index) / c.output.mcap.fps;
  h.stamp = ros::Time::from_nanoseconds(std::llround(seconds * 1e9));
  h.frame_id = c.output.mcap.frame_id;
  return h;
}

bool is_dropped(float v, float invalid, bool invalid_nan) { return invalid_nan ? std::isnan(v) : v == invalid; }

}  // namespace

ros::CameraInfo pinhole_camera_info(const std::optional<Intrinsics>& k, int width, int height) {
  ros::CameraInfo ci;
  ci.width = static_cast<uint32_t>(width);
  ci.height = static_cast<uint32_t>(height);
  ci.distortion_model = "plumb_bob";
  ci.r[0] = ci.r[4] = ci.r[8] = 1;
  if (k) {  // else K all zero: "uncalibrated", as ROS reads it
    ci.k[0] = k->fx, ci.k[2] = k->cx, ci.k[4] = k->fy, ci.k[5] = k->cy, ci.k[8] = 1;
    ci.p[0] = k->fx, ci.p[2] = k->cx, ci.p[5] = k->fy, ci.p[6] = k->cy, ci.p[10] = 1;
  }
  return ci;
}

struct BagOutput::Impl {
  const Config& c;
  std::string shard_tag;
  std::vector<bag::TopicSpec> topics;
  TopicIndex index;
  bool keep_invalid;  // output.invalid set by the user: written as is, else NaN (REP 118)
  std::unique_ptr<mcap::Writer> writer;
  std::vector<uint16_t> channels;
  uint64_t messages = 0;
  fs::path path;
  // What close() will tell finalize_bag: per topic (bag_topics' order) the messages, the time order.
  std::vector<uint64_t> counts;
  bool time_ordered = true;
  uint64_t first_ns = 0, last_ns = 0;
  std::optional<ClosedPart> closed;

  Impl(const Config& cfg, std::string tag)
      : c(cfg),
        shard_tag(std::move(tag)),
        topics(bag_topics(cfg)),
        index(cfg.output.mcap),
        keep_invalid(cfg.is_set_by_user("output.invalid")),
        counts(topics.size(), 0) {}

  void open() {
    path = c.output.dir / detail::bag_part_name(detail::next_bag_part_seq(c.output.dir), shard_tag);
    mcap::WriterOptions o;
    o.chunk_size = uint64_t{1} << 30;  // one chunk per frame: append() closes it
    writer = std::make_unique<mcap::Writer>(path, o);
    std::vector<std::pair<std::string, uint16_t>> schemas;
    for (const bag::TopicSpec& t : topics) {
      auto s = std::find_if(schemas.begin(), schemas.end(), [&](const auto& p) { return p.first == t.type; });
      if (s == schemas.end()) {
        schemas.emplace_back(t.type, writer->add_schema(t.type, "ros2msg", ros::message_definition(t.type)));
        s = schemas.end() - 1;
      }
      channels.push_back(writer->add_channel(s->second, t.name, "cdr",
                                             {{"offered_qos_profiles", bag::default_offered_qos_profiles()}}));
    }
    detail::log().info("output.format mcap: this run's frames go to {}", path.filename().string());
  }
};

BagOutput::BagOutput(const Config& c, std::string shard_tag) : impl_(std::make_unique<Impl>(c, std::move(shard_tag))) {}

BagOutput::~BagOutput() {
  try {
    close();
  } catch (const std::exception& e) {
    detail::log().error("the bag part '{}' was not finished: {}", impl_->path.string(), e.what());
  }
}

std::vector<BagMessage> BagOutput::encode(const FrameEntry& f, const FrameSlot& slot) const {
  const Impl& m = *impl_;
  const Config& c = m.c;
  const ros::Header header = frame_header(c, f);
  const uint64_t t = static_cast<uint64_t>(std::max<int64_t>(0, header.stamp.nanoseconds()));
  const cv::Mat& out = slot.out();
  DM_EXPECT(!out.empty() && out.type() == CV_32FC1, std::logic_error, "BagOutput::encode() before run_mask()");
  const float invalid = c.output.invalid;
  const bool invalid_nan = std::isnan(invalid);
  cv::Mat depth = out;
  if (!m.keep_invalid && !invalid_nan) {
    depth = out.clone();
    depth.forEach<float>([&](float& v, const int*) {
      if (v == invalid) v = std::numeric_limits<float>::quiet_NaN();
    });
  }
  std::vector<BagMessage> msgs;
  msgs.push_back({0, t, ros::encode(ros::pixels_to_image(depth, header))});
  ros::CameraInfo ci = f.bag && f.bag->camera_info ? *f.bag->camera_info
                                                   : pinhole_camera_info(frame_intrinsics(c, f), out.cols, out.rows);
  ci.header = header;
  msgs.push_back({1, t, ros::encode(ci)});
  if (m.index.mask) {
    cv::Mat kept(out.size(), CV_8UC1);
    for (int y = 0; y < out.rows; ++y) {
      const float* d = out.ptr<float>(y);
      uint8_t* k = kept.ptr<uint8_t>(y);
      for (int x = 0; x < out.cols; ++x) k[x] = is_dropped(d[x], invalid, invalid_nan) ? 0 : 255;
    }
    msgs.push_back({m.index.mask, t, ros::encode(ros::pixels_to_image(kept, header))});
  }
  if (m.index.reason) {
    const cv::Mat& reason = slot.reason();
    DM_EXPECT(!reason.empty() && reason.size() == out.size(), std::logic_error,
              "output.mcap.reason without the slot's reason pass (FrameSlot::set_reason)");
    msgs.push_back({m.index.reason, t, ros::encode(ros::pixels_to_image(reason, header))});
  }
  if (m.index.compressed) {
    msgs.push_back({m.index.compressed, t, ros::encode(ros::depth_to_compressed_depth(depth, header))});
  }
  const uint32_t key = bag_frame_key(f.id);
  for (BagMessage& msg : msgs) msg.frame_key = key;
  return msgs;
}

uint32_t bag_frame_key(const std::string& frame_id) { return crc32_of(frame_id.data(), frame_id.size()); }

void BagOutput::open() {
  if (!impl_->writer) impl_->open();
}

void BagOutput::append(std::vector<BagMessage>&& messages) {
  Impl& m = *impl_;
  if (!m.writer) m.open();
  for (const BagMessage& msg : messages) {
    m.writer->write(m.channels.at(msg.topic), msg.time_ns, msg.time_ns, msg.data.data(), msg.data.size(),
                    msg.frame_key);
    if (m.messages == 0) m.first_ns = msg.time_ns;
    m.time_ordered = m.time_ordered && (m.messages == 0 || msg.time_ns >= m.last_ns);
    m.last_ns = std::max(m.last_ns, msg.time_ns);
    ++m.counts.at(msg.topic);
    ++m.messages;
  }
  m.writer->flush(m.c.output.fsync);
}

void BagOutput::close() {
  Impl& m = *impl_;
  if (!m.writer) return;
  const std::unique_ptr<mcap::Writer> w = std::move(m.writer);  // closed once, whatever close() throws
  w->close();
  if (m.messages == 0) {
    std::error_code ec;
    fs::remove(m.path, ec);
    return;
  }
  ClosedPart part{m.path, m.time_ordered, m.messages, m.first_ns, m.last_ns, {}};
  for (size_t t = 0; t < m.topics.size(); ++t)
    if (m.counts[t] > 0) part.topics.emplace_back(m.topics[t], m.counts[t]);
  m.closed = std::move(part);
}

const std::optional<ClosedPart>& BagOutput::closed_part() const { return impl_->closed; }

// The lock file may be removed by a merge that held it (remove_file): a holder that locked the file
// it opened before that removal holds a lock on a name nobody else sees, so it takes the lock again
// on the file now at the name (POSIX flock idiom: the fd's inode must be the path's).
BagLock::BagLock(const fs::path& dir, Mode mode) : file_(dir / detail::kBagLockName) {
  for (;;) {
    const int fd = ::open(file_.c_str(), O_RDWR | O_CREAT | O_CLOEXEC, 0644);
    DM_EXPECT(fd >= 0, OutputError, "cannot open the bag's lock '" << file_.string() << "': " << std::strerror(errno));
    const int op = mode == Mode::Shared ? LOCK_SH : LOCK_EX | LOCK_NB;
    int rc = 0;
    while ((rc = ::flock(fd, op)) != 0 && errno == EINTR) {
    }
    if (rc != 0) {
      const int err = errno;
      ::close(fd);
      DM_EXPECT(mode == Mode::TryExclusive && err == EWOULDBLOCK, OutputError,
                "cannot lock '" << file_.string() << "': " << std::strerror(err));
      return;  // a run writes a part
    }
    struct stat held {};
    struct stat named {};
    if (::fstat(fd, &held) == 0 && ::stat(file_.c_str(), &named) == 0 && held.st_dev == named.st_dev &&
        held.st_ino == named.st_ino) {
      fd_ = fd;
      return;
    }
    ::close(fd);  // removed (or replaced) while this waited: lock the one at the name
  }
}

void BagLock::remove_file() {
  if (fd_ < 0) return;
  std::error_code ec;
  fs::remove(file_, ec);
  if (ec) detail::log().warn("could not remove the bag's lock '{}': {}", file_.string(), ec.message());
}

BagLock::~BagLock() {
  if (fd_ >= 0) ::close(fd_);
}

}  // namespace depthmask
