/// \file
/// The run configuration: plain structs filled from YAML and command-line overrides.
///
/// One table per section (lib/config/src/keys.cpp) drives reading, validation messages, --print-config
/// and the settings hash; everything else takes these structs. Every enum has to_string/parse so logs
/// and errors speak the YAML's words (their {value, name} arrays: lib/config/src/enum_names.h).
///
/// Adding a key: its field (with its default) in the section struct below, and one row in keys.cpp.
#pragma once

#include <bitset>
#include <cstddef>
#include <cstdint>
#include <filesystem>
#include <optional>
#include <string>
#include <string_view>
#include <typeinfo>
#include <utility>
#include <vector>

#include "depthmask/backend_kind.h"
#include "depthmask/intrinsics.h"

namespace depthmask {

/// run.on_error: what a failed frame does to the run (skip it and go on, or stop).
enum class OnError { Skip, Stop };
/// output.formats: the files written per frame (docs/OUTPUTS.md).
enum class OutputFormat { Tiff, Npy, Exr, Png16, Ply, Json, Reason, Mcap };
/// input.layout: how the input folder is read (docs/DATASETS.md); Auto detects it.
enum class InputLayout { Auto, Pattern, Apc, SevenScenes, Bop, Tum, YcbInEOAT, Rosbag2 };
/// depth.encoding: how 16-bit depth is stored (apc: 16-bit words rotated left by 3 bits).
enum class DepthEncoding { Plain, Apc };
/// registration.mode: how a depth image of another camera's geometry is brought to the mask's.
enum class RegistrationMode { Auto, None, Resample, Reproject };
/// output.layout: flat (`<dir>/<id>`) or mirror (the input's folders and file names).
enum class OutputLayout { Flat, Mirror };
/// live.overflow: what capture does when every frame slot is busy; Auto: Block for a source that can
/// wait (an unpaced replay, LiveSource::can_wait), DropOldest otherwise (resolve_overflow).
enum class Overflow { Auto, DropOldest, Block };

// to_string gives the YAML word of a value; parse_* the value of a word, nullopt when the word is not
// one of the allowed values.
/// The YAML word of `e`.
std::string_view to_string(OnError e);
/// The YAML word of `f`.
std::string_view to_string(OutputFormat f);
/// The OnError a YAML word names; nullopt for another word.
std::optional<OnError> parse_on_error(std::string_view s);
/// The OutputFormat a YAML word names; nullopt for another word.
std::optional<OutputFormat> parse_output_format(std::string_view s);
/// The YAML word of `l`.
std::string_view to_string(InputLayout l);
/// The InputLayout a YAML word names; nullopt for another word.
std::optional<InputLayout> parse_input_layout(std::string_view s);
/// The YAML word of `e`.
std::string_view to_string(DepthEncoding e);
/// The DepthEncoding a YAML word names; nullopt for another word.
std::optional<DepthEncoding> parse_depth_encoding(std::string_view s);
/// The YAML word of `m`.
std::string_view to_string(RegistrationMode m);
/// The RegistrationMode a YAML word names; nullopt for another word.
std::optional<RegistrationMode> parse_registration_mode(std::string_view s);
/// The YAML word of `m`.
std::string_view to_string(DistortionModel m);
/// The DistortionModel a YAML word names; nullopt for another word.
std::optional<DistortionModel> parse_distortion_model(std::string_view s);
/// The YAML word of `l`.
std::string_view to_string(OutputLayout l);
/// The OutputLayout a YAML word names; nullopt for another word.
std::optional<OutputLayout> parse_output_layout(std::string_view s);
/// The YAML word of `o`.
std::string_view to_string(Overflow o);
/// The Overflow a YAML word names; nullopt for another word.
std::optional<Overflow> parse_overflow(std::string_view s);
/// Named depth scales (metres per raw unit): mm 0.001, 0.1mm 0.0001, tum 0.0002 (1/5000), d405 0.0001.
std::optional<double> depth_scale_preset(std::string_view name);

/// The `input` section: where the frames are and how to read them.
struct InputConfig {
  InputLayout layout = InputLayout::Auto;  ///< auto: detected from the folder, and the reason logged
  std::filesystem::path root = ".";        ///< the dataset's folder; the patterns are relative to it
  std::string depth = "depth/{id}.png";    ///< drives the frame list
  std::string mask = "mask/{id}.png";      ///< the mask file of frame {id}
  std::string color = "color/{id}.png";    ///< optional: frames without a color file get none
  std::filesystem::path intrinsics_file;   ///< empty: none, or given inline
  std::optional<Intrinsics> intrinsics;    ///< inline {fx, fy, cx, cy}, or read from intrinsics_file
  double max_time_diff = 0.02;             ///< tum, rosbag2: seconds between associated depth and rgb/mask timestamps
  /// rosbag2: the topics a bag's frames come from; empty: detected (by message type and encoding,
  /// then by name). Several mask topics unite, as instance masks do.
  struct Topics {
    std::string depth;              ///< sensor_msgs/msg/Image or CompressedImage (compressedDepth)
    std::string color;              ///< optional colour; "" detects, "none" reads none
    std::vector<std::string> mask;  ///< one or more mask / label topics
    std::string camera_info;        ///< sensor_msgs/msg/CameraInfo; "" detects, "none" uses input.intrinsics
  } topics;                         ///< input.topics
  std::string object;  ///< apc: mask from masks/frame-{id}.\<object\>.mask.png (+ its thresh.txt), not segm/
  std::string bop_masks = "mask_visib";  ///< bop: mask_visib | mask
  /// Paths that dataset index files name (TUM rgb.txt ...) must stay inside root: no absolute paths,
  /// no '..' above it, unless this is true.
  bool allow_paths_outside_root = false;
  /// Input files are bounded before they are read and decoded: bytes per file, and pixels per image
  /// (from the PNG/TIFF/EXR/JPEG header, before the decoder allocates). Each at most 2^31 - 1: OpenCV
  /// takes byte counts and image sides as int.
  uint64_t max_file_bytes = uint64_t{1} << 30;    ///< 1 GiB
  uint64_t max_image_pixels = uint64_t{1} << 28;  ///< 268 M, e.g. 16384 x 16384
};

/// The `depth` section: the input depth's units and the kept range.
struct DepthConfig {
  double scale = 0.001;                           ///< metres per raw unit (16-bit input); YAML also takes a preset name
  double min = 0.0;                               ///< metres, inclusive
  double max = 10.0;                              ///< metres, inclusive
  DepthEncoding encoding = DepthEncoding::Plain;  ///< how 16-bit depth is stored
  std::vector<uint32_t> invalid_values;           ///< raw values meaning "no measurement" besides 0 (7-Scenes: 65535)
};

/// The `mask` section: which mask values keep a pixel.
struct MaskConfig {
  uint32_t threshold = 0;                    ///< keep where mask > threshold (raw mask units) ...
  std::vector<uint32_t> labels;              ///< ... or, when non-empty, where mask is one of these
  bool invert = false;                       ///< applied last
  std::optional<double> threshold_fraction;  ///< 0..1 of the mask type's full scale; replaces threshold
  int erode = 0;                             ///< drop pixels within this many pixels of the mask's boundary
  bool per_instance = false;                 ///< bop: one output per instance mask instead of their union
};

/// The `registration` section: bringing depth to the mask's camera (docs/DATASETS.md, "Registration").
struct RegistrationConfig {
  RegistrationMode mode = RegistrationMode::Auto;  ///< auto: by what the layout knows of the cameras
  /// The depth camera's lens distortion for reprojection (APC raw/ with cam.info.txt, which does not
  /// record it). load_config() guarantees: model None with all-zero coeffs, or a model with coeffs
  /// that are finite and not all zero.
  Distortion depth_distortion;
};

/// The `output` section: what is written where.
struct OutputConfig {
  std::filesystem::path dir = "out";                      ///< the output folder
  std::vector<OutputFormat> formats{OutputFormat::Tiff};  ///< the files written per frame
  float invalid = 0.0f;                                   ///< 0, NaN or any number
  bool preview = false;                      ///< also write {id}.preview.png (colour | mask | masked depth)
  bool fsync = false;                        ///< fsync each file before the rename that publishes it
  OutputLayout layout = OutputLayout::Flat;  ///< mirror: the input's folders and file names
  /// output.mcap: the ROS 2 bag of output.format mcap (docs/ROSBAG.md, "Writing").
  struct Mcap {
    std::string ns = "/depthmask";    ///< the topics' namespace: \<ns\>/depth, \<ns\>/camera_info, ...
    bool mask = false;                ///< also \<ns\>/mask: mono8, 255 where the depth was kept
    bool reason = false;              ///< also \<ns\>/reason: mono8, the reason codes (0 = kept)
    bool compressed_depth = false;    ///< also \<ns\>/depth/compressedDepth (image_transport's PNG form)
    double fps = 30;                  ///< stamps of frames without a timestamp: index / fps seconds
    std::string frame_id = "camera";  ///< header.frame_id of frames that have none (folder inputs)
  } mcap;                             ///< output.mcap
};

// BackendConfig (the backend section): backend_kind.h.

/// The `run` section: how the batch runs.
struct RunConfig {
  OnError on_error = OnError::Skip;  ///< skip: a failed frame is recorded and the run goes on
  bool force = false;                ///< redo frames the manifest records as finished
  /// Frames in flight in the overlapped batch (each holds one frame slot of buffers): 0 = by the
  /// machine (hardware threads + 2, at most 32); 1 = one frame at a time.
  int frames_in_flight = 0;
  /// Threads of the batch pipeline (oneTBB), for the run: 0 = one per hardware thread; n = n, fewer to
  /// leave cores to other work (a robot's stack beside it), more than the cores to oversubscribe them.
  int threads = 0;
  /// Sharded runs (shard.h): "" = none (every frame), "K/N" = shard K of N (0-based), "auto" = from a
  /// job engine's variables (Slurm arrays, Kubernetes Indexed Jobs).
  std::string shard;
  /// The shard count for run.shard auto under Kubernetes (JOB_COMPLETION_INDEX carries no count);
  /// 0 = from DEPTHMASK_SHARD_COUNT.
  int shard_count = 0;
};

/// live.mask: masks besides the frames' own (the mask stream), AND-ed with it. All empty: the mask
/// stream alone, as before.
struct LiveMaskConfig {
  /// A region of interest for a fixed camera: 8- or 16-bit single channel, nonzero = keep; read once
  /// when the run starts and used for every frame (alone when a frame has no mask). Empty = none.
  std::filesystem::path static_file;
  /// Keep only depth in [min, max] metres (inclusive), within depth.min..depth.max. load_config()
  /// guarantees finite numbers with min < max.
  struct DepthBand {
    double min = 0;  ///< metres
    double max = 0;  ///< metres
  };
  std::optional<DepthBand> depth_band;  ///< none: no band
  /// Keep only pixels whose colour lies in (keep_inside) or outside (!keep_inside: green-screen
  /// removal) an HSV range, in OpenCV's 8-bit convention from the BGR colour image (H 0..179 = degrees
  /// / 2, S and V 0..255; kernels/.../color_key.h defines it exactly). Inclusive bounds; hue wraps
  /// through 0 when h[0] > h[1] (red: [170, 10]). load_config() guarantees the bounds and s[0] <= s[1],
  /// v[0] <= v[1]. Needs a source that delivers colour of the depth's size.
  struct ColorKey {
    int h[2] = {0, 179};      ///< hue bounds, 0..179
    int s[2] = {0, 255};      ///< saturation bounds, 0..255
    int v[2] = {0, 255};      ///< value bounds, 0..255
    bool keep_inside = true;  ///< keep pixels inside the range (false: outside)
  };
  std::optional<ColorKey> color_key;  ///< none: no colour key
};

/// Live mode (`depthmask live`): where frames come from and how the runner bounds latency.
struct LiveConfig {
  std::string source = "synthetic://?size=640x480&fps=30";  ///< a source URI (live.h)
  /// drop_oldest: a new frame takes the slot of the oldest frame still waiting (counted as a drop);
  /// block: capture waits for a free slot (nothing dropped, the source backs up); auto: block for a
  /// source that can wait (replay:// at fps=0), drop_oldest for cameras and paced replays.
  Overflow overflow = Overflow::Auto;
  int buffers = 4;       ///< frame slots in the pool, made up front (2..64)
  int output_every = 0;  ///< write every Nth frame to output.dir as `run` does; 0 = never
  /// Where every frame is published, comma separated: ZeroMQ endpoints (tcp://127.0.0.1:5555) and
  /// ROS 2 namespaces over DDS (ros2://depthmask); empty = off.
  std::string publish;
  /// ros2://: how long (seconds) a depth message waits for its mask and colour messages (segmentation
  /// arrives 50-300 ms late) before it is decided with what came.
  double pair_wait = 0.5;
  double stats_interval = 5.0;  ///< seconds between stats log lines; 0 = none
  /// live --serve: "PORT" or "ADDR:PORT" ("[v6]:PORT") to serve the page and the Foxglove WebSocket
  /// protocol on (default address 127.0.0.1; port 0 = any free one); empty = off (live_server.h).
  std::string serve;
  double serve_fps = 10;            ///< frames per second served (the pipeline keeps its own rate)
  std::string serve_token;          ///< when set, required as ?token= on HTTP and WebSocket requests
  std::string serve_depth = "png";  ///< png: 16-bit millimetre PNG; raw: sensor_msgs/Image 32FC1 metres
  int serve_queue = 16;             ///< messages waiting per client before its oldest are dropped
  double serve_timeout = 5;         ///< seconds a write may wait before a client that stopped reading is closed
  /// live --serve: connections open at once (page requests and WebSocket clients); at the cap, new
  /// connections wait in the listen queue until one closes.
  int serve_max_connections = 64;
  double reconnect_max = 5.0;  ///< seconds: the cap of the reconnect back-off (0.1 s doubling)
  LiveMaskConfig mask;         ///< live.mask: masks besides the frames' own
  /// live.sync: separate streams (depth, color, a mask stream) with their own timestamps are paired
  /// within tolerance_ms (StreamPairer); a frame without its partners is dropped as unpaired. 20 ms:
  /// TUM's associate.py default (input.max_time_diff), under a 30 Hz frame period's 33 ms.
  struct Sync {
    double tolerance_ms = 20.0;  ///< the most two paired streams' timestamps may differ
  } sync;                        ///< live.sync
  /// live.preview: show the masked depth in a window (off by itself where there is no display).
  bool preview = false;
};

/// The `logging` section.
struct LoggingConfig {
  std::string level = "info";  ///< trace | debug | info | warn | error | off
};

namespace detail {
struct SetByUser;
}

/// The most keys the tables may hold (one set-by-user bit each); the tables check it when built.
inline constexpr size_t kMaxConfigKeys = 96;

/// The whole configuration, one struct per YAML section (docs/CONFIGURATION.md). Config{} holds the
/// built-in defaults; load_config and load_config_text read YAML, apply_overrides the CLI's `--set`.
struct Config {
  InputConfig input;                ///< input.*
  DepthConfig depth;                ///< depth.*
  MaskConfig mask;                  ///< mask.*
  OutputConfig output;              ///< output.*
  BackendConfig backend;            ///< backend.*
  RegistrationConfig registration;  ///< registration.*
  RunConfig run;                    ///< run.*
  LiveConfig live;                  ///< live.*
  LoggingConfig logging;            ///< logging.*

