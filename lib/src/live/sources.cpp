// The live sources behind make_live_source: synthetic://, replay://, gst:// and v4l2://.
//
//   synthetic://?size=640x480&fps=30&frames=N  render_synthetic_frame(i, w, h): 16-bit mm depth, the
//       label mask (0 background, 1..4 objects) and BGR color; endless unless frames=N.
//   replay://DIR?fps=30&loop=0  any folder `run` reads (resolve_input: pattern, apc, 7scenes, bop,
//       tum, ycbineoat), decoded as the files are: depth and mask with IMREAD_UNCHANGED (raw units;
//       APC's rotated depth stays rotated, the mask step decodes it per depth.encoding), color as
//       8-bit BGR like `run`. BOP frames with per-instance masks get one CV_8UC1 mask, 255 where any
//       instance mask is non-zero, 0 elsewhere (mask.per_instance is not applied live). Paced at the
//       recorded timestamps when every frame has one (TUM), at fps otherwise.
//   gst://PIPELINE  cv::VideoCapture(PIPELINE, CAP_GSTREAMER); the caps before appsink choose the pixel
//       type (OpenCV 4.6: GRAY16_LE gives CV_16UC1, GRAY8 CV_8UC1, BGR CV_8UC3). A CV_16UC1 image
//       (GRAY16_LE caps) is the frame's depth, anything else its color (no mask: it comes from
//       elsewhere). OpenCV reports a pipeline's end and its failure alike (no sample), so a failed
//       grab after at least one frame ends the stream (read() false); before any frame it is an
//       InputError.
//   v4l2:///dev/videoN  cv::VideoCapture(N, CAP_V4L2) without RGB conversion, Z16 requested (depth
//       cameras such as RealSense expose it); untested on hardware. A failed grab is an InputError.
//
// Pacing: a frame is due one period after the previous one; a source that falls behind does not
// burst to catch up (the next frame is due a period after the late one). fps=0: as fast as possible.
#include <opencv2/imgcodecs.hpp>
#include <opencv2/videoio.hpp>
#include <opencv2/videoio/registry.hpp>
#include <spdlog/spdlog.h>

#include <cstdio>
#include <filesystem>
#include <sstream>
#include <thread>

#include "depthmask/errors.h"
#include "depthmask/frame.h"
#include "depthmask/layouts.h"
#include "depthmask/live.h"
#include "depthmask/synth.h"
#include "live/uri.h"

namespace depthmask {
namespace {

namespace fs = std::filesystem;
using Clock = std::chrono::steady_clock;

std::string padded(uint64_t n) {
  char buf[32];
  std::snprintf(buf, sizeof buf, "%06llu", static_cast<unsigned long long>(n));
  return buf;
}

// Frames due every 1/fps seconds from the first one; fps 0: always due.
class Pacer {
 public:
  explicit Pacer(double fps)
      : period_(fps > 0 ? std::chrono::duration_cast<Clock::duration>(std::chrono::duration<double>(1.0 / fps))
                        : Clock::duration::zero()) {}
  void restart() { started_ = false; }
  // Sleeps until the next frame is due.
  void wait() {
    const auto now = Clock::now();
    if (!started_) {
      next_ = now;
      started_ = true;
    }
    if (next_ > now) std::this_thread::sleep_until(next_);
    // Late frames move the schedule instead of bursting to catch up.
    next_ = std::max(next_, now) + period_;
  }

 private:
  Clock::duration period_;
  Clock::time_point next_{};
  bool started_ = false;
};

class SyntheticSource final : public LiveSource {
 public:
  explicit SyntheticSource(const SourceUri& uri)
      : uri_(uri),
        size_(live_detail::query_size(uri, {640, 480})),
        fps_(live_detail::query_fps(uri, 30.0)),
        frames_(live_detail::query_count(uri, "frames")),
        pacer_(fps_) {}

  void open() override {
    next_ = 0;
    pacer_.restart();
  }

