// FrameSlot's colour key (live.mask.color_key): the colour image in a backend buffer, and the key pass
// (color_key.h) that turns mask + colour into the plane of test results the masking pass then reads.
// Apart from frame.cpp, as registration is, so the plain masking path stays short.
#include <string>

#include "depthmask/config.h"
#include "depthmask/detail/pass_runner.h"
#include "depthmask/errors.h"
#include "depthmask/frame.h"

namespace depthmask {

std::optional<ColorKey> color_key_of(const Config& c) {
  const auto& k = c.live.mask.color_key;  // config/keys.cpp checked the bounds
  if (!k) return std::nullopt;
  ColorKey key;
  key.h_min = static_cast<uint8_t>(k->h[0]), key.h_max = static_cast<uint8_t>(k->h[1]);
  key.s_min = static_cast<uint8_t>(k->s[0]), key.s_max = static_cast<uint8_t>(k->s[1]);
  key.v_min = static_cast<uint8_t>(k->v[0]), key.v_max = static_cast<uint8_t>(k->v[1]);
  key.keep_inside = k->keep_inside;
  return key;
}

void FrameSlot::set_color_key(std::optional<ColorKey> key) {
  if (key) validate(*key);
  color_key_ = key;
}

void FrameSlot::stage_color(const cv::Mat& color, const std::string& what) {
  if (!color_key_ || color.empty()) {
    color_ = color;
    return;
  }
  DM_EXPECT(color.type() == CV_8UC3, InputError,
            what << " is " << color.channels() << "-channel of OpenCV depth " << color.depth()
                 << "; the colour key (live.mask.color_key) expects 8-bit BGR (CV_8UC3)");
  color_ = adopt(color, color_buf_);
  color_buf_.host_written();
}

FrameSlot::MaskPlane FrameSlot::mask_plane(const MaskParams& params) {
  if (!color_key_) return MaskPlane{&mask_buf_, mask_, params};
  DM_EXPECT(!color_.empty(), InputError,
            "the frame has no color image, but the colour key (live.mask.color_key) needs one: the source must "
            "deliver color (registered to the depth, "
                << mask_.cols << "x" << mask_.rows << ")");
  if (color_.data != color_buf_.host()) stage_color(color_, "the frame's color image");  // key set after set()
  DM_EXPECT(color_.size() == mask_.size(), InputError,
            "the frame's color image is " << color_.cols << "x" << color_.rows << " but its mask is " << mask_.cols
                                          << "x" << mask_.rows
                                          << "; the colour key (live.mask.color_key) needs color registered to "
                                             "the depth (the same size)");
  const size_t bytes = mask_.total();
  if (key_buf_.size() < bytes) {
    key_buf_ = Buffer();
    key_buf_ = backend_->allocate(bytes);
  }
  return MaskPlane{&key_buf_, cv::Mat(mask_.rows, mask_.cols, CV_8UC1, key_buf_.host()), union_mask_params(params)};
}

void FrameSlot::run_color_key(const detail::PassRunner& passes, const MaskParams& params) {
  if (!color_key_) return;
  ColorKeyJob job;
  job.mask_type = mask_.type() == CV_8UC1 ? MaskType::U8 : MaskType::U16;
  job.rows = mask_.rows;
  job.cols = mask_.cols;
  job.mask = passes.in(mask_buf_, mask_.total() * mask_.elemSize(), mask_.step[0]);
  job.color = passes.in<const uint8_t>(color_buf_, color_.total() * color_.elemSize(), color_.step[0]);
  job.out = passes.at<uint8_t>(key_buf_, static_cast<size_t>(mask_.cols));
  passes.pass(
      key_buf_, [&](CUstream_st* s) { launch_color_key(job, params, *color_key_, s); },
      [&] { color_key_cpu(job, params, *color_key_); });
}

}  // namespace depthmask
