#include "depthmask/detail/ros2_subscriber.h"

#include <cmath>
#include <cstdlib>
#include <sstream>

#include "depthmask/detail/log.h"
#include "depthmask/errors.h"
#include "depthmask/frame.h"
#include "depthmask/image_reader.h"
#include "depthmask/ros_image.h"

namespace depthmask::detail {
namespace {

using Clock = std::chrono::steady_clock;
constexpr size_t kMaxPendingDepth = 8;
constexpr size_t kMaxPartnerMessages = 32;

bool ends_with(const std::string& s, const std::string& tail) {
  return s.size() >= tail.size() && s.compare(s.size() - tail.size(), tail.size(), tail) == 0;
}

struct PendingDepth {
  int64_t stamp = 0;
  Clock::time_point arrived;
  ros::Header header;
  ros::DecodedImage image;
};

struct PartnerMessage {
  int64_t stamp = 0;
  cv::Mat pixels;
};

// A partner topic (colour or a mask): its reader and the messages waiting for a depth message.
struct Partner {
  std::string topic;
  ros::PixelRole role;
  std::unique_ptr<DdsReader> reader;
  std::deque<PartnerMessage> waiting;  // in arrival order (a topic's stamps rise)
};

}  // namespace

bool is_compressed_topic(const std::string& topic) {
  return ends_with(topic, "/compressed") || ends_with(topic, "/compressedDepth");
}

struct Ros2Subscriber::Impl {
  Ros2SourceSpec spec;
  int64_t tolerance_ns;
  Clock::duration pair_wait;
  size_t max_pixels;
  MaskParams mask_params;
  std::shared_ptr<DdsNode> node;
  std::unique_ptr<DdsReader> depth, info;
  std::vector<Partner> partners;  // colour first (when asked for), then the masks
  std::unique_ptr<DdsWaitSet> waitset;
  std::deque<PendingDepth> pending;
  std::shared_ptr<const ros::CameraInfo> camera_info;
  Clock::time_point last_depth;
  uint64_t received = 0;

  // One image message as pixels of `role`; InputError naming the topic when it does not decode.
  ros::DecodedImage decode(const CdrBytes& b, const std::string& topic, ros::PixelRole role, ros::Header& header) {
    const std::string what = "message " + std::to_string(received) + " of " + topic;
    if (is_compressed_topic(topic)) {
      const ros::CompressedImage m = ros::decode_compressed_image(b->data(), b->size(), what);
      header = m.header;
      return ros::compressed_to_pixels(m, role, max_pixels, what);
    }
    // The pixels are copied once, from the DDS sample into the frame's matrix.
    const ros::ImageView m = ros::decode_image_view(b->data(), b->size(), what);
    header = m.header;
    return ros::image_to_pixels(m, role, max_pixels, what);
  }

