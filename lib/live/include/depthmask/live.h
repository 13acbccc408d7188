// Live mode: frames from a camera or another process, masked and handed on with bounded latency.
//
// A source (a URI: synthetic://, replay://, gst://, v4l2://, ros2://) delivers captured frames; a fixed pool of
// frame slots from the memory backend carries them through capture → mask → output stages; when the
// consumer falls behind the oldest unprocessed frame is dropped (or capture blocks), never queued
// without bound. Sources fail and come back: the runner reconnects with bounded exponential back-off.
#pragma once

#include <opencv2/core.hpp>

#include <atomic>
#include <chrono>
#include <cstdint>
#include <filesystem>
#include <map>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "depthmask/backend.h"
#include "depthmask/config.h"
#include "depthmask/ros_msgs.h"

namespace depthmask {

// A source URI split into its parts: scheme://path?key=value&key=value. Throws ConfigError naming the
// URI and what is wrong (no scheme, an unknown scheme, a malformed query).
struct SourceUri {
  std::string text;    // as given
  std::string scheme;  // synthetic, replay, gst, v4l2
  std::string path;    // after "scheme://" up to '?' (a folder, a device, a pipeline)
  std::map<std::string, std::string> query;
};
SourceUri parse_source_uri(const std::string& uri);

// One captured frame, in host memory. depth: CV_16UC1 raw units or CV_32FC1 metres; mask: CV_8UC1 or
// CV_16UC1 (empty when the mask comes from elsewhere: a static image, a depth band); color optional.
struct CapturedFrame {
  cv::Mat depth, mask, color;
  uint64_t sequence = 0;                           // the source's frame counter
  std::chrono::steady_clock::time_point captured;  // when read() returned it (latency starts here)
  std::string id;  // a name for outputs: the dataset's id (replay) or the sequence number
  // The mask holds mask-test results already (255 = passes, 0 = fails): replay's union of a frame's
  // instance masks. The runner masks it with union_mask_params, not the configured test.
  bool mask_tests = false;
  // replay://: the depth file when it stored depth in three equal channels, read as the one
  // (ImageReader::last_stored_channels); empty otherwise. The runner logs the first once per run.
  std::filesystem::path three_channel_depth;
  // ros2://: the depth message's header (its stamp and frame_id go out with the masked depth) and the
  // latest camera_info received; other sources leave them empty.
  std::optional<ros::Header> header;
  std::shared_ptr<const ros::CameraInfo> camera_info;
};

class LiveSource {
 public:
  virtual ~LiveSource() = default;
  // (Re)opens the source. Throws InputError naming the URI and why (device absent, pipeline fails).
  virtual void open() = 0;
  // Waits for the next frame (a source paces itself: fps, recorded timestamps, the camera). Returns
  // false at the end of a finite stream (replay without loop). Throws InputError on a failure the
  // runner treats as a disconnect (it reopens with back-off). The images may share memory the source
  // reuses: they hold until the next read() (a caller that keeps them longer gets them untouched only
  // where the source says so; replay does).
  virtual bool read(CapturedFrame& frame) = 0;
  // Called from another thread when the run stops: a read() waiting for a frame returns soon after
  // (false, or a frame that already arrived), and every later read() does too. Sources whose read()
  // cannot wait long (a paced replay, a camera that delivers at its rate) keep the default.
  virtual void interrupt() {}
  // Frames of separate streams (depth, color, mask) dropped because a partner had no frame within
  // live.sync.tolerance_ms (StreamPairer), since the source was made; 0 for single-stream sources.
  virtual uint64_t unpaired() const { return 0; }
  // Whether the source holds its frames until read() asks for them, losing none by waiting (a replay
  // not paced to a clock: fps=0): live.overflow auto then blocks capture instead of dropping. False
  // for cameras and paced sources, whose frames come on their own time. Valid after open().
  virtual bool can_wait() const { return false; }
  // One line for logs: what the source is.
  virtual std::string describe() const = 0;
};

// Which source schemes this build can open, and why not where it cannot (OpenCV built without the
// GStreamer or V4L2 back end; OpenNI2 not built in). For `depthmask info`.
struct SourceSupport {
  std::string scheme;
  bool available = false;
  std::string note;  // what it reads through, or why it is unavailable
};
std::vector<SourceSupport> live_source_support();

// The source for `uri`. `config` supplies what the frames mean (depth scale and encoding, mask kind)
// and, for replay://, how a dataset folder is read (the same layouts as `run`).
std::unique_ptr<LiveSource> make_live_source(const SourceUri& uri, const Config& config);

}  // namespace depthmask