  /// Set-by-user bits, one per key: a key the YAML file or an override names, or that a C++ caller set
  /// through set(), is the user's; a detected layout (resolve_input) fills only the other keys with its
  /// defaults (TUM's depth.scale 1/5000, a camera file's intrinsics ...). Assigning a field directly
  /// changes the value but not its bit, so a layout may still replace it: use set() for that.
  ///
  ///   Config cfg = load_config(std::nullopt, {});
  ///   cfg.set(cfg.depth.scale, 0.001);             // kept by a TUM folder, whose default is 1/5000
  ///   cfg.set(cfg.input.intrinsics, Intrinsics{500, 500, 320, 240});
  ///
  /// `field` is one key's field of this Config (for input.intrinsics: input.intrinsics or
  /// input.intrinsics_file); another reference throws std::invalid_argument.
  template <class T, class V>
  Config& set(T& field, V&& value) {
    field = std::forward<V>(value);
    mark_set_by_user(&field, typeid(T));
    return *this;
  }
  /// Whether the key `key` (dotted name: "depth.scale") is the user's; a name that is not a key throws
  /// std::invalid_argument (as do mark_set_by_user and reset_to_default).
  bool is_set_by_user(std::string_view key) const;
  /// Makes the key `key` (dotted name) the user's without changing its value.
  void mark_set_by_user(std::string_view key);
  /// The same for the key whose field is at `field` of type `type` (what set() calls); another
  /// address throws std::invalid_argument.
  void mark_set_by_user(const void* field, const std::type_info& type);
  /// The key takes its built-in default and is no longer the user's (a layout may fill it again).
  void reset_to_default(std::string_view key);

