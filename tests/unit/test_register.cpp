// Registration on the CPU: hand-checked small cases for resample and reproject (identity, a pure
// translation, two surfaces on one pixel, splatting under a longer focal length), argument checks,
// and the APC acceptance test against the sensor vendor's own depth-to-color alignment.
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <cstring>
#include <iterator>
#include <limits>
#include <opencv2/core.hpp>
#include <opencv2/imgcodecs.hpp>
#include <random>

#include "depthmask/backend.h"
#include "depthmask/errors.h"
#include "depthmask/frame.h"
#include "depthmask/geometry.h"
#include "depthmask/kernels/register.h"
#include "register_support.h"
#include "test_support.h"

namespace dm = depthmask;
using dmtest::Contains;
using dmtest::message_of;

namespace {

// A pinhole K as the builders take it: fx, fy, cx, cy.
struct K4 {
  double v[4];
};

const double kIdentity[16] = {1, 0, 0, 0, 0, 1, 0, 0, 0, 0, 1, 0, 0, 0, 0, 1};

cv::Mat reproject(const cv::Mat& depth, cv::Size target, const K4& kd, const double (&e)[16], const K4& kc,
                  float scale = 0.001f) {
  cv::Mat out(target, CV_32FC1, cv::Scalar(-7.0f));
  dm::reproject_cpu(dmtest::register_job(depth, out), dm::reproject_params(kd.v, e, kc.v), dm::decode_with_scale(scale));
  return out;
}

cv::Mat resample(const cv::Mat& depth, cv::Size target, const dm::ResampleMap& m, float scale = 0.001f) {
  cv::Mat out(target, CV_32FC1, cv::Scalar(-7.0f));
  dm::resample_cpu(dmtest::register_job(depth, out), m, dm::decode_with_scale(scale));
  return out;
}

}  // namespace

// ---------------------------------------------------------------------------------------------------
// Decoding.

TEST(RegisterDecode, RawTimesScaleAndInvalidFloatsBecomeZero) {
  const dm::DepthDecode d{0.25f};
  EXPECT_EQ(dm::decode_depth_m(uint16_t{0}, d), 0.0f);
  EXPECT_EQ(dm::decode_depth_m(uint16_t{6}, d), 1.5f);
  EXPECT_EQ(dm::decode_depth_m(uint16_t{65535}, d), 16383.75f);
  EXPECT_EQ(dm::decode_depth_m(2.5f, d), 2.5f);
  EXPECT_EQ(dm::decode_depth_m(0.0f, d), 0.0f);
  EXPECT_EQ(dm::decode_depth_m(-1.0f, d), 0.0f);
  EXPECT_EQ(dm::decode_depth_m(std::numeric_limits<float>::quiet_NaN(), d), 0.0f);
  EXPECT_EQ(dm::decode_depth_m(std::numeric_limits<float>::infinity(), d), 0.0f);
  dm::MaskParams p;
  dm::set_depth_range(p, 0.0001, 0.0, 10.0);
  EXPECT_EQ(dm::depth_decode(p).params.scale, 0.0001f);
}

// ---------------------------------------------------------------------------------------------------
// Resample.

TEST(Resample, SizesMapUpscalesByReplicationAndDownscalesByNearest) {
  cv::Mat d = (cv::Mat_<uint16_t>(2, 2) << 4, 8, 0, 12);
  const cv::Mat up = resample(d, {4, 4}, dm::resample_map_sizes(2, 2, 4, 4), 0.25f);
  const float want_up[4][4] = {{1, 1, 2, 2}, {1, 1, 2, 2}, {0, 0, 3, 3}, {0, 0, 3, 3}};
  for (int y = 0; y < 4; ++y)
    for (int x = 0; x < 4; ++x) EXPECT_EQ(up.at<float>(y, x), want_up[y][x]) << x << "," << y;

  // 6x3 -> 3x1: target pixel x covers source columns 2x, 2x+1; the centre lies on their boundary and
  // the tie goes to the larger index (2x+1); the single row's centre is source row 1.
  cv::Mat s = (cv::Mat_<uint16_t>(3, 6) << 1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13, 14, 15, 16, 17, 18);
  const cv::Mat down = resample(s, {3, 1}, dm::resample_map_sizes(6, 3, 3, 1), 1.0f);
  EXPECT_EQ(down.at<float>(0, 0), 8.0f);
  EXPECT_EQ(down.at<float>(0, 1), 10.0f);
  EXPECT_EQ(down.at<float>(0, 2), 12.0f);
}

