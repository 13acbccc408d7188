// openni2://[DEVICE|FILE.oni]?size=WxH&fps=N&color=0|1&loop=0|1 through OpenNI2 (built when
// libopenni2-dev is present; DEPTHMASK_OPENNI2). Untested on hardware: no camera is attached to the
// development or CI machines; what runs there is the URI, the options and the errors.
//
//   openni2://                 the first device OpenNI2 finds (ANY_DEVICE)
//   openni2://1d27/0601@1/6    a device URI as OpenNI2 lists it (`depthmask live` logs the list)
//   openni2:///data/rec.oni    a recording (OpenNI2's file driver plays it at the recorded speed;
//                              loop=1 repeats it, otherwise its end ends the stream)
//
// Depth is read raw: 16-bit millimetres (PIXEL_FORMAT_DEPTH_1_MM, so depth.scale 0.001), the mode
// that matches size/fps (the sensor's default mode when neither is given). color=1 also starts the
// color stream (RGB888, handed on as BGR): depth and color frames carry their own timestamps and are
// paired by a StreamPairer within live.sync.tolerance_ms; a frame without its partner is dropped and
// counted (unpaired()). No registration is applied: depth stays in the depth camera's frame.
#include <OpenNI.h>
#include <opencv2/imgproc.hpp>

#include <cmath>
#include <deque>
#include <filesystem>
#include <mutex>
#include <sstream>

#include "depthmask/detail/log.h"
#include "depthmask/errors.h"
#include "depthmask/stream_pairer.h"
#include "pacing.h"
#include "uri.h"

namespace depthmask::detail {
namespace {

namespace fs = std::filesystem;

// OpenNI2 is initialised once per process and left up (its shutdown unloads the drivers).
void initialize_openni(const std::string& uri) {
  static std::mutex m;
  static bool done = false;
  std::lock_guard<std::mutex> lock(m);
  if (done) return;
  DM_EXPECT(openni::OpenNI::initialize() == openni::STATUS_OK, InputError,
            "openni2 source '" << uri << "': OpenNI2 does not start: " << openni::OpenNI::getExtendedError());
  done = true;
}

std::string list_devices() {
  openni::Array<openni::DeviceInfo> devices;
  openni::OpenNI::enumerateDevices(&devices);
  std::string s;
  for (int i = 0; i < devices.getSize(); ++i)
    s += (s.empty() ? "" : ", ") + std::string(devices[i].getUri()) + " (" + devices[i].getVendor() + " " +
         devices[i].getName() + ")";
  return s;
}

bool is_recording(const std::string& path) {
  return path.size() > 4 &&
         (path.compare(path.size() - 4, 4, ".oni") == 0 || path.compare(path.size() - 4, 4, ".ONI") == 0);
}

std::string describe_mode(const openni::VideoMode& m) {
  std::ostringstream os;
  os << m.getResolutionX() << "x" << m.getResolutionY() << "@" << m.getFps() << " format " << m.getPixelFormat();
  return os.str();
}

class OpenNi2Source final : public LiveSource {
 public:
  OpenNi2Source(const SourceUri& uri, const Config& config)
      : uri_(uri),
        size_(query_size(uri, {0, 0})),
        fps_(query_fps(uri, 0.0)),
        color_on_(query_flag(uri, "color", false)),
        loop_(query_flag(uri, "loop", false)),
        tolerance_(config.live.sync.tolerance_ms / 1000.0) {
    DM_EXPECT(!loop_ || is_recording(uri.path), ConfigError,
              "source URI '" << uri.text << "': loop=1 is for a recording (openni2:///path/file.oni)");
  }

  ~OpenNi2Source() override { close(); }

  void open() override {
    close();
    initialize_openni(uri_.text);
    const std::string& path = uri_.path;
    std::error_code ec;
    if (is_recording(path)) {
      DM_EXPECT(fs::is_regular_file(path, ec), InputError,
                "openni2 source '" << uri_.text << "': recording '" << path << "' does not exist");
    } else {
      const std::string devices = list_devices();
      DM_EXPECT(!devices.empty(), InputError,
                "openni2 source '" << uri_.text
                                   << "': no OpenNI2 device is attached (OpenNI2 lists none; is the camera "
                                   << "plugged in and its driver in OpenNI2's Drivers folder?)");
      detail::log().info("openni2: devices: {}", devices);
    }
    DM_EXPECT(device_.open(path.empty() ? openni::ANY_DEVICE : path.c_str()) == openni::STATUS_OK, InputError,
              "openni2 source '" << uri_.text << "': cannot open "
                                 << (path.empty() ? std::string("the first device") : "'" + path + "'") << ": "
                                 << openni::OpenNI::getExtendedError());
    if (device_.isFile()) {
      if (openni::PlaybackControl* pc = device_.getPlaybackControl()) pc->setRepeatEnabled(loop_);
    }
    start(depth_, openni::SENSOR_DEPTH, openni::PIXEL_FORMAT_DEPTH_1_MM, "depth");
    if (color_on_) {
      start(color_, openni::SENSOR_COLOR, openni::PIXEL_FORMAT_RGB888, "color");
      if (device_.setDepthColorSyncEnabled(true) != openni::STATUS_OK)
        detail::log().warn("openni2: the device does not synchronise depth and color; pairing by timestamp only");
    }
    pairer_ = std::make_unique<StreamPairer>(color_on_ ? 2 : 1, tolerance_, 8);
    pending_[0].clear();
    pending_[1].clear();
    sequence_ = 0;
    counter_ = 0;
  }

