#include "preview.h"

#include <dlfcn.h>
#include <opencv2/highgui.hpp>
#include <opencv2/imgproc.hpp>

#include <cstdlib>

#include "depthmask/detail/log.h"

namespace depthmask::detail {

namespace {

constexpr const char* kWindow = "depthmask live";
// The output thread copies a frame for the window at most this often (a screen needs no more).
constexpr auto kMinOfferInterval = std::chrono::milliseconds(33);

std::string env(const char* name) {
  const char* v = std::getenv(name);
  return v ? v : "";
}

// XOpenDisplay through dlopen: asks the X server without linking libX11 (HighGUI's Qt/GTK bring it).
bool x_display_reachable(const std::string& display) {
  void* lib = dlopen("libX11.so.6", RTLD_LAZY | RTLD_LOCAL);
  if (!lib) return false;
  using Open = void* (*)(const char*);
  using Close = int (*)(void*);
  const auto open = reinterpret_cast<Open>(dlsym(lib, "XOpenDisplay"));
  const auto close = reinterpret_cast<Close>(dlsym(lib, "XCloseDisplay"));
  bool ok = false;
  if (open && close) {
    if (void* d = open(display.c_str())) {
      close(d);
      ok = true;
    }
  }
  dlclose(lib);
  return ok;
}

}  // namespace

std::string preview_unavailable_reason() {
  const std::string display = env("DISPLAY");
  if (display.empty())
    return env("WAYLAND_DISPLAY").empty() ? "no display ($DISPLAY and $WAYLAND_DISPLAY are unset)"
                                          : "no X display ($DISPLAY is unset; HighGUI here needs X11 or XWayland)";
  if (!x_display_reachable(display)) return "the X display '" + display + "' cannot be reached";
  return "";
}

Preview::Preview(const Config& c) : lo_(c.depth.min), hi_(c.depth.max) {
  if (const std::string why = preview_unavailable_reason(); !why.empty()) {
    detail::log().warn("live.preview: {}: the preview is off; masking goes on", why);
    return;
  }
  on_ = true;
}

Preview::~Preview() {
  if (!window_) return;
  try {
    cv::destroyWindow(kWindow);
    cv::waitKey(1);
  } catch (const cv::Exception& e) {
    detail::log().debug("live.preview: closing the window: {}", e.what());
  }
}

void Preview::turn_off(const std::string& why) {
  detail::log().warn("live.preview: {}: the preview is off; masking goes on", why);
  on_ = false;
}

void Preview::offer(const cv::Mat& masked) {
  if (!on()) return;
  const auto now = std::chrono::steady_clock::now();
  if (now - last_offer_ < kMinOfferInterval) return;
  // Never wait: while the window side takes the previous frame, this one is not shown.
  std::unique_lock<std::mutex> lock(m_, std::try_to_lock);
  if (!lock.owns_lock() || fresh_) return;
  masked.copyTo(latest_);
  fresh_ = true;
  last_offer_ = now;
}

void Preview::pump() {
  if (!on()) return;
  try {
    if (!window_) {
      cv::namedWindow(kWindow, cv::WINDOW_AUTOSIZE);
      window_ = true;
      detail::log().info("live.preview: showing the masked depth ({:.2f}..{:.2f} m colour-mapped; black = masked out)",
                         lo_, hi_);
    }
    bool got = false;
    {
      std::lock_guard<std::mutex> lock(m_);
      if (fresh_) {
        cv::swap(latest_, drawing_);  // the output thread copies the next frame into the other buffer
        fresh_ = false;
        got = true;
      }
    }
    if (got) {
      render(drawing_);
      cv::imshow(kWindow, colored_);
      ++shown_;
    }
    cv::waitKey(1);  // draws and handles the window's events
    if (shown_ > 0 && cv::getWindowProperty(kWindow, cv::WND_PROP_VISIBLE) < 1) {
      detail::log().info("live.preview: the window was closed; masking goes on");
      on_ = false;
    }
  } catch (const cv::Exception& e) {
    turn_off(e.what());
  }
}

// depth.min..depth.max onto the colour map; masked-out and invalid pixels (NaN, 0, outside) black.
void Preview::render(const cv::Mat& depth) {
  const double span = hi_ > lo_ ? hi_ - lo_ : 1.0;
  depth.convertTo(scaled_, CV_8UC1, 254.0 / span, 1.0 - 254.0 * lo_ / span);
  cv::applyColorMap(scaled_, colored_, cv::COLORMAP_TURBO);
  for (int y = 0; y < depth.rows; ++y) {
    const float* d = depth.ptr<float>(y);
    cv::Vec3b* c = colored_.ptr<cv::Vec3b>(y);
    for (int x = 0; x < depth.cols; ++x)
      if (!(d[x] >= lo_ && d[x] <= hi_) || d[x] == 0.0f) c[x] = cv::Vec3b(0, 0, 0);
  }
}

}  // namespace depthmask::detail