TEST(Resample, IntrinsicsMapFollowsTheRays) {
  // Source: fx 10, cx 4.5 over 10 columns; target: fx 20, cx 9.5 over 20 columns, i.e. the same
  // camera at twice the resolution: target x reads source floor((x - 9.5) / 2 + 4.5 + 0.5).
  const dm::ResampleMap m = dm::resample_map(10, 10, 4.5, 0.0, 20, 20, 9.5, 0.0);
  EXPECT_EQ(m.ax, 0.5f);
  EXPECT_EQ(m.bx, 0.25f);
  cv::Mat s(1, 10, CV_32FC1);
  for (int x = 0; x < 10; ++x) s.at<float>(0, x) = static_cast<float>(x + 1);
  const cv::Mat out = resample(s, {20, 1}, m);
  for (int x = 0; x < 20; ++x) EXPECT_EQ(out.at<float>(0, x), static_cast<float>(x / 2 + 1)) << x;

  // A shifted principal point moves the image; samples falling outside the source are 0.
  const dm::ResampleMap shifted = dm::resample_map(10, 10, 4.5, 0.0, 10, 10, 6.5, 0.0);
  const cv::Mat sh = resample(s, {10, 1}, shifted);
  EXPECT_EQ(sh.at<float>(0, 0), 0.0f);
  EXPECT_EQ(sh.at<float>(0, 1), 0.0f);
  for (int x = 2; x < 10; ++x) EXPECT_EQ(sh.at<float>(0, x), static_cast<float>(x - 1)) << x;
}

TEST(Resample, InvalidFloatDepthBecomesZero) {
  cv::Mat s = (cv::Mat_<float>(1, 4) << std::numeric_limits<float>::quiet_NaN(), -2.0f, 0.0f, 3.0f);
  const cv::Mat out = resample(s, {4, 1}, dm::resample_map_sizes(4, 1, 4, 1));
  EXPECT_EQ(out.at<float>(0, 0), 0.0f);
  EXPECT_EQ(out.at<float>(0, 1), 0.0f);
  EXPECT_EQ(out.at<float>(0, 2), 0.0f);
  EXPECT_EQ(out.at<float>(0, 3), 3.0f);
}

// ---------------------------------------------------------------------------------------------------
// Reproject.

TEST(Reproject, IdentityExtrinsicAndSameIntrinsicsReproduceTheInput) {
  std::mt19937 rng(3);
  std::uniform_int_distribution<int> u(0, 9000), hole(0, 4);
  cv::Mat d(31, 33, CV_16UC1);
  for (int y = 0; y < d.rows; ++y)
    for (int x = 0; x < d.cols; ++x) d.at<uint16_t>(y, x) = static_cast<uint16_t>(hole(rng) == 0 ? 0 : u(rng));
  const K4 k{{52.5, 49.0, 16.2, 14.7}};
  const cv::Mat out = reproject(d, d.size(), k, kIdentity, k);
  for (int y = 0; y < d.rows; ++y)
    for (int x = 0; x < d.cols; ++x)
      ASSERT_EQ(out.at<float>(y, x), static_cast<float>(d.at<uint16_t>(y, x)) * 0.001f) << x << "," << y;
}

