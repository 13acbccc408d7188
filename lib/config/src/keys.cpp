// The configuration tables: one row per key, in --print-config's order. A row names the key, its
// field, how it is read (limits and messages) and written (codecs.h), and one doc line; `.not_hashed()`
// keeps it out of the settings hash (it does not shape the outputs), `.not_in_hash_text()` out of the
// hash's text too (a key added after manifests existed: adding it must not change their hash),
// `.only({...})` names the layouts it applies to (a "has no effect" warning for the others). The
// default is the field's initializer in config.h. Adding a key: its field in config.h and one row
// here (outside the hash: `.not_in_hash_text()`).
#include <algorithm>
#include <cctype>
#include <limits>
#include <map>
#include <stdexcept>

#include "codecs.h"
#include "depthmask/kernels/mask_rule.h"
#include "depthmask/shard_spec.h"

namespace depthmask {

namespace detail {
namespace {

constexpr int64_t kInt32Max = std::numeric_limits<int32_t>::max();

bool is_source_uri(const std::string& s) { return s.find("://") != std::string::npos; }
// live.publish: empty, or a comma-separated list of ZeroMQ endpoints and ros2:// namespaces.
bool is_endpoint_or_off(const std::string& text) {
  size_t from = 0;
  while (!text.empty()) {
    const size_t comma = text.find(',', from);
    const std::string e = text.substr(from, comma == std::string::npos ? std::string::npos : comma - from);
    const bool ok = e.rfind("tcp://", 0) == 0 || e.rfind("ipc://", 0) == 0 || e.rfind("inproc://", 0) == 0 ||
                    (e.rfind("ros2://", 0) == 0 && e.size() > 7);
    if (!ok) return false;
    if (comma == std::string::npos) break;
    from = comma + 1;
  }
  return true;
}
// live.serve: "" (off), PORT or ADDR:PORT with a port of 0..65535 (the address is checked when bound).
bool is_serve_or_off(const std::string& s) {
  if (s.empty()) return true;
  const size_t colon = s.rfind(':');
  const std::string port = colon == std::string::npos ? s : s.substr(colon + 1);
  if (port.empty() || port.size() > 5 || port.find_first_not_of("0123456789") != std::string::npos) return false;
  if (colon != std::string::npos &&
      (colon == 0 || s.find_first_not_of("0123456789abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ.:[]%-") !=
                         std::string::npos))
    return false;  // an address: IPv4, [IPv6] or localhost, never a URL
  return std::stoi(port) <= 65535;
}
bool is_shard_text(const std::string& s) { return is_shard_spec(s); }
bool no_distortion(const Config& c) { return c.registration.depth_distortion.model == DistortionModel::None; }

std::vector<Key> input_keys() {
  using S = InputConfig;
  return {
      key("layout", &S::layout, one_of(kInputLayouts), "the dataset layout; auto: detected from the folder"),
      key("root", &S::root, Path{}, "the input folder"),
      key("depth", &S::depth, Pattern{}, "the depth files, relative to root; drives the frame list"),
      key("mask", &S::mask, Pattern{}, "the mask files, relative to root"),
      key("color", &S::color, Pattern{true}, "the color files (optional: frames without one get none); ~ for none"),
      intrinsics_key("{fx, fy, cx, cy[, width, height]}, a YAML file of those, or a 3x3 K text file; ~ for none"),
      key("max_time_diff", &S::max_time_diff, Number{above(0), "must be > 0 seconds"},
          "tum, rosbag2: seconds between associated depth and rgb/mask timestamps")
          .only({InputLayout::Tum, InputLayout::Rosbag2}),
      map_key("topics",
              {key("depth", &S::Topics::depth, Text{true}, "the depth topic; \"\" = detected")
                   .only({InputLayout::Rosbag2})
                   .not_in_hash_text(),
               key("color", &S::Topics::color, Text{true}, "the colour topic; \"\" = detected, none = no colour")
                   .only({InputLayout::Rosbag2})
                   .not_in_hash_text(),
               key("mask", &S::Topics::mask, TextList{}, "the mask topic(s), united; [] = detected")
                   .only({InputLayout::Rosbag2})
                   .not_in_hash_text(),
               key("camera_info", &S::Topics::camera_info, Text{true},
                   "the camera_info topic; \"\" = detected, none = input.intrinsics")
                   .only({InputLayout::Rosbag2})
                   .not_in_hash_text()},
              "rosbag2: the bag's topics the frames come from")
          .not_in_hash_text(),
      key("object", &S::object, Text{true, true}, "apc: the object whose masks/frame-{id}.<object>.mask.png to use")
          .only({InputLayout::Apc}),
      key("bop_masks", &S::bop_masks, Word{{"mask_visib", "mask"}}, "bop: the mask folder, mask_visib or mask")
          .only({InputLayout::Bop}),
      key("allow_paths_outside_root", &S::allow_paths_outside_root, Flag{},
          "let index files (TUM rgb.txt ...) name files outside root"),
      key("max_file_bytes", &S::max_file_bytes, Int<uint64_t>{1, kInt32Max}, "the largest input file read, in bytes"),
      key("max_image_pixels", &S::max_image_pixels, Int<uint64_t>{1, kInt32Max},
          "the largest input image decoded, in pixels (from its header)"),
  };
}

std::vector<Key> depth_keys() {
  using S = DepthConfig;
  return {
      key("scale", &S::scale, DepthScale{}, "metres per raw unit (16-bit input), or a preset: mm, 0.1mm, tum, d405"),
      key("min", &S::min, Number{at_least(0), "must be >= 0 metres"}, "metres, inclusive: nearer depth is invalid"),
      key("max", &S::max, Number{above(0), "must be > 0 metres"}, "metres, inclusive: farther depth is invalid"),
      key("encoding", &S::encoding, one_of(kDepthEncodings), "plain, or apc (16-bit words rotated left by 3 bits)"),
      key("invalid_values", &S::invalid_values,
          RawList{kMaxInvalidRaw, "raw values such as [65535]", "invalid raw values"},
          "raw values meaning no measurement besides 0 (7-Scenes: 65535)"),
  };
}

std::vector<Key> mask_keys() {
  using S = MaskConfig;
  return {
      key("threshold", &S::threshold, Int<uint32_t>{0, 65535}, "keep where mask > threshold (raw mask units)"),
      key("labels", &S::labels, RawList{kMaxLabels, "label values such as [48, 114]", "labels"},
          "when not empty, keep where the mask is one of these values instead"),
      key("threshold_fraction", &S::threshold_fraction, Fraction{},
          "0..1 of the mask type's full scale; replaces threshold"),
      key("invert", &S::invert, Flag{}, "invert the mask (applied last)"),
      key("erode", &S::erode, Int<int>{0, kMaxErode}, "drop pixels within this many pixels of the mask's boundary"),
      key("per_instance", &S::per_instance, Flag{}, "bop: one output per instance mask instead of their union"),
  };
}

std::vector<Key> registration_keys() {
  return {
      key("mode", &RegistrationConfig::mode, one_of(kRegistrationModes),
          "how depth reaches the color/mask grid: auto, none, resample, reproject"),
      map_key("depth_distortion",
              {key("model", &Distortion::model, one_of(kDistortionModels), "the depth camera's distortion model"),
               key("coeffs", &Distortion::coeffs, Coeffs{}, "[k1, k2, p1, p2, k3], librealsense's order")},
              "the depth camera's lens distortion for reprojection; ~ for none", true, no_distortion),
  };
}

bool writes_mcap(const Config& c) {
  const auto& f = c.output.formats;
  return std::find(f.begin(), f.end(), OutputFormat::Mcap) != f.end();
}
// A ROS namespace: '/' then names of letters, digits and '_' joined by single '/'s ("/" alone too).
bool is_ros_namespace(const std::string& s) {
  if (s.empty() || s[0] != '/') return false;
  if (s.size() == 1) return true;
  if (s.back() == '/') return false;
  for (size_t i = 1; i < s.size(); ++i) {
    const char c = s[i];
    const bool word = std::isalnum(static_cast<unsigned char>(c)) || c == '_';
    if (c == '/' ? s[i - 1] == '/' : !word) return false;
  }
  return true;
}

std::vector<Key> mcap_keys() {
  using S = OutputConfig::Mcap;
  return {
      key("namespace", &S::ns,
          Text{false, false, false, is_ros_namespace, "expected a ROS namespace such as /depthmask"},
          "the topics' namespace: <ns>/depth, <ns>/camera_info, <ns>/mask, <ns>/reason"),
      key("mask", &S::mask, Flag{}, "also <ns>/mask: mono8, 255 where the depth was kept"),
      key("reason", &S::reason, Flag{}, "also <ns>/reason: mono8, why each pixel was dropped (0 = kept)"),
      key("compressed_depth", &S::compressed_depth, Flag{}, "also <ns>/depth/compressedDepth (32FC1, PNG)"),
      key("fps", &S::fps, Number{above(0), "must be > 0 frames per second"},
          "stamps of frames without a timestamp (folder inputs): frame index / fps seconds"),
      key("frame_id", &S::frame_id, Text{}, "header.frame_id of frames whose input has none (folder inputs)"),
  };
}

std::vector<Key> output_keys() {
  using S = OutputConfig;
  return {
      key("dir", &S::dir, Path{}, "the output folder").not_hashed(),
      key("format", &S::formats, Formats{}, "one format or a list: tiff, npy, exr, png16, ply, json, reason, mcap"),
      key("invalid", &S::invalid, Float32{}, "the value of masked-out pixels: 0, nan or any number"),
      key("preview", &S::preview, Flag{}, "write a preview image beside each output"),
      key("fsync", &S::fsync, Flag{}, "fsync each file before the rename that publishes it").not_hashed(),
      key("layout", &S::layout, one_of(kOutputLayouts), "flat, or mirror: the input's folders and file names"),
      map_key("mcap", mcap_keys(), "output.format mcap: the ROS 2 bag's topics and stamps")
          .in_hash_text_only_if(writes_mcap),
  };
}

std::vector<Key> backend_keys() {
  using S = BackendConfig;
  return {
      key("kind", &S::kind, one_of(kBackendKinds), "the memory backend: auto, copy, zero_copy, managed, cpu"),
      key("device", &S::device, Int<int>{0, 1023}, "the CUDA device"),
      key("memory_limit_mb", &S::memory_limit_mb, Int<int64_t>{0, int64_t{1} << 30},
          "a budget for the frame buffers held at once, MiB; 0 = none"),
  };
}

std::vector<Key> run_keys() {
  using S = RunConfig;
  return {
      key("on_error", &S::on_error, one_of(kOnErrors), "a failed frame: skip it, or stop the run"),
      key("force", &S::force, Flag{}, "redo frames the manifest records as finished"),
      key("frames_in_flight", &S::frames_in_flight, Int<int>{0, 256}, "frames in flight at once; 0 = by the machine"),
      key("threads", &S::threads, Int<int>{0, 256}, "threads of the batch pipeline; 0 = one per hardware thread"),
      key("shard", &S::shard,
          Text{true, false, true, is_shard_text,
               "expected \"\" (no sharding), auto (from SLURM_ARRAY_TASK_ID or JOB_COMPLETION_INDEX) or K/N "
               "with 0 <= K < N (shard K of N, 0-based)"},
          "this run's share of the frames: \"\" (all), K/N, or auto (from the job engine)")
          .not_in_hash_text(),
      key("shard_count", &S::shard_count, Int<int>{0, static_cast<int64_t>(kMaxShards)},
          "the shard count for run.shard auto with JOB_COMPLETION_INDEX; 0 = from DEPTHMASK_SHARD_COUNT")
          .not_in_hash_text(),
  };
}

std::vector<Key> live_keys() {
  using S = LiveConfig;
  using M = LiveMaskConfig;
  return {
      key("source", &S::source,
          Text{false, false, true, is_source_uri,
               "expected a source URI such as synthetic://?size=640x480&fps=30 or replay:///data/seq"},
          "where frames come from: a source URI"),
      key("overflow", &S::overflow, one_of(kOverflows),
          "every frame slot busy: drop_oldest, block capture, or auto (block for an unpaced replay)"),
      key("buffers", &S::buffers, Int<int>{2, 64}, "frame slots in the pool, made up front"),
      key("output_every", &S::output_every, Int<int>{0, 1000000}, "write every Nth frame to output.dir; 0 = never"),
      key("publish", &S::publish,
          Text{true, false, true, is_endpoint_or_off,
               "expected ZeroMQ endpoints (tcp://HOST:PORT, ipc://PATH, inproc://NAME) and ROS 2 namespaces "
               "(ros2://NODE), comma separated, or empty (off)"},
          "where every frame is published: ZeroMQ endpoints and ros2://NODE, comma separated; empty = off"),
      key("pair_wait", &S::pair_wait,
          Number{within(0, 60), "expected seconds in [0, 60] (how long a depth message waits for its partners)"},
          "ros2://: seconds a depth message waits for its mask and colour messages")
          .not_in_hash_text(),  // added after manifests of format 1: their settings hash stays valid
      key("stats_interval", &S::stats_interval, Number{at_least(0), "expected seconds >= 0 (0 = no stats lines)"},
          "seconds between stats log lines; 0 = none"),
      key("serve", &S::serve,
          Text{true, false, true, is_serve_or_off,
               "expected PORT or ADDR:PORT (8765, 0.0.0.0:8765, [::1]:8765) or empty (off)"},
          "serve the page and the Foxglove WebSocket protocol on [ADDR:]PORT; empty = off"),
      key("serve_fps", &S::serve_fps, Number{within(0.1, 120), "expected frames per second in [0.1, 120]"},
          "frames per second served; the pipeline keeps its own rate"),
      key("serve_token", &S::serve_token, Text{true, false, true},
          "when set, required as ?token= by the page and the WebSocket"),
      key("serve_depth", &S::serve_depth, Word{{"png", "raw"}}, "png (16-bit millimetres) or raw (32FC1 metres)"),
      key("serve_queue", &S::serve_queue, Int<int>{1, 4096},
          "messages waiting per client before its oldest are dropped"),
      key("serve_timeout", &S::serve_timeout, Number{within(0.5, 3600), "expected seconds in [0.5, 3600]"},
          "seconds without progress before a client that stopped reading is closed"),
      key("serve_max_connections", &S::serve_max_connections, Int<int>{1, 10000},
          "connections open at once (page requests, WebSocket clients); more wait until one closes")
          .not_in_hash_text(),
      key("reconnect_max", &S::reconnect_max,
          Number{within(0.1, 3600), "expected seconds in [0.1, 3600] (the back-off starts at 0.1 s)"},
          "seconds: the cap of the reconnect back-off"),
      map_key("sync",
              {key("tolerance_ms", &LiveConfig::Sync::tolerance_ms,
                   Number{within(0, 10000),
                          "expected milliseconds in [0, 10000] (how far apart paired frames' timestamps may be)"},
                   "how far apart paired streams' timestamps may be, ms")},
              "pairing separate streams by timestamp"),
      key("preview", &S::preview, Flag{}, "show the masked depth in a window"),
      map_key(
          "mask",
          {key("static", &M::static_file, Path{true}, "a region of interest read once (nonzero = keep); ~ for none"),
           key("depth_band", &M::depth_band, Band{}, "keep only depth in [min, max] metres; ~ for none"),
           key("color_key", &M::color_key, ColorKeyRange{},
               "keep colours inside (or outside) an HSV range; ~ for none")},
          "masks AND-ed with the frames' own"),
  };
}

std::vector<Key> logging_keys() {
  return {
      key("level", &LoggingConfig::level, Word{{"trace", "debug", "info", "warn", "error", "off"}, true},
          "trace, debug, info, warn, error or off"),
  };
}

// Names and numbers the keys below `s`; children of a key outside the hash are outside it too.
void number(Section& s, const std::string& prefix, bool hashed, std::vector<const Key*>& out) {
  for (Key& k : s.keys) {
    k.dotted = prefix.empty() ? k.name : prefix + "." + k.name;
    k.hashed = k.hashed && hashed;
    s.names.push_back(k.name);
    if (k.section) {
      number(*k.section, k.dotted, k.hashed, out);
    } else {
      k.bit = static_cast<int>(out.size());
      out.push_back(&k);
    }
  }
}

struct Tables {
  Section root;
  std::vector<const Key*> values;
  std::map<std::string, const Key*, std::less<>> by_name;
  Tables() {
    root.keys = {
        map_key("input", input_keys(), "where the frames are and how they are listed"),
        map_key("depth", depth_keys(), "what the raw depth means"),
        map_key("mask", mask_keys(), "which mask pixels keep their depth"),
        map_key("registration", registration_keys(), "how depth and mask grids are brought together"),
        map_key("output", output_keys(), "what is written where"),
        map_key("backend", backend_keys(), "which memory backend runs the frames").not_hashed(),
        map_key("run", run_keys(), "how the batch runs").not_hashed(),
        map_key("live", live_keys(), "depthmask live: the source and the runner").not_hashed(),
        map_key("logging", logging_keys(), "the log").not_hashed(),
    };
    number(root, "", true, values);
    if (values.size() > kMaxConfigKeys)
      throw std::logic_error("configuration tables: more keys than Config's set-by-user bits (kMaxConfigKeys)");
    for (const Key* k : values) by_name.emplace(k->dotted, k);
  }
};

const Tables& tables() {
  static const Tables t;
  return t;
}

}  // namespace

const Section& config_table() { return tables().root; }
const std::vector<const Key*>& value_keys() { return tables().values; }
const Key* find_value_key(std::string_view dotted) {
  const auto& m = tables().by_name;
  const auto it = m.find(dotted);
  return it == m.end() ? nullptr : it->second;
}

}  // namespace detail

namespace {
const detail::Key& key_named(std::string_view dotted) {
  const detail::Key* k = detail::find_value_key(dotted);
  if (!k) throw std::invalid_argument("no configuration key '" + std::string(dotted) + "'");
  return *k;
}
}  // namespace

bool Config::is_set_by_user(std::string_view key) const {
  return set_by_user_.test(static_cast<size_t>(key_named(key).bit));
}

void Config::mark_set_by_user(std::string_view key) { set_by_user_.set(static_cast<size_t>(key_named(key).bit)); }

void Config::reset_to_default(std::string_view key) {
  const detail::Key& k = key_named(key);
  k.copy(*this, Config{});
  set_by_user_.reset(static_cast<size_t>(k.bit));
}

void Config::mark_set_by_user(const void* field, const std::type_info& type) {
  for (const detail::Key* k : detail::value_keys())
    if (k->holds(*this, field, std::type_index(type))) {
      set_by_user_.set(static_cast<size_t>(k->bit));
      return;
    }
  throw std::invalid_argument(
      "Config::set: the field is not a configuration key of this Config (pass one key's field, such as "
      "cfg.depth.scale)");
}

const std::vector<ConfigKeyInfo>& config_keys() {
  static const std::vector<ConfigKeyInfo> keys = [] {
    std::vector<ConfigKeyInfo> out;
    for (const detail::Key* k : detail::value_keys()) {
      ConfigKeyInfo info{k->dotted, k->doc, k->hashed, {}};
      for (const auto& l : detail::kInputLayouts)
        if (k->layouts & (1u << static_cast<unsigned>(l.value))) info.layouts.push_back(l.value);
      out.push_back(std::move(info));
    }
    return out;
  }();
  return keys;
}

}  // namespace depthmask
