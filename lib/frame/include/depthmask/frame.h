// One frame's host images, decoded straight into buffers owned by the memory backend, and the
// masking step over them. A FrameSlot is reused frame after frame: its buffers only grow, so a run of
// same-sized frames allocates once.
#pragma once

#include <opencv2/core.hpp>

#include <cstdint>
#include <memory>
#include <optional>
#include <vector>

#include "depthmask/backend.h"
#include "depthmask/dataset.h"
#include "depthmask/geometry.h"
#include "depthmask/image_reader.h"
#include "depthmask/kernels/color_key.h"
#include "depthmask/kernels/mask_rule.h"
#include "depthmask/kernels/reason.h"

namespace depthmask {

namespace detail {
class PassRunner;
}

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
  // CV_8UC1 codes of kernels/drop_reason.h (0 kept), after run_mask() with set_reason(true); else empty.
  const cv::Mat& reason() const { return reason_; }
  // The backend buffer behind out(): GPU post-processing (the PLY backprojection) reads its device view.
  Buffer& out_buffer() { return out_buf_; }
  // The slot's own stream (null for the cpu backend): its copies and kernels go there, so slots in
  // flight at once overlap on the device.
  CUstream_st* stream() const { return stream_.get(); }
  // How the slot's thread waits for its device work (Spin by default; the batch pipeline blocks).
  void set_wait(Wait w) { wait_ = w; }
  Wait wait() const { return wait_; }
  MemoryBackend& backend() const { return *backend_; }

  // Decodes the frame's files (color only when want_color) through the slot's ImageReader
  // (image_reader.h), straight into the backend's buffers. Throws InputError naming the file and what
  // was expected.
  void load(const FrameEntry& frame, bool want_color);

  // A rosbag2 frame (FrameEntry::bag) decodes its messages instead of files: load() its depth, mask and
  // colour; with several mask topics (FrameEntry::instances names them) load_depth() then
  // load_instance_union() unite them.
  // Per-instance masks (FrameEntry::instances): load_depth() decodes the depth (and color) only; then
  // either load_mask() puts one instance's mask beside it (mask.per_instance: one pass per instance,
  // the depth decoded once), or load_instance_union() puts the union of all instances' mask tests
  // (255 where any instance passes `params`' mask test, 0 elsewhere; mask it with
  // union_mask_params(params); ImageReader::read_instance_union). Throw InputError naming the file,
  // also when a mask's size differs from the depth's (registration aside) or from the frame's other
  // instance masks. A mask file that is an indexed-colour PNG gives its palette indices (libpng).
  void load_depth(const FrameEntry& frame, bool want_color);
  void load_mask(const std::filesystem::path& mask_file, const std::filesystem::path& depth_file);
  void load_instance_union(const FrameEntry& frame, const MaskParams& params);

  // Fills the slot from images already in memory (synthetic sources, tests): copies into the
  // backend buffers. Same checks as load().
  void set(const cv::Mat& depth, const cv::Mat& mask, const cv::Mat& color = cv::Mat());

  // Runs the masking pass on the backend (GPU kernel or CPU loop, as detail::PassRunner decides for
  // every pass of the frame) and leaves the result in out(), ready to read on the host. With
  // registration, out() is on the mask's grid. A backend with its own schedule for the pass
  // (MemoryBackend::make_mask_schedule) gets the frame first: on the copy backend a large enough frame
  // goes in row bands whose uploads, kernels and downloads overlap.
  void run_mask(const MaskParams& params);
  // Row bands for the copy backend's schedule: 0 = by size (the default), 1 = never split, n = n bands
  // (at most 16).
  void set_copy_bands(int bands) { copy_bands_ = bands; }
  // Bands of the CPU loop (mask_cpu's `tasks`): 0 = oneTBB's split (the default), n = exactly n.
  void set_cpu_tasks(int tasks) { cpu_tasks_ = tasks; }
  // Bounds on the files load() reads (the defaults of InputLimits until set).
  void set_limits(const InputLimits& limits) { reader_.set_limits(limits); }
  // Which decoder read the slot's last image (for tests and the bench).
  Decoder last_decoder() const { return reader_.last_decoder(); }
  // The channels of the loaded depth file as stored (ImageReader::last_stored_channels): 3 when it was
  // read as its one channel out of three equal ones, for the run's once-per-run log line.
  int depth_stored_channels() const { return depth_channels_; }

  // Registers depth onto the mask's grid before masking, per frame, by the rule of
  // plan_registration() (registration.h): `mode` as configured, `geometry` when the input's depth
  // comes from another camera than the mask. The default is none: depth and mask must have the same
  // size. Throws ConfigError for reproject without a geometry. Defined in frame_registration.cpp.
  void set_registration(RegistrationMode mode, std::optional<CameraGeometry> geometry = std::nullopt);

  // A colour key (color_key.h; live.mask.color_key) AND-ed with the mask test: run_mask() first runs
  // the key pass on the backend (the GPU kernel or the CPU loop) into an 8-bit plane of test results
  // (255 = the mask test and the key both keep the pixel), then masks with that plane and
  // union_mask_params(params). With a key, set() and load() copy the colour image into a backend
  // buffer (it only grows), and a frame whose colour is missing, not 8-bit BGR, or not the mask's size
  // is rejected (InputError). nullopt (the default): no key. Throws std::invalid_argument for a key
  // out of bounds.
  void set_color_key(std::optional<ColorKey> key);

