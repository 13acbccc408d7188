// rosbag2 bags (input.layout rosbag2): a folder with metadata.yaml and its .mcap / .db3 files, or a
// lone .mcap file (depthmask/bag.h reads them). The bag is scanned once: every image message's header
// and every CameraInfo, no pixels.
//
// Topics: input.topics.{depth,color,mask,camera_info}, or detected by message type and encoding
// first, names second (topic_roles below). Frames: one per depth message whose stamp pairs with a
// message of every mask topic (and, when there is a colour topic, with one of it, else the frame has
// no colour) within input.max_time_diff, by TUM's associate.py rule (nearest first, each message
// used once). Unpaired messages are counted like a TUM sequence's unmatched files. The frame id is the
// depth stamp in nanoseconds, 19 digits; a repeated stamp gets "-1", "-2" ...; a stamp of 0 uses the
// message's log time, with a warning. The camera_info of a frame is the latest at or before its stamp.
#include <algorithm>
#include <cstdio>
#include <map>
#include <set>

#include "depthmask/bag.h"
#include "depthmask/detail/bag_frame.h"
#include "depthmask/detail/layout_readers.h"
#include "depthmask/detail/log.h"
#include "depthmask/errors.h"
#include "depthmask/ros_msgs.h"

namespace fs = std::filesystem;

