// FrameSlot's registration step: depth registered onto the mask's grid (resample or reproject) into
// a backend buffer, then the mask rule over that float depth. Apart from frame.cpp so the masking
// path stays as it was.
#include <utility>

#include "depthmask/errors.h"
#include "depthmask/frame.h"
#include "depthmask/kernels/mask_kernel.h"
#include "depthmask/registration.h"

namespace depthmask {

void FrameSlot::set_registration(RegistrationMode mode, std::optional<CameraGeometry> geometry) {
  check_registration(mode, geometry);
  if (geometry) (void)reproject_params(*geometry);  // unusable geometry fails here, not at the first frame
  registration_ = mode;
  geometry_ = std::move(geometry);
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

  if (backend_->device_executes()) {
    backend_->run_and_wait(
        [&] {
          depth_buf_.to_device(depth_.total() * depth_.elemSize(), stream());
          run_color_key(params);
          plane.buf->to_device(plane.mat.total() * plane.mat.elemSize(), stream());
          reg.depth = {depth_buf_.device(), depth_.step[0]};
          reg.out = {static_cast<float*>(registered_buf_.device()), grid_step};
          if (mode == RegistrationMode::Resample)
            launch_resample(reg, map, decode, stream());
          else
            launch_reproject(reg, proj, decode, stream());
          registered_buf_.device_written();
          job.depth = reg.out;
          job.mask = {plane.buf->device(), plane.mat.step[0]};
          job.out = {static_cast<float*>(out_buf_.device()), out_.step[0]};
          launch_mask(job, mask_p, stream());
          out_buf_.device_written();
          out_buf_.to_host(grid_bytes, stream());
        },
        stream(), wait_);
  } else {
    run_color_key(params);
    reg.depth = {depth_buf_.host(), depth_.step[0]};
    reg.out = {static_cast<float*>(registered_buf_.host()), grid_step};
    if (mode == RegistrationMode::Resample)
      resample_cpu(reg, map, decode);
    else
      reproject_cpu(reg, proj, decode);
    registered_buf_.host_written();
    job.depth = reg.out;
    job.mask = {plane.buf->host(), plane.mat.step[0]};
    job.out = {static_cast<float*>(out_buf_.host()), out_.step[0]};
    mask_cpu(job, mask_p);
    out_buf_.host_written();
  }
}

}  // namespace depthmask