TEST(Reproject, PureXTranslationShiftsByFxTimesTOverZ) {
  // fx 100, t_x 4 cm: a point at 2 m moves fx * t / z = 2 pixels right, one at 0.5 m 8 pixels.
  const K4 k{{100, 100, 20, 10}};
  const double e[16] = {1, 0, 0, 0.04, 0, 1, 0, 0, 0, 0, 1, 0, 0, 0, 0, 1};
  cv::Mat d(20, 40, CV_16UC1, cv::Scalar(0));
  d.at<uint16_t>(5, 10) = 2000;  // 2 m
  d.at<uint16_t>(12, 3) = 500;   // 0.5 m
  const cv::Mat out = reproject(d, d.size(), k, e, k);
  for (int y = 0; y < out.rows; ++y)
    for (int x = 0; x < out.cols; ++x) {
      const float want = (x == 12 && y == 5) ? 2.0f : (x == 11 && y == 12) ? 0.5f : 0.0f;
      EXPECT_EQ(out.at<float>(y, x), want) << x << "," << y;
    }

  // A fronto-parallel plane at 2 m moves as a whole: the first two columns get no depth.
  cv::Mat plane(20, 40, CV_16UC1, cv::Scalar(2000));
  const cv::Mat moved = reproject(plane, plane.size(), k, e, k);
  for (int y = 0; y < moved.rows; ++y)
    for (int x = 0; x < moved.cols; ++x) ASSERT_EQ(moved.at<float>(y, x), x < 2 ? 0.0f : 2.0f) << x << "," << y;
}

TEST(Reproject, NearestSurfaceWinsWhereTwoLandOnOnePixel) {
  // fx 100. With t_x = +10 cm, u = 10 at 1 m shifts by 10 to 20 and u = 15 at 2 m by 5, also to 20:
  // the near surface is visited first in row order. With t_x = -10 cm, u = 25 at 1 m and u = 20 at
  // 2 m both land on 15: the far surface is visited first. The near one wins either way.
  const K4 k{{100, 100, 20, 10}};
  struct Case {
    double tx;
    int u_near, u_far, x_hit;
  };
  for (const Case c : {Case{0.1, 10, 15, 20}, Case{-0.1, 25, 20, 15}}) {
    SCOPED_TRACE(c.tx);
    const double e[16] = {1, 0, 0, c.tx, 0, 1, 0, 0, 0, 0, 1, 0, 0, 0, 0, 1};
    cv::Mat d(20, 40, CV_16UC1, cv::Scalar(0));
    d.at<uint16_t>(7, c.u_near) = 1000;
    d.at<uint16_t>(7, c.u_far) = 2000;
    const cv::Mat out = reproject(d, d.size(), k, e, k);
    EXPECT_EQ(out.at<float>(7, c.x_hit), 1.0f);
    EXPECT_EQ(cv::countNonZero(out), 1);
  }
}

TEST(Reproject, ZIsTheDepthInTheColorFrame) {
  // A translation along z by 10 cm: a point at 1 m is at 1.1 m in the color camera.
  const K4 k{{100, 100, 20, 10}};
  const double e[16] = {1, 0, 0, 0, 0, 1, 0, 0, 0, 0, 1, 0.1, 0, 0, 0, 1};
  cv::Mat d(21, 41, CV_32FC1, cv::Scalar(0.0f));
  d.at<float>(10, 20) = 1.0f;  // on the optical axis: stays at the principal point
  const cv::Mat out = reproject(d, d.size(), k, e, k);
  EXPECT_EQ(out.at<float>(10, 20), 1.1f);
  EXPECT_EQ(cv::countNonZero(out), 1);
}

