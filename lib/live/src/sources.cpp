// The live sources behind make_live_source: synthetic://, replay://, gst://, v4l2://, openni2:// and
// ros2:// (ros2_live.cpp, over lib/live_ros2).
//
//   synthetic://?size=640x480&fps=30&frames=N  render_synthetic_frame(i, w, h): 16-bit mm depth, the
//       label mask (0 background, 1..4 objects) and BGR color; endless unless frames=N.
//   replay://DIR?fps=30&loop=0  any folder `run` reads, decoded ahead in parallel (replay.cpp).
//   openni2://[DEVICE|FILE.oni]  OpenNI2 cameras and recordings, when built with it (openni2.cpp).
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

#include <cstdio>
#include <filesystem>
#include <sstream>
#include <thread>

#include "depthmask/errors.h"
#include "depthmask/frame.h"
#include "depthmask/layouts.h"
#include "depthmask/live.h"
#include "depthmask/synth.h"
#include "pacing.h"
#include "ros2_live.h"
#include "uri.h"

namespace depthmask {
namespace {

namespace fs = std::filesystem;
using detail::Clock;
using detail::Pacer;
using detail::padded_id;

class SyntheticSource final : public LiveSource {
 public:
  explicit SyntheticSource(const SourceUri& uri)
      : uri_(uri),
        size_(detail::query_size(uri, {640, 480})),
        fps_(detail::query_fps(uri, 30.0)),
        frames_(detail::query_count(uri, "frames")),
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
    frame.id = padded_id(next_);
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
  detail::Size2 size_;
  double fps_;
  std::optional<long long> frames_;
  Pacer pacer_;
  uint64_t next_ = 0;
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
      size_ = detail::query_size(uri, {0, 0});
      fps_ = detail::query_fps(uri, 0.0);
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
                "gst source '" << uri_.text
                               << "': the pipeline does not start (is OpenCV built with GStreamer, "
                                  "and are the pipeline's elements installed? gst-launch-1.0 shows the error)");
    } else {
      const std::string& dev = uri_.path;
      std::error_code ec;
      const bool is_index = dev.find_first_not_of("0123456789") == std::string::npos;
      if (!is_index) DM_EXPECT(fs::exists(dev, ec), InputError, "v4l2 device '" << dev << "' does not exist");
      std::vector<int> params{cv::CAP_PROP_CONVERT_RGB, 0};
      if (size_.width > 0)
        params.insert(params.end(), {cv::CAP_PROP_FRAME_WIDTH, size_.width, cv::CAP_PROP_FRAME_HEIGHT, size_.height});
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
      throw InputError(describe() + ": no frame (" + (gst_ ? "the pipeline produced none" : "the device stopped") +
                       ")");
    }
    got_frame_ = true;
    frame.depth.release();
    frame.mask.release();
    frame.color.release();
    if (m.type() == CV_16UC1)
      frame.depth = m;
    else
      frame.color = m;
    frame.sequence = sequence_;
    frame.id = padded_id(sequence_++);
    frame.captured = Clock::now();
    return true;
  }

  std::string describe() const override { return (gst_ ? "gst source '" : "v4l2 source '") + uri_.text + "'"; }

 private:
  SourceUri uri_;
  bool gst_;
  detail::Size2 size_;
  double fps_;
  cv::VideoCapture cap_;
  bool got_frame_ = false;
  uint64_t sequence_ = 0;
};

}  // namespace

namespace detail {
std::string padded_id(uint64_t n) {
  char buf[32];
  std::snprintf(buf, sizeof buf, "%06llu", static_cast<unsigned long long>(n));
  return buf;
}
}  // namespace detail

std::vector<SourceSupport> live_source_support() {
  const bool gst = cv::videoio_registry::hasBackend(cv::CAP_GSTREAMER);
  const bool v4l2 = cv::videoio_registry::hasBackend(cv::CAP_V4L2);
  return {
    {"synthetic", true, "the synthetic scene"}, {"replay", true, "any dataset `run` reads"},
        {"gst", gst, gst ? "OpenCV's GStreamer back end" : "OpenCV was built without GStreamer"},
        {"v4l2", v4l2, v4l2 ? "OpenCV's V4L2 back end (untested on hardware)" : "OpenCV was built without V4L2"},
#if DEPTHMASK_HAVE_OPENNI2
        {"openni2", true, "OpenNI2 depth cameras and .oni recordings (untested on hardware)"},
#else
        {"openni2", false, "not built in (this build has no OpenNI2: install libopenni2-dev and rebuild)"},
#endif
        {"ros2", detail::ros2_built(), detail::ros2_note()},
  };
}

std::unique_ptr<LiveSource> make_live_source(const SourceUri& uri, const Config& config) {
  if (uri.scheme == "synthetic") return std::make_unique<SyntheticSource>(uri);
  if (uri.scheme == "replay") return detail::make_replay_source(uri, config);
  if (uri.scheme == "gst") return std::make_unique<CaptureSource>(uri, true);
  if (uri.scheme == "v4l2") return std::make_unique<CaptureSource>(uri, false);
  if (uri.scheme == "ros2") return detail::make_ros2_source(uri, config);
  if (uri.scheme == "openni2") {
#if DEPTHMASK_HAVE_OPENNI2
    return detail::make_openni2_source(uri, config);
#else
    throw ConfigError("source URI '" + uri.text +
                      "': openni2:// is not built in: this depthmask was built without OpenNI2 (install libopenni2-dev "
                      "and rebuild; CMake option DEPTHMASK_OPENNI2)");
#endif
  }
  throw ConfigError("source URI '" + uri.text + "': unknown scheme '" + uri.scheme +
                    "'; known schemes: " + detail::known_schemes());
}

}  // namespace depthmask