  bool pair(Ros2Frame& out, uint64_t& unpaired);
  void fill(Ros2Frame& out, PendingDepth& d, const std::vector<size_t>& pick);
};

// Decides the oldest pending depth messages whose partners are known (or whose wait ran out); the
// first complete one becomes `out`.
bool Ros2Subscriber::Impl::pair(Ros2Frame& out, uint64_t& unpaired) {
  const auto now = Clock::now();
  std::vector<size_t> pick(partners.size());
  while (!pending.empty()) {
    PendingDepth& d = pending.front();
    bool settled = true, complete = true;
    for (size_t k = 0; k < partners.size(); ++k) {
      const std::deque<PartnerMessage>& w = partners[k].waiting;
      size_t best = w.size();
      for (size_t i = 0; i < w.size(); ++i)
        if (std::llabs(w[i].stamp - d.stamp) <= tolerance_ns &&
            (best == w.size() || std::llabs(w[i].stamp - d.stamp) < std::llabs(w[best].stamp - d.stamp)))
          best = i;
      pick[k] = best;
      complete = complete && best < w.size();
      settled = settled && !w.empty() && w.back().stamp >= d.stamp;
    }
    if (!settled && now - d.arrived < pair_wait) return false;
    if (!complete) {
      pending.pop_front();
      ++unpaired;
      continue;
    }
    PendingDepth taken = std::move(d);
    pending.pop_front();
    fill(out, taken, pick);
    return true;
  }
  return false;
}

// `out` from depth message `d` and the partner messages `pick` chose (taken, with the older ones of
// their topics: no later depth message is closer to those).
void Ros2Subscriber::Impl::fill(Ros2Frame& out, PendingDepth& d, const std::vector<size_t>& pick) {
  out.depth = std::move(d.image.pixels);
  out.depth_encoding = d.image.encoding;
  out.header = std::move(d.header);
  out.camera_info = camera_info;
  out.color.release();
  out.mask.release();
  const size_t masks = spec.masks.size();
  out.mask_tests = masks > 1;
  if (out.mask_tests) out.mask = cv::Mat::zeros(out.depth.size(), CV_8UC1);
  for (size_t k = 0; k < partners.size(); ++k) {
    Partner& p = partners[k];
    cv::Mat px = std::move(p.waiting[pick[k]].pixels);
    p.waiting.erase(p.waiting.begin(), p.waiting.begin() + static_cast<std::ptrdiff_t>(pick[k] + 1));
    if (p.role == ros::PixelRole::Color) {
      out.color = std::move(px);
    } else if (!out.mask_tests) {
      out.mask = std::move(px);
    } else {
      DM_EXPECT(px.size() == out.mask.size(), InputError,
                "ros2 source: mask topic " << p.topic << " is " << px.cols << "x" << px.rows
                                           << "; expected the depth's " << out.mask.cols << "x" << out.mask.rows);
      or_mask_tests(px, mask_params, out.mask);
    }
  }
}

Ros2Subscriber::Ros2Subscriber(Ros2SourceSpec spec, const Config& config) : impl_(std::make_unique<Impl>()) {
  Impl& m = *impl_;
  m.spec = std::move(spec);
  m.tolerance_ns = static_cast<int64_t>(std::llround(config.input.max_time_diff * 1e9));
  m.pair_wait = std::chrono::duration_cast<Clock::duration>(std::chrono::duration<double>(config.live.pair_wait));
  m.max_pixels = input_limits(config).max_image_pixels;
  m.mask_params = mask_params(config);
  dds_topic_name(m.spec.depth);  // a bad name fails now, not at open()
  DM_EXPECT(m.spec.masks.size() <= 8, ConfigError, "ros2:// takes at most 8 mask topics");
}

Ros2Subscriber::~Ros2Subscriber() = default;

void Ros2Subscriber::open() {
  Impl& m = *impl_;
  m.pending.clear();
  for (Partner& p : m.partners) p.waiting.clear();
  m.last_depth = Clock::now();
  // A reopen after a stall keeps the readers: DDS rediscovers a driver that comes back by itself, and
  // new readers would only lose what is in flight.
  if (m.depth) return;
  m.waitset.reset();
  m.partners.clear();
  m.depth.reset();
  m.info.reset();
  m.pending.clear();
  m.node = DdsNode::open(m.spec.domain, m.spec.dds_config);
  auto image_type = [](const std::string& t) {
    return is_compressed_topic(t) ? ros::kCompressedImageType : ros::kImageType;
  };
  m.depth = std::make_unique<DdsReader>(m.node, m.spec.depth, image_type(m.spec.depth), m.spec.qos);
  m.waitset = std::make_unique<DdsWaitSet>(*m.node);
  m.waitset->attach(*m.depth);
  auto add = [&](const std::string& topic, ros::PixelRole role) {
    Partner p{topic, role, std::make_unique<DdsReader>(m.node, topic, image_type(topic), m.spec.qos), {}};
    m.waitset->attach(*p.reader);
    m.partners.push_back(std::move(p));
  };
  if (!m.spec.color.empty()) add(m.spec.color, ros::PixelRole::Color);
  for (const std::string& t : m.spec.masks) add(t, ros::PixelRole::Mask);
  if (!m.spec.camera_info.empty()) {
    // camera_info is published reliably by drivers; a best-effort reader matches either.
    m.info = std::make_unique<DdsReader>(m.node, m.spec.camera_info, ros::kCameraInfoType, Ros2Qos::SensorData);
    m.waitset->attach(*m.info);
  }
}

std::chrono::steady_clock::duration Ros2Subscriber::silent_for() const { return Clock::now() - impl_->last_depth; }

bool Ros2Subscriber::next(Ros2Frame& out, std::chrono::milliseconds timeout) {
  Impl& m = *impl_;
  DM_EXPECT(m.depth, std::logic_error, "ros2 source: next() before open()");
  const auto deadline = Clock::now() + timeout;
  for (;;) {
    // Take what arrived; a message that does not decode is refused and counted.
    auto refuse = [&](const std::string& topic, const std::exception& e) {
      const uint64_t n = ++refused_;
      if (n <= 5 || n % 100 == 0)
        detail::log().warn("ros2 source: refused a message on {}: {}{}", topic, e.what(),
                           n == 5 ? " (further refusals: every 100th)" : "");
    };
    m.depth->take([&](const CdrBytes& b) {
      ++m.received;
      m.last_depth = Clock::now();
      try {
        PendingDepth d;
        d.image = m.decode(b, m.spec.depth, ros::PixelRole::Depth, d.header);
        d.stamp = d.header.stamp.nanoseconds();
        d.arrived = m.last_depth;
        m.pending.push_back(std::move(d));
        if (m.pending.size() > kMaxPendingDepth) {
          m.pending.pop_front();
          ++unpaired_;
        }
      } catch (const Error& e) {
        refuse(m.spec.depth, e);
      }
    });
    for (Partner& p : m.partners)
      p.reader->take([&](const CdrBytes& b) {
        ++m.received;
        try {
          ros::Header h;
          PartnerMessage pm;
          pm.pixels = m.decode(b, p.topic, p.role, h).pixels;
          pm.stamp = h.stamp.nanoseconds();
          p.waiting.push_back(std::move(pm));
          if (p.waiting.size() > kMaxPartnerMessages) {
            p.waiting.pop_front();
            ++unpaired_;
          }
        } catch (const Error& e) {
          refuse(p.topic, e);
        }
      });
    if (m.info)
      m.info->take([&](const CdrBytes& b) {
        try {
          m.camera_info = std::make_shared<const ros::CameraInfo>(
              ros::decode_camera_info(b->data(), b->size(), "a message of " + m.spec.camera_info));
        } catch (const Error& e) {
          refuse(m.spec.camera_info, e);
        }
      });
    try {
      if (m.pair(out, unpaired_)) return true;
    } catch (const Error& e) {
      refuse(m.spec.depth, e);
      continue;
    }
    const auto now = Clock::now();
    if (now >= deadline) return false;
    // Wake for new data, or when the oldest pending depth message's wait runs out.
    auto until = deadline;
    if (!m.pending.empty()) until = std::min(until, m.pending.front().arrived + m.pair_wait);
    const auto wait = std::chrono::duration_cast<std::chrono::milliseconds>(until - now) + std::chrono::milliseconds(1);
    m.waitset->wait(wait);
  }
}

std::string Ros2Subscriber::describe() const {
  const Ros2SourceSpec& s = impl_->spec;
  std::ostringstream os;
  os << "ros2 source: depth " << s.depth;
  if (!s.color.empty()) os << ", colour " << s.color;
  for (const std::string& t : s.masks) os << ", mask " << t;
  if (!s.camera_info.empty()) os << ", camera_info " << s.camera_info;
  os << " (domain " << s.domain << ", qos " << to_string(s.qos) << ")";
  return os.str();
}

}  // namespace depthmask::detail
