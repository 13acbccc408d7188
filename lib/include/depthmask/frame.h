// One frame's host images, decoded straight into buffers owned by the memory backend, and the
// masking step over them. A FrameSlot is reused frame after frame: its buffers only grow, so a run of
// same-sized frames allocates once.
#pragma once

#include <opencv2/core.hpp>

#include <cstdint>
#include <memory>
#include <vector>

#include "depthmask/backend.h"
#include "depthmask/dataset.h"
#include "depthmask/kernels/mask_rule.h"

namespace depthmask {

// Hands a backend buffer to OpenCV as the memory of the Mat it decodes into (when it is big enough;
// otherwise OpenCV's own allocator is used and the slot copies once). Defined in frame.cpp.
class BufferMatAllocator;

class FrameSlot {
 public:
  explicit FrameSlot(MemoryBackend& backend);
  ~FrameSlot();
  FrameSlot(const FrameSlot&) = delete;
  FrameSlot& operator=(const FrameSlot&) = delete;

  // Headers on the buffers' host memory (valid after load/prepare until the next one).
  const cv::Mat& depth() const { return depth_; }  // CV_16UC1 raw units or CV_32FC1 metres
  const cv::Mat& mask() const { return mask_; }    // CV_8UC1 or CV_16UC1
  const cv::Mat& color() const { return color_; }  // CV_8UC3 BGR, or empty
  const cv::Mat& out() const { return out_; }      // CV_32FC1 metres, after mask()
  // The backend buffer behind out(): GPU post-processing (the PLY backprojection) reads its device view.
  Buffer& out_buffer() { return out_buf_; }

  // Decodes the frame's files (color only when want_color). Throws InputError naming the file and
  // what was expected.
  void load(const FrameEntry& frame, bool want_color);

  // Fills the slot from images already in memory (synthetic sources, tests): copies into the
  // backend buffers. Same checks as load().
  void set(const cv::Mat& depth, const cv::Mat& mask, const cv::Mat& color = cv::Mat());

  // Runs the masking pass on the backend (GPU kernel or CPU loop) and leaves the result in out(),
  // ready to read on the host.
  void run_mask(const MaskParams& params);

 private:
  cv::Mat decode_into(const std::string& what, const std::filesystem::path& file, Buffer& buf,
                      BufferMatAllocator& alloc);
  cv::Mat adopt(const cv::Mat& src, Buffer& buf);
  void check_pair(const std::filesystem::path& depth_file, const std::filesystem::path& mask_file) const;

  MemoryBackend* backend_;
  Buffer depth_buf_, mask_buf_, out_buf_;
  // Declared before the Mats: Mats decoded through an allocator must be released before it.
  std::unique_ptr<BufferMatAllocator> depth_alloc_, mask_alloc_;
  cv::Mat depth_, mask_, color_, out_;  // the current frame (empty until it loaded completely)
  std::vector<uint8_t> file_bytes_;  // reused read buffer
};

// Checks an image's pixel type for its role; throws InputError naming the file and the expected types.
void check_depth_type(const cv::Mat& m, const std::string& file);
void check_mask_type(const cv::Mat& m, const std::string& file);

// The per-pixel rule's parameters from the configuration.
struct Config;
MaskParams mask_params(const Config& config);

}  // namespace depthmask
