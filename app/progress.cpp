#include "progress.h"

#include <unistd.h>

#include <cstdio>
#include <string>

#include "depthmask/logging.h"

namespace depthmask::app {

Progress::Progress(std::FILE* out) : out_(out), tty_(::isatty(::fileno(out)) != 0) {}

Progress::~Progress() { clear(); }

void Progress::on_start(const DatasetListing& listing) {
  start_ = last_ = std::chrono::steady_clock::now();
  log_line(LogLevel::Info, std::to_string(listing.frames.size()) + " frame(s) to process");
}

void Progress::clear() {
  if (tty_ && drawn_) {
    std::fputs("\r\033[K", out_);
    std::fflush(out_);
    drawn_ = false;
  }
}

void Progress::draw(size_t done, size_t total) {
  const double secs = std::chrono::duration<double>(std::chrono::steady_clock::now() - start_).count();
  const double fps = secs > 0 ? static_cast<double>(done) / secs : 0.0;
  if (tty_) {
    constexpr int kWidth = 32;
    const int filled = total ? static_cast<int>(kWidth * done / total) : kWidth;
    std::string bar(static_cast<size_t>(filled), '#');
    bar.resize(kWidth, '.');
    std::fprintf(out_, "\r\033[K[%s] %zu/%zu  %.1f frames/s%s", bar.c_str(), done, total, fps,
                 failed_ ? ("  " + std::to_string(failed_) + " failed").c_str() : "");
    std::fflush(out_);
    drawn_ = true;
  } else {
    char line[128];
    std::snprintf(line, sizeof line, "processed %zu/%zu frames (%.1f frames/s, %zu failed)", done, total, fps, failed_);
    log_line(LogLevel::Info, line);
  }
}

void Progress::on_frame(const FrameEntry&, size_t done, size_t total, const FrameFailure* failure) {
  if (failure) {
    ++failed_;
    clear();  // the error line follows on a clean line
    return;
  }
  const auto now = std::chrono::steady_clock::now();
  // A terminal redraws ten times a second; logs get a line every five seconds and at the end.
  const auto period = tty_ ? std::chrono::milliseconds(100) : std::chrono::milliseconds(5000);
  if (done == total || now - last_ >= period) {
    last_ = now;
    draw(done, total);
    if (tty_ && done == total) clear();
  }
}

}  // namespace depthmask::app
