// FrameSlot's registration step: depth registered onto the mask's grid (resample or reproject) into
// a backend buffer, then the mask rule over that float depth. Apart from frame.cpp so the masking
// path stays as it was.
#include <utility>

#include "depthmask/detail/pass_runner.h"
#include "depthmask/errors.h"
#include "depthmask/frame.h"
#include "depthmask/kernels/mask_kernel.h"
#include "depthmask/registration.h"

namespace depthmask {

void FrameSlot::set_registration(RegistrationMode mode, std::optional<CameraGeometry> geometry) {
  check_registration(mode, geometry);
  if (geometry) (void)reproject_params(*geometry);  // unusable geometry fails here, not at the first frame
  registration_ = mode;
  geometry_ = geometry;
}

void FrameSlot::run_mask_registered(const MaskParams& params, RegistrationMode mode) {
  const int rows = mask_.rows, cols = mask_.cols;
  const size_t grid_step = static_cast<size_t>(cols) * sizeof(float);
  const size_t grid_bytes = static_cast<size_t>(rows) * grid_step;
  // Both buffers only grow: same-sized frames allocate nothing in steady state.
  if (out_buf_.size() < grid_bytes) {
    out_ = cv::Mat();
    out_buf_ = Buffer();
    out_buf_ = backend_->allocate(grid_bytes);
  }
  if (registered_buf_.size() < grid_bytes) {
    registered_buf_ = Buffer();
    registered_buf_ = backend_->allocate(grid_bytes);
  }
  out_ = cv::Mat(rows, cols, CV_32FC1, out_buf_.host());
  // With a colour key the masking pass reads the key pass's plane (frame_color_key.cpp).
  const MaskPlane plane = mask_plane(params);

  // Everything that can reject the frame is computed before any work is enqueued.
  const DepthDecode decode = depth_decode(params);
  const MaskParams mask_p = registered_mask_params(plane.params, depth_.type() == CV_16UC1);
  prepare_reason(rows, cols, mask_p);
  ResampleMap map;
  ReprojectParams proj;
  if (mode == RegistrationMode::Resample)
    map = resample_map(geometry_, depth_.size(), mask_.size());
  else
    proj = reproject_params(*geometry_);  // plan_registration() gives reproject only with a geometry

  RegisterJob reg;
  reg.depth_type = depth_.type() == CV_16UC1 ? DepthType::U16 : DepthType::F32;
  reg.depth_rows = depth_.rows;
  reg.depth_cols = depth_.cols;
  reg.out_rows = rows;
  reg.out_cols = cols;
  MaskJob job;
  job.depth_type = DepthType::F32;
  job.mask_type = plane.mat.type() == CV_8UC1 ? MaskType::U8 : MaskType::U16;
  job.rows = rows;
  job.cols = cols;

  const detail::PassRunner passes(*backend_, stream(), wait_);
  passes.run([&] {
    reg.depth = passes.in(depth_buf_, depth_.total() * depth_.elemSize(), depth_.step[0]);
    run_color_key(passes, params);
    job.mask = passes.in(*plane.buf, plane.mat.total() * plane.mat.elemSize(), plane.mat.step[0]);
    reg.out = passes.at<float>(registered_buf_, grid_step);
    passes.pass(
        registered_buf_,
        [&](CUstream_st* s) {
          if (mode == RegistrationMode::Resample)
            launch_resample(reg, map, decode, s);
          else
            launch_reproject(reg, proj, decode, s);
        },
        [&] {
          if (mode == RegistrationMode::Resample)
            resample_cpu(reg, map, decode);
          else
            reproject_cpu(reg, proj, decode);
        });
    job.depth = reg.out;
    job.out = passes.at<float>(out_buf_, out_.step[0]);
    passes.pass(
        out_buf_, [&](CUstream_st* s) { launch_mask(job, mask_p, s); }, [&] { mask_cpu(job, mask_p); });
    passes.to_host(out_buf_, grid_bytes);
    if (reason_on_) {
      ReasonJob rj;
      rj.depth = reg.out, rj.depth_type = DepthType::F32, rj.mask = job.mask, rj.mask_type = job.mask_type;
      rj.rows = rows, rj.cols = cols;
      ReasonParams rp = reason_params_for(mask_p, plane.params, true, depth_.type() == CV_16UC1);
      if (mode == RegistrationMode::Resample) {
        rp.registration = ReasonRegistration::Resample;
        rp.map = map;
        rp.src_rows = depth_.rows, rp.src_cols = depth_.cols;
      } else {
        rp.registration = ReasonRegistration::Reproject;
      }
      run_reason(passes, rj, rp);
    }
  });
}

}  // namespace depthmask
