// Internal: live.preview, a HighGUI window showing the masked depth, colour-mapped. It never stalls
// the pipeline: the output thread offers each frame without waiting (a frame is skipped while the
// window side holds the previous one, and at most ~30 frames a second are copied), and the window is
// drawn by pump() from the thread that called run_live (its supervising loop, not a pipeline stage):
// HighGUI's Qt wants one GUI thread for the process's life, and for the CLI that is the main thread.
// Without a display it says so once and stays off.
#pragma once

#include <opencv2/core.hpp>

#include <atomic>
#include <chrono>
#include <mutex>
#include <string>

#include "depthmask/config.h"

namespace depthmask::detail {

// Why a preview window cannot open here, or empty when it can: $DISPLAY unset or its X server not
// reachable. OpenCV's HighGUI (Qt or GTK) ends the process when it cannot reach a display, so this
// is asked before any window is made. Wayland without XWayland ($WAYLAND_DISPLAY alone) counts as no
// display: HighGUI draws through X11 here.
std::string preview_unavailable_reason();

class Preview {
 public:
  // Logs once why the preview is off when there is no display; the window opens at the first pump().
  explicit Preview(const Config& c);
  ~Preview();  // closes the window (call from the pump() thread)
  Preview(const Preview&) = delete;
  Preview& operator=(const Preview&) = delete;

  bool on() const { return on_.load(std::memory_order_relaxed); }
  // From the output thread: the masked depth (CV_32FC1 metres). Returns at once.
  void offer(const cv::Mat& masked);
  // From the GUI thread, every few ms: opens the window the first time, shows the latest frame
  // offered, handles the window's events. Cheap when nothing new was offered.
  void pump();
  uint64_t shown() const { return shown_.load(); }

 private:
  void turn_off(const std::string& why);
  void render(const cv::Mat& depth);

  double lo_, hi_;  // the colour map's range in metres (depth.min..depth.max)
  std::atomic<bool> on_{false};
  std::atomic<uint64_t> shown_{0};
  std::mutex m_;
  cv::Mat latest_, drawing_;  // handed over by swapping, so the output thread copies into a free one
  cv::Mat scaled_, colored_;  // the window thread's reused images
  bool fresh_ = false;
  bool window_ = false;  // made (pump() thread)
  std::chrono::steady_clock::time_point last_offer_{};
};

}  // namespace depthmask::detail