namespace depthmask::detail {
namespace {
// What the listing's scan keeps of the chunks it decompressed, for the first frames' reads.
constexpr uint64_t kKeptChunkBytes = uint64_t{128} << 20;
}  // namespace

std::string stamp_id(int64_t stamp_ns) {
  char buf[32];
  std::snprintf(buf, sizeof buf, "%019lld", static_cast<long long>(stamp_ns));
  return buf;
}

std::string describe_message(const bag::Reader& bag, const BagImageMessage& m) {
  char stamp[48];
  std::snprintf(stamp, sizeof stamp, "%lld.%09lld", static_cast<long long>(m.stamp_ns / 1000000000),
                static_cast<long long>(m.stamp_ns % 1000000000));
  std::string s = "bag '" + bag.path().string() + "' topic " + m.topic + ", stamp " + stamp + " s";
  if (m.ref.file < bag.files().size()) s += " (" + bag.files()[m.ref.file].path.filename().string() + ")";
  return s;
}

ros::DecodedImage decode_bag_image(const BagFrame& b, const BagImageMessage& m, ros::PixelRole role, size_t max_pixels,
                                   const ros::PixelAllocator& alloc) {
  const std::string what = describe_message(*b.bag, m);
  const bag::Payload payload = b.bag->view(m.ref);
  if (m.compressed)
    return ros::compressed_to_pixels(ros::decode_compressed_image(payload.data, payload.size, what), role, max_pixels,
                                     what);
  return ros::image_to_pixels(ros::decode_image_view(payload.data, payload.size, what), role, max_pixels, what, alloc);
}

namespace {

// One image message as the scan saw it.
struct Seen {
  int64_t stamp = 0;
  int64_t log_time = 0;
  bag::MessageRef ref;
  std::string frame_id;  // header.frame_id (depth: the output bag copies the header)
};

// What the scan learnt of one topic.
struct TopicScan {
  std::string kind;      // "image", "compressed", "camera_info", "other"
  std::string encoding;  // the first message's encoding (Image) or format (CompressedImage)
  std::vector<Seen> images;
  std::vector<std::pair<int64_t, ros::CameraInfo>> infos;
};

bool contains(const std::string& s, const char* word) { return s.find(word) != std::string::npos; }
bool mask_like(const std::string& topic) {
  return contains(topic, "mask") || contains(topic, "label") || contains(topic, "seg");
}

void scan_messages(bag::Reader& bag, const std::vector<TopicScan*>& by_index);

std::map<std::string, TopicScan> scan_bag(bag::Reader& bag, std::vector<std::string>& damaged) {
  std::map<std::string, TopicScan> out;
  std::vector<TopicScan*> by_index;
  for (const bag::Topic& t : bag.topics()) {
    TopicScan& s = out[t.name];
    s.kind = t.type == ros::kImageType             ? "image"
             : t.type == ros::kCompressedImageType ? "compressed"
             : t.type == ros::kCameraInfoType      ? "camera_info"
                                                   : "other";
    by_index.push_back(&s);
  }
  // Damage stops the scan; the messages before it make frames, and the run reports the damage.
  try {
    scan_messages(bag, by_index);
  } catch (const InputError& e) {
    damaged.push_back(std::string(e.what()) + "; the frames before it are listed, the rest of the bag is not read");
    detail::log().error("{}", damaged.back());
  }
  return out;
}

void scan_messages(bag::Reader& bag, const std::vector<TopicScan*>& by_index) {
  bag.scan([&](const bag::MessageInfo& m, const uint8_t* data, size_t size) {
    TopicScan& s = *by_index.at(m.topic);
    const std::string& topic = bag.topics()[m.topic].name;
    const std::string what = "bag '" + bag.path().string() + "' topic " + topic;
    if (s.kind == "image" || s.kind == "compressed") {
      const ros::Header h = ros::decode_header(data, size, what);
      if (s.images.empty()) {
        s.encoding = s.kind == "image" ? ros::decode_image_view(data, size, what).encoding
                                       : ros::decode_compressed_image(data, size, what).format;
      }
      s.images.push_back({h.stamp.nanoseconds(), m.log_time, m.ref, h.frame_id});
    } else if (s.kind == "camera_info") {
      ros::CameraInfo info = ros::decode_camera_info(data, size, what);
      s.infos.emplace_back(info.header.stamp.nanoseconds(), std::move(info));
    }
    return true;
  });
}

enum class Role { None, Depth, Mask, Color };

// A topic's role by its messages, then its name (mask, label, seg: a mask; IR streams are mono8 too,
// so a mono8 topic is a mask only by its name).
Role role_of(const std::string& topic, const TopicScan& s) {
  const std::string& e = s.encoding;
  if (s.kind == "image") {
    if (e == "32FC1") return Role::Depth;
    if (e == "16UC1" || e == "mono16") return mask_like(topic) ? Role::Mask : Role::Depth;
    if (e == "mono8" || e == "8UC1") return mask_like(topic) ? Role::Mask : Role::None;
    if (e == "rgb8" || e == "bgr8" || e == "rgba8" || e == "bgra8") return Role::Color;
    return Role::None;
  }
  if (s.kind == "compressed") {
    if (contains(e, "compressedDepth")) return Role::Depth;
    return mask_like(topic) ? Role::Mask : Role::Color;
  }
  return Role::None;
}

// Of several candidates, the one whose name ranks first (`ranked` substrings, best first), then the
// first by name.
std::string pick(std::vector<std::string> candidates, std::initializer_list<const char*> ranked) {
  std::sort(candidates.begin(), candidates.end());
  for (const char* want : ranked)
    for (const std::string& c : candidates)
      if (contains(c, want)) return c;
  return candidates.front();
}

// The length of the common folder prefix of two topic names ("/camera/depth/x", "/camera/depth/y": 2).
size_t shared_folders(const std::string& a, const std::string& b) {
  size_t n = 0, folders = 0;
  while (n < a.size() && n < b.size() && a[n] == b[n]) {
    if (a[n] == '/') ++folders;
    ++n;
  }
  return folders;
}

struct Topics {
  std::string depth, color, camera_info;
  std::vector<std::string> masks;
};

std::string image_topics(const std::map<std::string, TopicScan>& scans) {
  std::string s;
  for (const auto& [name, scan] : scans)
    if (scan.kind == "image" || scan.kind == "compressed")
      s += (s.empty() ? "" : ", ") + name + " (" + scan.encoding + ")";
  return s.empty() ? "none" : s;
}

void check_topic(const ResolvedInput& r, const std::map<std::string, TopicScan>& scans, const std::string& topic,
                 const char* key, std::initializer_list<const char*> kinds) {
  const auto it = scans.find(topic);
  DM_EXPECT(it != scans.end(), InputError,
            "config key '" << key << "' names topic " << topic << ", which bag '" << r.config.input.root.string()
                           << "' does not have (run `depthmask doctor` to list its topics)");
  const bool ok = std::any_of(kinds.begin(), kinds.end(), [&](const char* k) { return it->second.kind == k; });
  DM_EXPECT(ok, InputError,
            "config key '" << key << "' names topic " << topic << " of bag '" << r.config.input.root.string()
                           << "', whose messages are not "
                           << (it->second.kind == "camera_info" ? "images"
                                                                : "of the "
                                                                  "expected type")
                           << " (" << it->second.kind << ")");
}

Topics choose_topics(const ResolvedInput& r, const std::map<std::string, TopicScan>& scans) {
  const InputConfig::Topics& set = r.config.input.topics;
  Topics t;
  std::vector<std::string> depth, color, mask, info;
  for (const auto& [name, scan] : scans) {
    if (scan.kind == "camera_info") info.push_back(name);
    switch (role_of(name, scan)) {
      case Role::Depth:
        depth.push_back(name);
        break;
      case Role::Color:
        color.push_back(name);
        break;
      case Role::Mask:
        mask.push_back(name);
        break;
      case Role::None:
        break;
    }
  }
  const std::string where = "bag '" + r.config.input.root.string() + "'";
  if (!set.depth.empty()) {
    check_topic(r, scans, set.depth, "input.topics.depth", {"image", "compressed"});
    t.depth = set.depth;
  } else {
    DM_EXPECT(!depth.empty(), InputError,
              where << " has no depth topic (an Image of 16UC1, 32FC1 or mono16, or a compressedDepth "
                       "CompressedImage); set input.topics.depth (`depthmask doctor` lists the topics)");
    t.depth = pick(depth, {"aligned_depth_to_color", "depth/image_rect_raw", "depth"});
  }
  if (!set.mask.empty()) {
    for (const std::string& m : set.mask) check_topic(r, scans, m, "input.topics.mask", {"image", "compressed"});
    t.masks = set.mask;
  } else {
    for (const std::string& m : mask)
      if (m != t.depth) t.masks.push_back(m);
    DM_EXPECT(!t.masks.empty(), InputError,
              where << " has no mask topic (a mono8, 8UC1 or 16UC1 image topic named like a mask, label or "
                       "segmentation); set input.topics.mask (image topics: "
                    << image_topics(scans) << ")");
  }
  if (set.color == "none") {
  } else if (!set.color.empty()) {
    check_topic(r, scans, set.color, "input.topics.color", {"image", "compressed"});
    t.color = set.color;
  } else if (!color.empty()) {
    t.color = pick(color, {"color/image_raw", "color", "rgb"});
  }
  if (set.camera_info == "none") {
  } else if (!set.camera_info.empty()) {
    check_topic(r, scans, set.camera_info, "input.topics.camera_info", {"camera_info"});
    t.camera_info = set.camera_info;
  } else if (!info.empty()) {
    t.camera_info = *std::max_element(info.begin(), info.end(), [&](const std::string& a, const std::string& b) {
      return shared_folders(a, t.depth) < shared_folders(b, t.depth);
    });
  }
  return t;
}

// Stamps as seconds after `origin` (doubles keep nanoseconds over a recording's span; not since 1970).
std::vector<double> seconds_after(const std::vector<Seen>& v, int64_t origin) {
  std::vector<double> out;
  out.reserve(v.size());
  for (const Seen& s : v) out.push_back(static_cast<double>(s.stamp - origin) * 1e-9);
  return out;
}

void sort_by_stamp(std::vector<Seen>& v) {
  std::stable_sort(v.begin(), v.end(), [](const Seen& a, const Seen& b) { return a.stamp < b.stamp; });
}

Intrinsics intrinsics_of(const ros::CameraInfo& c) {
  Intrinsics k;
  k.fx = c.k[0];
  k.fy = c.k[4];
  k.cx = c.k[2];
  k.cy = c.k[5];
  k.width = static_cast<int>(c.width);
  k.height = static_cast<int>(c.height);
  return k;
}

bool has_distortion(const ros::CameraInfo& c) {
  return std::any_of(c.d.begin(), c.d.end(), [](double d) { return d != 0; });
}

BagImageMessage message_of(const std::string& topic, const TopicScan& s, const Seen& seen) {
  return {topic, s.kind == "compressed", seen.ref, seen.stamp};
}

void add_unpaired(ResolvedInput& r, const std::string& topic, const Seen& s) {
  r.listing.unmatched_what = "message(s)";
  add_unmatched(r.listing,
                fs::path(r.config.input.root) / (topic.substr(topic.find_first_not_of('/')) + "@" + stamp_id(s.stamp)));
}

// Every topic of the bag, with what the run reads from it (ResolvedInput::topics, for the doctor).
void list_topics(ResolvedInput& r, const bag::Reader& bag, const std::map<std::string, TopicScan>& scans,
                 const Topics& t) {
  for (const bag::Topic& topic : bag.topics()) {
    const TopicScan& s = scans.at(topic.name);
    InputTopic it{topic.name, topic.type, s.encoding, topic.message_count, 0, ""};
    std::vector<int64_t> stamps;
    for (const Seen& seen : s.images) stamps.push_back(seen.stamp != 0 ? seen.stamp : seen.log_time);
    for (const auto& info : s.infos) stamps.push_back(info.first);
    if (stamps.size() > 1) {
      const auto [lo, hi] = std::minmax_element(stamps.begin(), stamps.end());
      if (*hi > *lo) it.rate_hz = static_cast<double>(stamps.size() - 1) / (static_cast<double>(*hi - *lo) * 1e-9);
    }
    if (topic.name == t.depth) it.role = "depth";
    if (topic.name == t.color) it.role = "color";
    if (topic.name == t.camera_info) it.role = "camera_info";
    if (std::find(t.masks.begin(), t.masks.end(), topic.name) != t.masks.end()) it.role = "mask";
    r.topics.push_back(std::move(it));
  }
}

}  // namespace

void resolve_rosbag2(ResolvedInput& r) {
  Config& e = r.config;
  refuse_pattern_key(r, "input.depth", "the bag's depth topic (input.topics.depth)");
  refuse_pattern_key(r, "input.mask", "the bag's mask topics (input.topics.mask)");
  refuse_pattern_key(r, "input.color", "the bag's colour topic (input.topics.color)");
  DM_EXPECT(!e.mask.per_instance, ConfigError,
            "config key 'mask.per_instance' does not apply to "
                << layout_label(r) << ": a bag's mask topics unite into one mask per frame");
  auto bag = std::make_shared<bag::Reader>(e.input.root);
  bag->keep_scanned_chunks(kKeptChunkBytes);
  std::map<std::string, TopicScan> scans = scan_bag(*bag, r.listing.damaged);
  const Topics t = choose_topics(r, scans);
  TopicScan& depth = scans.at(t.depth);
  if (depth.kind == "image" && (depth.encoding == "16UC1" || depth.encoding == "mono16"))
    layout_default(r, "depth.scale", e.depth.scale, 0.001);  // REP 118: 16-bit depth is millimetres
  detail::log().info(
      "rosbag2: depth {} ({}), mask {}, colour {}, camera_info {}", t.depth, depth.encoding,
      [&] {
        std::string s;
        for (const std::string& m : t.masks) s += (s.empty() ? "" : " + ") + m;
        return s;
      }(),
      t.color.empty() ? "none" : t.color, t.camera_info.empty() ? "none (input.intrinsics)" : t.camera_info);

  list_topics(r, *bag, scans, t);

  // A stamp of 0 (a driver that leaves the header empty): the log time stands in for it.
  size_t zero_stamps = 0;
  for (Seen& s : depth.images)
    if (s.stamp == 0) s.stamp = s.log_time, ++zero_stamps;
  if (zero_stamps > 0)
    detail::log().warn("rosbag2: {} message(s) of {} have header.stamp 0; their log time keys and pairs them",
                       zero_stamps, t.depth);
  std::vector<Seen> depth_msgs = depth.images;
  sort_by_stamp(depth_msgs);
  DM_EXPECT(!depth_msgs.empty(), InputError,
            "bag '" << e.input.root.string() << "' has no message on depth topic " << t.depth);
  const int64_t origin = depth_msgs.front().stamp;
  const std::vector<double> depth_t = seconds_after(depth_msgs, origin);
  const double max_diff = e.input.max_time_diff;

  // Each mask topic pairs with the depth messages; a frame needs one message of every mask topic.
  std::vector<std::vector<size_t>> to_mask;
  std::vector<std::vector<Seen>> mask_msgs;
  std::vector<bool> keep(depth_msgs.size(), true);
  for (const std::string& m : t.masks) {
    std::vector<Seen> v = scans.at(m).images;
    sort_by_stamp(v);
    to_mask.push_back(associate(depth_t, seconds_after(v, origin), max_diff));
    for (size_t i = 0; i < depth_msgs.size(); ++i)
      if (to_mask.back()[i] == SIZE_MAX) keep[i] = false;
    mask_msgs.push_back(std::move(v));
  }
  std::vector<size_t> to_color(depth_msgs.size(), SIZE_MAX);
  std::vector<Seen> color_msgs;
  if (!t.color.empty()) {
    color_msgs = scans.at(t.color).images;
    sort_by_stamp(color_msgs);
    to_color = associate(depth_t, seconds_after(color_msgs, origin), max_diff);
  }
  std::vector<std::pair<int64_t, ros::CameraInfo>> infos;
  if (!t.camera_info.empty()) infos = std::move(scans.at(t.camera_info).infos);
  std::stable_sort(infos.begin(), infos.end(), [](const auto& a, const auto& b) { return a.first < b.first; });

  std::map<std::string, int> repeats;
  bool warned_distortion = false;
  size_t without_info = 0;
  std::vector<std::vector<bool>> mask_used(mask_msgs.size());
  for (size_t k = 0; k < mask_msgs.size(); ++k) mask_used[k].assign(mask_msgs[k].size(), false);
  std::vector<bool> color_used(color_msgs.size(), false);
  for (size_t i = 0; i < depth_msgs.size(); ++i) {
    if (!keep[i]) {
      add_unpaired(r, t.depth, depth_msgs[i]);
      continue;
    }
    auto frame = std::make_shared<BagFrame>();
    frame->bag = bag;
    frame->depth = message_of(t.depth, depth, depth_msgs[i]);
    for (size_t k = 0; k < t.masks.size(); ++k) {
      mask_used[k][to_mask[k][i]] = true;
      frame->masks.push_back(message_of(t.masks[k], scans.at(t.masks[k]), mask_msgs[k][to_mask[k][i]]));
    }
    if (to_color[i] != SIZE_MAX) {
      color_used[to_color[i]] = true;
      frame->color = message_of(t.color, scans.at(t.color), color_msgs[to_color[i]]);
    }
    frame->header.stamp = ros::Time::from_nanoseconds(depth_msgs[i].stamp);
    frame->header.frame_id = depth_msgs[i].frame_id;
    FrameEntry f;
    const std::string base = stamp_id(depth_msgs[i].stamp);
    const int n = repeats[base]++;
    f.id = n == 0 ? base : base + "-" + std::to_string(n);
    f.timestamp = static_cast<double>(depth_msgs[i].stamp) * 1e-9;
    // The latest camera_info at or before the stamp.
    const auto at = std::upper_bound(infos.begin(), infos.end(), depth_msgs[i].stamp,
                                     [](int64_t s, const auto& p) { return s < p.first; });
    if (at != infos.begin()) {
      const ros::CameraInfo& info = std::prev(at)->second;
      frame->camera_info = info;
      f.intrinsics = intrinsics_of(info);
      if (has_distortion(info) && !warned_distortion) {
        warned_distortion = true;
        detail::log().warn(
            "rosbag2: camera_info {} has {} distortion coefficients; they are ignored (depthmask "
            "masks the image as recorded, on its own pixel grid)",
            t.camera_info, info.distortion_model.empty() ? "unnamed" : info.distortion_model);
      }
    } else if (!t.camera_info.empty()) {
      ++without_info;
    }
    const fs::path file = bag->files().at(depth_msgs[i].ref.file).path;
    f.depth = file;
    f.mask = bag->files().at(frame->masks.front().ref.file).path;
    if (frame->color) f.color = bag->files().at(frame->color->ref.file).path;
    if (frame->masks.size() > 1)  // united like instance masks (FrameSlot::load_instance_union)
      for (const BagImageMessage& m : frame->masks) f.instances.emplace_back(m.topic, bag->files().at(m.ref.file).path);
    f.relative = fs::path(t.depth.substr(std::min(t.depth.size(), t.depth.find_first_not_of('/')))) / f.id;
    f.bag = std::move(frame);
    r.listing.frames.push_back(std::move(f));
  }
  for (size_t k = 0; k < mask_msgs.size(); ++k)
    for (size_t j = 0; j < mask_msgs[k].size(); ++j)
      if (!mask_used[k][j]) add_unpaired(r, t.masks[k], mask_msgs[k][j]);
  for (size_t j = 0; j < color_msgs.size(); ++j)
    if (!color_used[j]) add_unpaired(r, t.color, color_msgs[j]);
  if (without_info > 0)
    detail::log().warn("rosbag2: {} frame(s) come before the first message of {}; they use input.intrinsics",
                       without_info, t.camera_info);
  DM_EXPECT(!r.listing.frames.empty(), InputError,
            "no input frames: no message of depth topic " << t.depth << " in bag '" << e.input.root.string()
                                                          << "' pairs with a message of every mask topic within "
                                                             "input.max_time_diff ("
                                                          << max_diff << " s)");
}

}  // namespace depthmask::detail
