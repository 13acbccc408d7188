// Backprojection of a masked depth map to camera-frame points, shared by the CUDA kernel and the CPU
// loop (the PLY output).
//
// As in mask_rule.h, one DM_HD function defines a point; the kernel and the CPU loop both call it. It
// multiplies and adds, so it writes the fused multiply-add explicitly (fmaf): nvcc would contract
// u * inv_fx + off_x into an FMA by default and g++ on x86-64 would not, and the results would differ
// in the last bit. With fmaf both sides round once, identically (IEEE 754 fusedMultiplyAdd).
//
// Plain C++ header (no CUDA headers): the stream is passed as the runtime's opaque CUstream_st*.
#pragma once

#include <cmath>
#include <cstddef>
#include <cstdint>

#include "depthmask/kernels/mask_rule.h"

struct CUstream_st;

namespace depthmask {

// Pinhole intrinsics in the form the rule uses: x = (u * inv_fx + off_x) * z with off_x = -cx / fx,
// likewise y. Trivially copyable; build it with make_pinhole (in double, rounded once to float).
struct Pinhole {
  float inv_fx = 1.0f, inv_fy = 1.0f;
  float off_x = 0.0f, off_y = 0.0f;
};

// Host only. fx, fy > 0 (the caller checks and names the source of the intrinsics).
inline Pinhole make_pinhole(double fx, double fy, double cx, double cy) {
  Pinhole k;
  k.inv_fx = static_cast<float>(1.0 / fx);
  k.inv_fy = static_cast<float>(1.0 / fy);
  k.off_x = static_cast<float>(-cx / fx);
  k.off_y = static_cast<float>(-cy / fy);
  return k;
}

// Whether an output depth value is a kept pixel: finite, positive and not the invalid value. The rule
// only ever keeps positive finite depth, so this reads "kept" back from the output alone (also after
// steps that change the output, such as erosion or registration). A kept depth exactly equal to a
// positive output.invalid cannot be told apart from an invalid pixel, and counts as not kept.
DM_HD inline bool depth_kept(float z, float invalid) { return finite_f(z) && z > 0.0f && !(z == invalid); }

// The point of pixel (u, v) (column, row; pixel centres at integer coordinates, as OpenCV's and
// Open3D's intrinsics assume) at output depth z, in metres in the camera frame (x right, y down,
// z forward). Not-kept pixels give (0, 0, 0): a point never has z == 0.
DM_HD inline void backproject_pixel(int u, int v, float z, float invalid, const Pinhole& k, float* xyz) {
  if (depth_kept(z, invalid)) {
    xyz[0] = fmaf(static_cast<float>(u), k.inv_fx, k.off_x) * z;
    xyz[1] = fmaf(static_cast<float>(v), k.inv_fy, k.off_y) * z;
    xyz[2] = z;
  } else {
    xyz[0] = 0.0f;
    xyz[1] = 0.0f;
    xyz[2] = 0.0f;
  }
}

// One frame: a CV_32FC1-like depth plane (metres, the masking pass's output) in, an XYZ plane of three
// floats per pixel out (planes: image_view.h). Steps in bytes; both planes rows x cols. For the GPU
// launcher the pointers must be device-accessible (device, mapped or managed memory).
struct BackprojectJob {
  Plane<const float> depth;
  Plane<float> xyz;
  int rows = 0;
  int cols = 0;
  float invalid = 0.0f;  // output.invalid: pixels holding it are not points
  Pinhole k;
};

// Throws std::invalid_argument describing the first problem (null pointer, misaligned or short
// step, negative size, non-finite intrinsics). An empty job does nothing.
void validate(const BackprojectJob& job);

// The CPU loop, rows spread over cores with oneTBB.
void backproject_cpu(const BackprojectJob& job);

// Enqueues the backprojection kernel on `stream` and checks the launch; never synchronises. Throws
// CudaError on a launch failure, std::invalid_argument on a bad job, PlatformError without CUDA.
void launch_backproject(const BackprojectJob& job, CUstream_st* stream);

}  // namespace depthmask