  bool read(CapturedFrame& frame) override {
    if (frames_ && next_ >= static_cast<uint64_t>(*frames_)) return false;
    SyntheticFrame f = render_synthetic_frame(static_cast<int>(next_ % 1000000), size_.width, size_.height);
    pacer_.wait();
    frame.depth = std::move(f.depth_mm);
    frame.mask = std::move(f.mask);
    frame.color = std::move(f.color);
    frame.sequence = next_;
    frame.id = padded(next_);
    frame.captured = Clock::now();
    ++next_;
    return true;
  }

  std::string describe() const override {
    std::ostringstream os;
    os << "synthetic scene " << size_.width << "x" << size_.height << " at " << fps_ << " fps, "
       << (frames_ ? std::to_string(*frames_) + " frames" : std::string("endless")) << " (" << uri_.text << ")";
    return os.str();
  }

 private:
  SourceUri uri_;
  live_detail::Size2 size_;
  double fps_;
  std::optional<long long> frames_;
  Pacer pacer_;
  uint64_t next_ = 0;
};

cv::Mat read_image(const fs::path& file, int flags, const std::string& what, const std::string& uri) {
  std::error_code ec;
  if (!fs::is_regular_file(file, ec))
    throw InputError("replay source '" + uri + "': " + what + " file '" + file.string() + "' does not exist");
  cv::Mat m = cv::imread(file.string(), flags);
  if (m.empty())
    throw InputError("replay source '" + uri + "': cannot decode " + what + " file '" + file.string() + "'");
  return m;
}

class ReplaySource final : public LiveSource {
 public:
  ReplaySource(const SourceUri& uri, const Config& config)
      : uri_(uri), config_(config), fps_(live_detail::query_fps(uri, 30.0)),
        loop_(live_detail::query_flag(uri, "loop", false)), pacer_(fps_) {
    config_.input.root = fs::path(uri.path);
    // The folder decides its layout unless the configuration names one.
    if (!config_.is_explicit("input.layout")) config_.input.layout = InputLayout::Auto;
  }

  void open() override {
    std::error_code ec;
    if (!fs::is_directory(config_.input.root, ec))
      throw InputError("replay source '" + uri_.text + "': folder '" + config_.input.root.string() +
                       "' does not exist or is not a folder");
    ResolvedInput r = resolve_input(config_);
    frames_ = std::move(r.listing.frames);
    layout_reason_ = r.reason;
    timed_ = !frames_.empty();
    for (const auto& f : frames_) timed_ = timed_ && f.timestamp >= 0;
    spdlog::info("replay source '{}': {} frames; {}; paced {}", uri_.text, frames_.size(), r.reason, pacing());
    pos_ = 0;
    sequence_ = 0;
    pacer_.restart();
    started_ = false;
  }

  bool read(CapturedFrame& frame) override {
    if (pos_ >= frames_.size()) {
      if (!loop_ || frames_.empty()) return false;
      pos_ = 0;
      // At a fixed rate the schedule runs on across the wrap (restarting it would make the first
      // frame of every pass due at once); recorded timestamps start a new pass from now.
      started_ = false;
    }
    const FrameEntry& f = frames_[pos_];
    frame.depth = read_image(f.depth, cv::IMREAD_UNCHANGED, "depth", uri_.text);
    check_depth_type(frame.depth, f.depth.string());
    if (f.instances.empty()) {
      frame.mask = read_image(f.mask, cv::IMREAD_UNCHANGED, "mask", uri_.text);
      check_mask_type(frame.mask, f.mask.string());
    } else {
      frame.mask = cv::Mat::zeros(frame.depth.size(), CV_8UC1);
      for (const auto& inst : f.instances) {
        const cv::Mat m = read_image(inst.second, cv::IMREAD_UNCHANGED, "instance mask", uri_.text);
        check_mask_type(m, inst.second.string());
        DM_EXPECT(m.size() == frame.depth.size(), InputError,
                  "replay source '" << uri_.text << "': instance mask '" << inst.second.string() << "' is "
                                    << m.cols << "x" << m.rows << ", its depth " << frame.depth.cols << "x"
                                    << frame.depth.rows);
        frame.mask.setTo(255, m != 0);
      }
    }
    frame.color = f.color.empty() ? cv::Mat() : read_image(f.color, cv::IMREAD_COLOR, "color", uri_.text);
    wait_for(f);
    frame.sequence = sequence_++;
    frame.id = f.id;
    frame.captured = Clock::now();
    ++pos_;
    return true;
  }