  bool read(CapturedFrame& frame) override {
    DM_EXPECT(depth_.isValid(), InputError, describe() << ": read() before open()");
    StreamPairer::Set set;
    while (!pairer_->pop(set)) {
      openni::VideoStream* streams[2] = {&depth_, &color_};
      int ready = 0;
      const openni::Status st = openni::OpenNI::waitForAnyStream(streams, color_on_ ? 2 : 1, &ready, 2000);
      if (st != openni::STATUS_OK) {
        if (device_.isFile() && !loop_) {
          // A recording played to its end: what is still pending is decided.
          pairer_->finish();
          if (pairer_->pop(set)) break;
          return false;
        }
        throw InputError(describe() + ": no frame within 2 s (" + openni::OpenNI::getExtendedError() + ")");
      }
      openni::VideoFrameRef f;
      DM_EXPECT(streams[ready]->readFrame(&f) == openni::STATUS_OK && f.isValid(), InputError,
                describe() << ": reading a " << (ready == 0 ? "depth" : "color")
                           << " frame failed: " << openni::OpenNI::getExtendedError());
      const int type = ready == 0 ? CV_16UC1 : CV_8UC3;
      const cv::Mat view(f.getHeight(), f.getWidth(), type, const_cast<void*>(f.getData()),
                         static_cast<size_t>(f.getStrideInBytes()));
      Held h;
      h.handle = counter_++;
      if (ready == 0)
        view.copyTo(h.image);
      else
        cv::cvtColor(view, h.image, cv::COLOR_RGB2BGR);
      pending_[ready].push_back(std::move(h));
      if (pending_[ready].size() > 8) pending_[ready].pop_front();  // the pairer holds at most 8 too
      pairer_->push(ready, static_cast<double>(f.getTimestamp()) * 1e-6, pending_[ready].back().handle);
    }
    frame.depth = take(0, set.item[0]);
    frame.color = color_on_ ? take(1, set.item[1]) : cv::Mat();
    frame.mask.release();
    frame.sequence = sequence_;
    frame.id = padded_id(sequence_++);
    frame.captured = Clock::now();
    return true;
  }

  uint64_t unpaired() const override { return unpaired_ + (pairer_ ? pairer_->unpaired() : 0); }

  std::string describe() const override { return "openni2 source '" + uri_.text + "'"; }

 private:
  struct Held {
    uint64_t handle = 0;
    cv::Mat image;
  };

  void start(openni::VideoStream& s, openni::SensorType sensor, openni::PixelFormat format, const char* what) {
    DM_EXPECT(s.create(device_, sensor) == openni::STATUS_OK, InputError,
              describe() << ": the device has no " << what << " stream: " << openni::OpenNI::getExtendedError());
    const auto& modes = s.getSensorInfo().getSupportedVideoModes();
    const openni::VideoMode current = s.getVideoMode();
    const int want_w = size_.width > 0 ? size_.width : current.getResolutionX();
    const int want_h = size_.height > 0 ? size_.height : current.getResolutionY();
    const int want_fps = fps_ > 0 ? static_cast<int>(std::lround(fps_)) : current.getFps();
    bool found = false;
    std::string offered;
    for (int i = 0; i < modes.getSize(); ++i) {
      const openni::VideoMode& m = modes[i];
      offered += (offered.empty() ? "" : ", ") + describe_mode(m);
      if (!found && m.getPixelFormat() == format && m.getResolutionX() == want_w && m.getResolutionY() == want_h &&
          m.getFps() == want_fps) {
        found = s.setVideoMode(m) == openni::STATUS_OK;
      }
    }
    // A recording plays the mode it was recorded in.
    if (!device_.isFile())
      DM_EXPECT(found, InputError,
                describe() << ": the " << what << " sensor offers no mode " << want_w << "x" << want_h << "@"
                           << want_fps << " in format " << static_cast<int>(format) << "; it offers: " << offered);
    DM_EXPECT(s.start() == openni::STATUS_OK, InputError,
              describe() << ": the " << what << " stream does not start: " << openni::OpenNI::getExtendedError());
    detail::log().info("openni2: {} stream {}", what, describe_mode(s.getVideoMode()));
  }

  // The image of `handle` on stream k; the older ones there are past pairing.
  cv::Mat take(int k, uint64_t handle) {
    auto& q = pending_[k];
    while (!q.empty() && q.front().handle < handle) q.pop_front();
    DM_EXPECT(!q.empty() && q.front().handle == handle, std::logic_error, "openni2: paired frame no longer held");
    cv::Mat m = std::move(q.front().image);
    q.pop_front();
    return m;
  }

  void close() {
    if (pairer_) unpaired_ += pairer_->unpaired();
    pairer_.reset();
    depth_.stop();
    depth_.destroy();
    color_.stop();
    color_.destroy();
    device_.close();
  }

  SourceUri uri_;
  Size2 size_;
  double fps_;
  bool color_on_, loop_;
  double tolerance_;
  openni::Device device_;
  openni::VideoStream depth_, color_;
  std::unique_ptr<StreamPairer> pairer_;
  std::deque<Held> pending_[2];
  uint64_t sequence_ = 0, counter_ = 0, unpaired_ = 0;
};

}  // namespace

std::unique_ptr<LiveSource> make_openni2_source(const SourceUri& uri, const Config& config) {
  return std::make_unique<OpenNi2Source>(uri, config);
}

}  // namespace depthmask::detail