TEST(Reproject, LongerTargetFocalLengthLeavesNoHoles) {
  // Depth camera 20x16 at fx 20; color camera 2.6x the focal length and resolution. A slanted plane:
  // every target pixel whose centre lies inside the depth image's footprint must receive depth.
  const K4 kd{{20, 20, 9.5, 7.5}};
  const double s = 2.6;
  const K4 kc{{20 * s, 20 * s, (9.5 + 0.5) * s - 0.5, (7.5 + 0.5) * s - 0.5}};
  cv::Mat d(16, 20, CV_16UC1);
  for (int y = 0; y < d.rows; ++y)
    for (int x = 0; x < d.cols; ++x) d.at<uint16_t>(y, x) = static_cast<uint16_t>(1000 + 25 * x + 10 * y);
  const cv::Size target(52, 41);  // 20*2.6, 16*2.6 (rounded down)
  const cv::Mat out = reproject(d, target, kd, kIdentity, kc);
  int holes = 0;
  for (int y = 0; y < target.height; ++y)
    for (int x = 0; x < target.width; ++x) holes += out.at<float>(y, x) == 0.0f;
  EXPECT_EQ(holes, 0);
  // Each target pixel holds the depth of the source pixel its centre falls in.
  for (int y = 0; y < target.height; ++y)
    for (int x = 0; x < target.width; ++x) {
      const int sx = static_cast<int>(std::floor((x + 0.5) / s)), sy = static_cast<int>(std::floor((y + 0.5) / s));
      EXPECT_EQ(out.at<float>(y, x), static_cast<float>(d.at<uint16_t>(sy, sx)) * 0.001f) << x << "," << y;
    }

  // With a translation (footprints then depend on depth) a fronto-parallel plane still tiles: every
  // target centre inside the projected outline of the depth image gets depth, none outside.
  const double e[16] = {1, 0, 0, 0.02, 0, 1, 0, -0.01, 0, 0, 1, 0, 0, 0, 0, 1};
  cv::Mat plane(16, 20, CV_16UC1, cv::Scalar(1500));
  const cv::Mat moved = reproject(plane, target, kd, e, kc);
  auto to_target = [&](double p, double c_d, double c_c, double t) { return (p - c_d) / 20.0 * 20 * s + c_c + 20 * s * t / 1.5; };
  const double x0 = to_target(-0.5, 9.5, kc.v[2], 0.02), x1 = to_target(19.5, 9.5, kc.v[2], 0.02);
  const double y0 = to_target(-0.5, 7.5, kc.v[3], -0.01), y1 = to_target(15.5, 7.5, kc.v[3], -0.01);
  for (int y = 0; y < target.height; ++y)
    for (int x = 0; x < target.width; ++x) {
      const bool inside = x > x0 && x < x1 && y > y0 && y < y1;
      ASSERT_EQ(moved.at<float>(y, x), inside ? 1500.0f * 0.001f : 0.0f) << x << "," << y;
    }
}

TEST(Reproject, BehindTheCameraAndOutsideAreDropped) {
  // A 180-degree turn about y puts every point behind the color camera: nothing is written.
  const K4 k{{100, 100, 20, 10}};
  const double behind[16] = {-1, 0, 0, 0, 0, 1, 0, 0, 0, 0, -1, 0, 0, 0, 0, 1};
  cv::Mat d(20, 40, CV_16UC1, cv::Scalar(1000));
  EXPECT_EQ(cv::countNonZero(reproject(d, d.size(), k, behind, k)), 0);
  // A translation larger than the field of view: everything lands outside.
  const double far[16] = {1, 0, 0, 5.0, 0, 1, 0, 0, 0, 0, 1, 0, 0, 0, 0, 1};
  EXPECT_EQ(cv::countNonZero(reproject(d, d.size(), k, far, k)), 0);
}

// ---------------------------------------------------------------------------------------------------
// Arguments.

