// Progress for `depthmask run`: a bar on a terminal, periodic log lines otherwise.
#pragma once

#include <chrono>
#include <cstdio>

#include "depthmask/pipeline.h"

namespace depthmask::app {

class Progress final : public RunObserver {
 public:
  explicit Progress(std::FILE* out);
  ~Progress() override;
  void on_start(const DatasetListing& listing) override;
  void on_frame(const FrameEntry& frame, size_t done, size_t total, const FrameFailure* failure) override;

 private:
  void draw(size_t done, size_t total);
  void clear();

  std::FILE* out_;
  bool tty_;
  bool drawn_ = false;
  size_t failed_ = 0;
  std::chrono::steady_clock::time_point start_, last_;
};

}  // namespace depthmask::app