 private:
  friend struct detail::SetByUser;
  std::bitset<kMaxConfigKeys> set_by_user_;
};

/// One key as the tables describe it, in --print-config's order.
struct ConfigKeyInfo {
  std::string name;                  ///< dotted: "depth.scale"
  std::string doc;                   ///< one line
  bool hashed;                       ///< part of the settings hash (manifest.h): it shapes the outputs
  std::vector<InputLayout> layouts;  ///< the layouts it applies to (a warning for the others); empty: all
};
/// Every key of the configuration, in --print-config's order.
const std::vector<ConfigKeyInfo>& config_keys();

/// One `key.path=value` override. `origin` names where it came from ("--set", "--input") for messages.
struct Override {
  std::string key;  ///< dotted: "depth.scale"
  /// A key whose value is a string or a path takes this as written ({id}-depth.exr, a path, a URI),
  /// unless it opens with " or ' (a YAML quoted scalar) or is null or ~ (none, for an optional key);
  /// every other key parses it as a YAML scalar or flow value ([48, 114], 0.001, true).
  std::string value;
  std::string origin = "--set";  ///< where it came from, for messages
  bool literal = false;          ///< take value as a plain string (paths from dedicated flags), not YAML
};

/// Splits "key.path=value"; throws ConfigError when there is no '=' or the key is empty.
Override parse_override(const std::string& text, const std::string& origin = "--set");

/// Builds the effective configuration: defaults < YAML file (when given) < overrides, in order.
/// Relative paths in the file resolve against the file's folder, those in overrides against `cwd`.
/// Reads input.intrinsics when it names a file (read_intrinsics_file). Throws ConfigError naming the key, the YAML line
/// and the allowed values.
Config load_config(const std::optional<std::filesystem::path>& file, const std::vector<Override>& overrides,
                   const std::filesystem::path& cwd = std::filesystem::current_path());
/// The same from a file's text (load_config reads the file and calls this): `name` names it in
/// messages, relative paths in it resolve against `base_dir`.
Config load_config_text(const std::string& yaml, const std::string& name, const std::filesystem::path& base_dir,
                        const std::vector<Override>& overrides,
                        const std::filesystem::path& cwd = std::filesystem::current_path());

/// Applies `overrides` to an existing configuration, in order, as load_config does after the file
/// (their keys become the user's), then checks the keys against each other and re-reads
/// input.intrinsics when it names a file. Relative paths resolve against `cwd`. Throws ConfigError.
void apply_overrides(Config& config, const std::vector<Override>& overrides,
                     const std::filesystem::path& cwd = std::filesystem::current_path());

/// The configuration as YAML (what --print-config shows). Paths are written relative to `relative_to`
/// when given, absolute otherwise.
std::string to_yaml(const Config& config, const std::optional<std::filesystem::path>& relative_to = std::nullopt);

/// The same with only the keys whose value differs from the built-in default (Config{}), and the
/// sections that hold one: a configuration file that says only what matters for it (depthmask synth,
/// the shipped config/*.yaml). "{}\n" when nothing differs.
std::string to_yaml_changed(const Config& config,
                            const std::optional<std::filesystem::path>& relative_to = std::nullopt);

/// What the settings hash (manifest.h) covers: to_yaml with every key that does not shape the outputs
/// (output.dir, output.fsync, backend, run, live, logging) at its default, and input.intrinsics by
/// value rather than by file name.
std::string settings_yaml(const Config& config);

}  // namespace depthmask