  std::string describe() const override {
    std::ostringstream os;
    os << "replay of '" << config_.input.root.string() << "'" << (loop_ ? " looped" : "") << ", " << pacing();
    if (!layout_reason_.empty()) os << " (" << layout_reason_ << ")";
    return os.str();
  }

 private:
  std::string pacing() const {
    if (timed_) return "at the recorded timestamps";
    if (fps_ <= 0) return "as fast as possible";
    std::ostringstream os;
    os << "at " << fps_ << " fps";
    return os.str();
  }

  void wait_for(const FrameEntry& f) {
    if (!timed_) {
      pacer_.wait();
      return;
    }
    // Recorded time since the pass's first frame, on the steady clock from when that frame was read.
    if (!started_) {
      started_ = true;
      start_ = Clock::now();
      t0_ = f.timestamp;
      return;
    }
    const auto due = start_ + std::chrono::duration_cast<Clock::duration>(std::chrono::duration<double>(f.timestamp - t0_));
    std::this_thread::sleep_until(due);
  }

  SourceUri uri_;
  Config config_;
  double fps_;
  bool loop_;
  Pacer pacer_;
  std::vector<FrameEntry> frames_;
  std::string layout_reason_;
  bool timed_ = false;
  size_t pos_ = 0;
  uint64_t sequence_ = 0;
  bool started_ = false;
  Clock::time_point start_{};
  double t0_ = 0;
};

// The last element of a gst-launch description ("a ! b ! appsink name=x") must be an appsink.
bool ends_in_appsink(const std::string& pipeline) {
  const auto bang = pipeline.rfind('!');
  std::string last = bang == std::string::npos ? pipeline : pipeline.substr(bang + 1);
  const auto b = last.find_first_not_of(" \t");
  return b != std::string::npos && last.compare(b, 7, "appsink") == 0 &&
         (last.size() == b + 7 || last[b + 7] == ' ' || last[b + 7] == '\t');
}

// gst:// and v4l2://: an OpenCV capture without RGB conversion.
class CaptureSource final : public LiveSource {
 public:
  CaptureSource(const SourceUri& uri, bool gst) : uri_(uri), gst_(gst), fps_(0) {
    if (gst_) {
      DM_EXPECT(ends_in_appsink(uri.path), ConfigError,
                "source URI '" << uri.text << "': the GStreamer pipeline must end in appsink (... ! appsink)");
    } else {
      size_ = live_detail::query_size(uri, {0, 0});
      fps_ = live_detail::query_fps(uri, 0.0);
    }
  }

