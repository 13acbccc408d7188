// A frame's outputs: the backprojection behind the PLY point cloud (on the GPU when the backend
// executes there), and the writer that turns a masked frame into every configured output file.
#pragma once

#include <opencv2/core.hpp>

#include <filesystem>
#include <optional>
#include <string>
#include <vector>

#include "depthmask/backend.h"
#include "depthmask/config.h"
#include "depthmask/dataset.h"
#include "depthmask/encoders.h"
#include "depthmask/frame.h"
#include "depthmask/frame_stats.h"
#include "depthmask/kernels/backproject.h"
#include "depthmask/layouts.h"  // frame_intrinsics
#include "depthmask/sidecar.h"

namespace depthmask {

// Backprojects a FrameSlot's output depth into an XYZ image (CV_32FC3, metres, camera frame; (0,0,0)
// where a pixel is not kept) with the rule of backproject.h: the CUDA kernel on the slot's device
// buffer when the backend executes on the device, the CPU loop otherwise, with identical results. The
// XYZ buffer comes from the backend and only grows, so same-sized frames allocate once.
class Backprojector {
 public:
  explicit Backprojector(MemoryBackend& backend) : backend_(&backend) {}
  Backprojector(const Backprojector&) = delete;
  Backprojector& operator=(const Backprojector&) = delete;

  // After slot.run_mask(). The result stays valid until the next call.
  const cv::Mat& run(FrameSlot& slot, const Pinhole& k, float invalid);
  // Gives the XYZ buffer back (see FrameSlot::release_buffers). Never throws.
  void release_buffers() noexcept {
    xyz_ = cv::Mat();
    xyz_buf_ = Buffer();
  }

 private:
  MemoryBackend* backend_;
  Buffer xyz_buf_;
  cv::Mat xyz_;
};

// Refuses, before anything is written, a configuration whose outputs would overwrite an input: any
// frame's output file (every configured format, the preview, the sidecar) or the resume manifest that
// is one of the listed frames' files (depth, mask, color, instance masks) or input.intrinsics.
// Throws ConfigError (choose another output.dir) naming both files. FrameWriter::write() checks again
// per frame, through links.
void check_outputs_spare_inputs(const Config& config, const DatasetListing& listing);

// Whether output.format asks for the `reason` output ({id}.reason.png): the frame slots then run the
// reason pass (FrameSlot::set_reason).
bool wants_reason(const Config& config);

// Writes one frame's outputs in every configured format (and the preview), atomically, at
// output_stem(): {stem}.tiff .npy .exr .mm.png .ply .reason.png .json .preview.png. The JSON sidecar is written
// last and lists the others.
class FrameWriter {
 public:
  FrameWriter(const Config& c, MemoryBackend& backend);

  // Whether the frame's color image is needed (PLY colors, the preview).
  bool wants_color() const;

  // Writes frame f from `slot` (after run_mask). Returns the files written, paths relative to
  // output.dir; adds what the output kept (frame_stats over depth.min..depth.max) to `stats` when
  // given, once every file is written. Throws OutputError (cannot write), ConfigError (an output would
  // overwrite an input), InputError (PLY without usable intrinsics), CudaError.
  std::vector<OutputFile> write(const FrameEntry& f, FrameSlot& slot, FrameStats* stats = nullptr);
  // Gives the writer's backend buffers back (FrameSlot::release_buffers). Never throws.
  void release_buffers() noexcept { backprojector_.release_buffers(); }

 private:
  const Config* c_;
  std::string shard_tag_;  // in the temporary files' names (shard.h)
  MemoryBackend* backend_;
  Backprojector backprojector_;
};

}  // namespace depthmask