  // The `reason` output (output.format reason; kernels/reason.h): with `on`, every run_mask() also runs
  // the reason pass on the backend (its kernels or its CPU loop, the masking pass's side) into an
  // 8-bit plane of codes, ready on the host in reason() with out(). `configured`: the rule with the
  // configured depth range when the passes run with a narrower one (live.mask.depth_band), so the
  // codes tell the band (8) from the range (6, 7); nullopt: the pass's own range. With the reason pass
  // the copy backend's row-band schedule is not used (the pass reads the whole frame on the device).
  void set_reason(bool on, std::optional<MaskParams> configured = std::nullopt);

  // Gives every backend buffer back (after waiting for the slot's stream): after a frame failed for
  // memory (ResourceError), so what it grew does not crowd out the frames after it. The next frame
  // allocates afresh. Never throws.
  void release_buffers() noexcept;

 private:
  cv::Mat adopt(const cv::Mat& src, Buffer& buf);
  // A rows x cols header of `type` on `buf` (grown when too small), for a decoder to write into.
  cv::Mat host_mat(int rows, int cols, int type, Buffer& buf);
  void check_pair(const std::filesystem::path& depth_file, const std::filesystem::path& mask_file) const;
  // A rosbag2 frame (FrameEntry::bag): its depth, mask (with `unite`: the union of its mask topics'
  // tests, as load_instance_union) and colour messages decoded into the buffers (frame_bag.cpp).
  void load_bag_images(const FrameEntry& frame, bool want_color, const MaskParams* unite);
  void load_color(const FrameEntry& frame, bool want_color);
  // Registration, then masking of the registered float depth (frame_registration.cpp).
  void run_mask_registered(const MaskParams& params, RegistrationMode mode);
  // The colour image into color_buf_ when a key is set (else kept as the caller's header).
  void stage_color(const cv::Mat& color, const std::string& what);
  // What the masking pass reads as its mask: the frame's mask with `params`, or with a colour key the
  // key pass's plane (key_buf_, sized here) with union_mask_params(params).
  struct MaskPlane {
    Buffer* buf;
    cv::Mat mat;
    MaskParams params;
  };
  MaskPlane mask_plane(const MaskParams& params);
  // The key pass into key_buf_, one of `passes`' (inside passes.run()). Nothing without a key.
  void run_color_key(const detail::PassRunner& passes, const MaskParams& params);
  // The reason pass over the planes the masking pass read, into reason_buf_ (sized by
  // prepare_reason()), then to the host; inside passes.run() after the masking pass
  // (frame_reason.cpp). `rule`: the masking pass's parameters; `depth_raw`: whether the frame's
  // depth was 16-bit before registration.
  void prepare_reason(int rows, int cols, const MaskParams& rule);
  void run_reason(const detail::PassRunner& passes, ReasonJob job, ReasonParams params);
  ReasonParams reason_params_for(const MaskParams& rule, const MaskParams& frame_params, bool registered,
                                 bool depth_raw) const;

  MemoryBackend* backend_;
  StreamHandle stream_;
  Wait wait_ = Wait::Spin;
  Buffer depth_buf_, mask_buf_, out_buf_;
  cv::Mat depth_, mask_, color_, out_;  // the current frame (empty until it loaded completely)
  cv::Mat color_decoded_;               // reused: the colour image as decoded
  bool bag_want_color_ = false;         // a bag frame's load_depth(): its colour wish, for load_instance_union()
  ImageReader reader_;                  // the file buffer and the PNG reader's scratch, reused
  int depth_channels_ = 0;              // depth_stored_channels()
  RegistrationMode registration_ = RegistrationMode::None;
  std::optional<CameraGeometry> geometry_;
  Buffer registered_buf_;  // registered depth, float metres on the mask grid; grows only
  std::optional<ColorKey> color_key_;
  Buffer color_buf_, key_buf_;  // with a key: the BGR colour and the key pass's 8-bit plane; grow only
  bool reason_on_ = false;
  std::optional<MaskParams> reason_configured_;
  Buffer reason_buf_, reason_scratch_buf_;  // the codes and, with erode, the row windows; grow only
  cv::Mat reason_;
  int copy_bands_ = 0;
  int cpu_tasks_ = 0;
  std::unique_ptr<MaskSchedule> schedule_;  // the backend's own schedule (copy: row bands), made at the first frame
};

// The per-pixel rule's parameters from the configuration.
struct Config;
// input.max_file_bytes and input.max_image_pixels.
InputLimits input_limits(const Config& config);
MaskParams mask_params(const Config& config);
// The same for one frame: its own depth scale (BOP depth_scale) when it has one.
MaskParams mask_params(const Config& config, const FrameEntry& frame);

// live.mask.color_key as the colour key's parameters (FrameSlot::set_color_key), nullopt when unset.
std::optional<ColorKey> color_key_of(const Config& config);

// The rule for a mask that already holds mask-test results (load_instance_union): keep where
// mask > 0, with params' depth rule and erode.
MaskParams union_mask_params(const MaskParams& params);

}  // namespace depthmask