  void open() override {
    cap_.release();
    got_frame_ = false;
    sequence_ = 0;
    bool ok = false;
    if (gst_) {
      // No CAP_PROP_CONVERT_RGB here: OpenCV 4.6's GStreamer backend refuses it as an open parameter
      // ("can't set property 16") and does not need it: it maps the appsink caps itself (GRAY16_LE to
      // CV_16UC1, GRAY8 to CV_8UC1, BGR to CV_8UC3).
      ok = cap_.open(uri_.path, cv::CAP_GSTREAMER);
      DM_EXPECT(ok && cap_.isOpened(), InputError,
                "gst source '" << uri_.text << "': the pipeline does not start (is OpenCV built with GStreamer, "
                               "and are the pipeline's elements installed? gst-launch-1.0 shows the error)");
    } else {
      const std::string& dev = uri_.path;
      std::error_code ec;
      const bool is_index = dev.find_first_not_of("0123456789") == std::string::npos;
      if (!is_index)
        DM_EXPECT(fs::exists(dev, ec), InputError, "v4l2 device '" << dev << "' does not exist");
      std::vector<int> params{cv::CAP_PROP_CONVERT_RGB, 0};
      if (size_.width > 0) params.insert(params.end(), {cv::CAP_PROP_FRAME_WIDTH, size_.width,
                                                        cv::CAP_PROP_FRAME_HEIGHT, size_.height});
      ok = is_index ? cap_.open(std::stoi(dev), cv::CAP_V4L2, params) : cap_.open(dev, cv::CAP_V4L2, params);
      DM_EXPECT(ok && cap_.isOpened(), InputError, "v4l2 device '" << dev << "' cannot be opened");
      // Depth cameras (RealSense, Orbbec) offer 16-bit depth as Z16; other cameras ignore the request.
      cap_.set(cv::CAP_PROP_FOURCC, cv::VideoWriter::fourcc('Z', '1', '6', ' '));
      cap_.set(cv::CAP_PROP_CONVERT_RGB, 0);
      if (fps_ > 0) cap_.set(cv::CAP_PROP_FPS, fps_);
    }
  }

  bool read(CapturedFrame& frame) override {
    DM_EXPECT(cap_.isOpened(), InputError, describe() << ": read() before open()");
    cv::Mat m;
    if (!cap_.read(m) || m.empty()) {
      // OpenCV's GStreamer backend reports an ended pipeline and a failed one alike.
      if (gst_ && got_frame_) return false;
      throw InputError(describe() + ": no frame (" + (gst_ ? "the pipeline produced none" : "the device stopped") + ")");
    }
    got_frame_ = true;
    frame.depth.release();
    frame.mask.release();
    frame.color.release();
    if (m.type() == CV_16UC1) frame.depth = m;
    else frame.color = m;
    frame.sequence = sequence_;
    frame.id = padded(sequence_++);
    frame.captured = Clock::now();
    return true;
  }

  std::string describe() const override {
    return (gst_ ? "gst source '" : "v4l2 source '") + uri_.text + "'";
  }

 private:
  SourceUri uri_;
  bool gst_;
  live_detail::Size2 size_;
  double fps_;
  cv::VideoCapture cap_;
  bool got_frame_ = false;
  uint64_t sequence_ = 0;
};

}  // namespace

std::vector<SourceSupport> live_source_support() {
  const bool gst = cv::videoio_registry::hasBackend(cv::CAP_GSTREAMER);
  const bool v4l2 = cv::videoio_registry::hasBackend(cv::CAP_V4L2);
  return {
      {"synthetic", true, "the synthetic scene"},
      {"replay", true, "any dataset `run` reads"},
      {"gst", gst, gst ? "OpenCV's GStreamer back end" : "OpenCV was built without GStreamer"},
      {"v4l2", v4l2, v4l2 ? "OpenCV's V4L2 back end (untested on hardware)" : "OpenCV was built without V4L2"},
      {"openni2", false, "not built in (OpenNI2 cameras: not supported yet)"},
  };
}

std::unique_ptr<LiveSource> make_live_source(const SourceUri& uri, const Config& config) {
  if (uri.scheme == "synthetic") return std::make_unique<SyntheticSource>(uri);
  if (uri.scheme == "replay") return std::make_unique<ReplaySource>(uri, config);
  if (uri.scheme == "gst") return std::make_unique<CaptureSource>(uri, true);
  if (uri.scheme == "v4l2") return std::make_unique<CaptureSource>(uri, false);
  throw ConfigError("source URI '" + uri.text + "': unknown scheme '" + uri.scheme +
                    "'; known schemes: " + live_detail::known_schemes());
}

}  // namespace depthmask