TEST(RegisterArgs, BadJobsAndParametersThrow) {
  cv::Mat d(4, 4, CV_16UC1, cv::Scalar(1000)), out(4, 4, CV_32FC1);
  const dm::ResampleMap m = dm::resample_map_sizes(4, 4, 4, 4);
  const dm::DepthDecode dec{0.001f};
  dm::RegisterJob j = dmtest::register_job(d, out);
  j.out = nullptr;
  EXPECT_TRUE(Contains(message_of<std::invalid_argument>([&] { dm::resample_cpu(j, m, dec); }), "target pointer is null"));
  j = dmtest::register_job(d, out);
  j.depth_step = 6;
  EXPECT_TRUE(Contains(message_of<std::invalid_argument>([&] { dm::resample_cpu(j, m, dec); }), "shorter than a row"));
  j = dmtest::register_job(d, out);
  j.out = reinterpret_cast<float*>(out.data + 2);
  EXPECT_TRUE(Contains(message_of<std::invalid_argument>([&] { dm::resample_cpu(j, m, dec); }), "not aligned"));
  j = dmtest::register_job(d, out);
  j.depth_rows = -1;
  EXPECT_TRUE(Contains(message_of<std::invalid_argument>([&] { dm::resample_cpu(j, m, dec); }), "negative size"));
  // In place is refused: the target would be written while the source is read.
  cv::Mat f(4, 4, CV_32FC1, cv::Scalar(1.0f));
  j = dmtest::register_job(f, f);
  EXPECT_TRUE(Contains(message_of<std::invalid_argument>([&] { dm::resample_cpu(j, m, dec); }), "overlaps"));

  const double kd[4] = {0, 1, 0, 0}, kc[4] = {1, 1, 0, 0};
  EXPECT_TRUE(Contains(message_of<std::invalid_argument>([&] { dm::reproject_params(kd, kIdentity, kc); }), "depth camera"));
  const double kd_ok[4] = {1, 1, 0, 0};
  double e[16];
  std::memcpy(e, kIdentity, sizeof e);
  e[3] = std::numeric_limits<double>::quiet_NaN();
  EXPECT_TRUE(Contains(message_of<std::invalid_argument>([&] { dm::reproject_params(kd_ok, e, kc); }), "non-finite"));
  e[3] = 0, e[14] = 1;
  EXPECT_TRUE(Contains(message_of<std::invalid_argument>([&] { dm::reproject_params(kd_ok, e, kc); }), "last row"));
  EXPECT_TRUE(Contains(message_of<std::invalid_argument>([&] { dm::resample_map_sizes(0, 1, 1, 1); }), "positive sizes"));
}

TEST(RegisterArgs, EmptySourceGivesAnEmptyTargetAndEmptyTargetIsANoOp) {
  cv::Mat out(3, 5, CV_32FC1, cv::Scalar(9.0f));
  dm::RegisterJob j;
  j.out = out.ptr<float>(), j.out_step = out.step[0], j.out_rows = 3, j.out_cols = 5;
  dm::resample_cpu(j, dm::ResampleMap{}, dm::DepthDecode{});
  EXPECT_EQ(cv::countNonZero(out), 0);
  out.setTo(9.0f);
  const double k[4] = {10, 10, 2, 1};
  dm::reproject_cpu(j, dm::reproject_params(k, kIdentity, k), dm::DepthDecode{});
  EXPECT_EQ(cv::countNonZero(out), 0);
  dm::RegisterJob none;  // all zero: nothing to do, nothing touched
  EXPECT_NO_THROW(dm::reproject_cpu(none, dm::reproject_params(k, kIdentity, k), dm::DepthDecode{}));
}

// ---------------------------------------------------------------------------------------------------
// APC: raw/ depth (depth camera) registered with cam.info.txt against the vendor's aligned depth.
//
// The bounds (>= 95 % within 1 cm where both are valid, >= 95 % of the vendor's valid pixels
// covered) hold in the image centre but not over the whole frame, on every one of the 8 frames: the
// vendor (librealsense 1.x on the F200) aligned with its lens distortion models, whose coefficients
// cam.info.txt does not record (it stores the pinhole K's only). The misalignment is radial: 0 px at
// the centre, 3-5 px in the corners (measured by the best block shift, 80x80 blocks). So the bounds are
// asserted inside a disc of 150 px around the color principal point, where the unrecorded distortion
// stays under about a pixel, and the whole frame is held to the measured level (regression floors).
// register_support.h's score_alignment() prints both.

TEST(RegisterApc, RawDepthReprojectedMatchesTheVendorsAlignment) {
  const auto scene = dmtest::apc_scene();
  if (scene.empty()) GTEST_SKIP() << "real data not present: " << dmtest::shared_data_dir() / "apc-vision-toolbox";
  const dm::CameraGeometry g = dm::read_apc_cam_info(scene / "cam.info.txt");
  for (int i = 0; i < dmtest::kApcFrames; ++i) {
    const std::string id = dmtest::apc_id(i);
    SCOPED_TRACE("frame-" + id);
    const dmtest::ApcPair pair = dmtest::load_apc_pair(scene, id);
    cv::Mat out(pair.vendor_m.size(), CV_32FC1, cv::Scalar(-7.0f));
    dm::reproject_cpu(dmtest::register_job(pair.raw_decoded, out), dm::reproject_params(g),
                      dm::decode_with_scale(dmtest::kApcScale));
    dmtest::expect_vendor_alignment(out, pair.vendor_m, g, "cpu " + id);
  }
}

// ---------------------------------------------------------------------------------------------------
// The rule behind registration.mode, and FrameSlot's registration step on the cpu backend.

TEST(RegistrationPlan, RuleForEachModeAndInput) {
  dm::CameraGeometry g;
  g.depth = g.color = dm::Intrinsics{100, 100, 20, 10, 0, 0};
  const std::optional<dm::CameraGeometry> none, geo = g;
  const cv::Size vga(640, 480), qvga(320, 240), wide(640, 360);
  using M = dm::RegistrationMode;
  EXPECT_EQ(dm::plan_registration(M::Auto, none, vga, vga).mode, M::None);
  EXPECT_EQ(dm::plan_registration(M::Auto, none, vga, qvga).mode, M::Resample);
  EXPECT_EQ(dm::plan_registration(M::Auto, none, cv::Size(639, 481), qvga).mode, M::Resample);  // within 1 %
  const dm::RegistrationPlan aspect = dm::plan_registration(M::Auto, none, vga, wide);
  EXPECT_EQ(aspect.mode, M::None);
  EXPECT_TRUE(Contains(aspect.reason, "aspect ratio"));
  EXPECT_EQ(dm::plan_registration(M::Auto, geo, vga, vga).mode, M::Reproject);
  EXPECT_EQ(dm::plan_registration(M::None, geo, vga, qvga).mode, M::None);
  EXPECT_EQ(dm::plan_registration(M::Resample, none, vga, vga).mode, M::Resample);
  EXPECT_EQ(dm::plan_registration(M::Resample, geo, vga, qvga).mode, M::Resample);
  EXPECT_EQ(dm::plan_registration(M::Reproject, geo, vga, qvga).mode, M::Reproject);
  EXPECT_TRUE(Contains(message_of<dm::ConfigError>([&] { dm::plan_registration(M::Reproject, none, vga, vga); }),
                       "needs the depth camera's intrinsics"));
}

TEST(RegistrationPlan, RawRangeBoundsStayInclusiveAfterDecoding) {
  // 1500 * 0.001f is 1.50000012f: masking registered depth must still keep raw 1500 at max 1.5 m,
  // as the unregistered path (which compares raw units) does, and drop 1501.
  dm::MaskParams p;
  dm::set_depth_range(p, 0.001, 0.3, 1.5);
  const dm::MaskParams r = dm::registered_mask_params(p, true);
  const dm::DepthDecode d = dm::depth_decode(p);
  EXPECT_TRUE(dm::depth_in_range(dm::decode_depth_m(uint16_t{1500}, d), r));
  EXPECT_FALSE(dm::depth_in_range(dm::decode_depth_m(uint16_t{1501}, d), r));
  EXPECT_TRUE(dm::depth_in_range(dm::decode_depth_m(uint16_t{300}, d), r));
  EXPECT_FALSE(dm::depth_in_range(dm::decode_depth_m(uint16_t{299}, d), r));
  // Float input keeps its float bounds.
  EXPECT_EQ(dm::registered_mask_params(p, false).max_m, 1.5f);
}

TEST(RegistrationFrameSlot, CpuBackendRegistersThenMasksWithoutAllocatingPerFrame) {
  auto backend = dm::make_backend(dm::BackendChoice{dm::BackendKind::Cpu, 0, "test", false}, dmtest::platform());
  dm::FrameSlot slot(*backend);
  dm::CameraGeometry g;
  g.depth = dm::Intrinsics{20, 20, 9.5, 7.5, 0, 0};
  g.color = dm::Intrinsics{52, 52, 25.5, 20.3, 0, 0};
  const double e[16] = {0.9998, -0.02, 0, 0.01, 0.02, 0.9998, 0, -0.005, 0, 0, 1, 0.002, 0, 0, 0, 1};
  std::copy(std::begin(e), std::end(e), g.depth_to_color.begin());
  slot.set_registration(dm::RegistrationMode::Auto, g);
  std::mt19937 rng(11);
  std::uniform_int_distribution<int> u(0, 3000), m(0, 3);
  dm::MaskParams p;
  dm::set_depth_range(p, 0.001, 0.5, 2.5);
  p.invalid = -1.0f;
  uint64_t allocations = 0;
  for (int frame = 0; frame < 3; ++frame) {
    cv::Mat depth(16, 20, CV_16UC1), mask(41, 52, CV_8UC1);
    for (int y = 0; y < depth.rows; ++y)
      for (int x = 0; x < depth.cols; ++x) depth.at<uint16_t>(y, x) = static_cast<uint16_t>(u(rng) < 300 ? 0 : u(rng));
    for (int y = 0; y < mask.rows; ++y)
      for (int x = 0; x < mask.cols; ++x) mask.at<uint8_t>(y, x) = static_cast<uint8_t>(m(rng));
    slot.set(depth, mask);
    slot.run_mask(p);
    // The same two steps by hand.
    cv::Mat reg(mask.size(), CV_32FC1), want(mask.size(), CV_32FC1);
    dm::reproject_cpu(dmtest::register_job(depth, reg), dm::reproject_params(g), dm::depth_decode(p));
    dm::MaskJob job;
    job.depth = reg.data, job.depth_step = reg.step[0], job.depth_type = dm::DepthType::F32;
    job.mask = mask.data, job.mask_step = mask.step[0], job.mask_type = dm::MaskType::U8;
    job.out = want.ptr<float>(), job.out_step = want.step[0], job.rows = mask.rows, job.cols = mask.cols;
    dm::mask_cpu(job, dm::registered_mask_params(p, true));
    ASSERT_EQ(slot.out().size(), mask.size());
    EXPECT_TRUE(dmtest::SameBits(slot.out(), want));
    EXPECT_GT(cv::countNonZero(slot.out() > 0.0f), 0);
    if (frame == 0) allocations = backend->stats().allocations;
    else EXPECT_EQ(backend->stats().allocations, allocations) << "frame " << frame << " allocated";
  }
}

TEST(RegistrationFrameSlot, MismatchedSizesWithoutRegistrationAreRefused) {
  auto backend = dm::make_backend(dm::BackendChoice{dm::BackendKind::Cpu, 0, "test", false}, dmtest::platform());
  dm::FrameSlot slot(*backend);
  const cv::Mat depth(16, 20, CV_16UC1, cv::Scalar(1000)), mask(8, 10, CV_8UC1, cv::Scalar(1));
  EXPECT_TRUE(Contains(message_of<dm::InputError>([&] { slot.set(depth, mask); }), "expected the same size"));
  slot.set_registration(dm::RegistrationMode::Auto);
  slot.set(depth, mask);
  slot.run_mask(dm::MaskParams{});
  EXPECT_EQ(slot.out().size(), mask.size());
  EXPECT_EQ(cv::countNonZero(slot.out() != 1.0f), 0);
  EXPECT_TRUE(Contains(message_of<dm::ConfigError>([&] { slot.set_registration(dm::RegistrationMode::Reproject); }),
                       "reproject"));
}
