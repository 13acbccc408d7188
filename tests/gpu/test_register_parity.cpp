// Registration on the GPU equals the CPU loop exactly (the CPU is the gold): resample and reproject,
// 16-bit and float depth (zeros, NaN, inf, negatives, denormals, FLT_MAX), awkward sizes (1x1, 13x1,
// 1x13, 31x33, 640x480, 639x481) with up- and down-scaling, ROI / pitched device images whose padding
// must stay untouched, a non-default stream; every GPU backend through FrameSlot; and the APC check on
// the GPU. Skips without a GPU.
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <cstring>
#include <filesystem>
#include <iterator>
#include <limits>
#include <opencv2/core.hpp>
#include <optional>
#include <random>
#include <string>
#include <tuple>
#include <utility>
#include <vector>

#include "depthmask/backend.h"
#include "depthmask/frame.h"
#include "depthmask/geometry.h"
#include "depthmask/kernels/register.h"
#include "depthmask/registration.h"
#include "gpu_test_support.h"
#include "register_support.h"
#include "test_support.h"

namespace dm = depthmask;
using dmtest::same_pixels;

namespace {

enum class Op { Resample, Reproject };

// Random depth with what sensors and bad files give: holes, extremes, non-finite and tiny values.
cv::Mat random_depth(cv::Size size, int type, std::mt19937& rng) {
  cv::Mat d(size, type);
  std::uniform_int_distribution<int> u16(200, 9000), pick(0, 19);
  std::uniform_real_distribution<float> f(0.1f, 9.0f);
  const float specials[] = {0.0f,
                            -0.0f,
                            std::numeric_limits<float>::quiet_NaN(),
                            std::numeric_limits<float>::infinity(),
                            -std::numeric_limits<float>::infinity(),
                            -1.5f,
                            std::numeric_limits<float>::denorm_min(),
                            std::numeric_limits<float>::max(),
                            1e-3f};
  for (int y = 0; y < d.rows; ++y)
    for (int x = 0; x < d.cols; ++x) {
      const int k = pick(rng);
      if (type == CV_16UC1)
        d.at<uint16_t>(y, x) = static_cast<uint16_t>(k < 4 ? 0 : k == 4 ? 65535 : k == 5 ? 1 : u16(rng));
      else
        d.at<float>(y, x) = k < 9 ? specials[k] : f(rng);
    }
  return d;
}

// Intrinsics for an image of `s` pixels: a ~60 degree field of view, principal point off centre.
dm::Intrinsics k_for(cv::Size s, double zoom = 1.0) {
  const double f = zoom * 0.9 * std::max(s.width, s.height);
  return dm::Intrinsics{
      std::max(f, 0.7), std::max(f * 1.01, 0.7), 0.48 * (s.width - 1) + 0.3, 0.52 * (s.height - 1) - 0.2, 0, 0};
}

// Two extrinsics: APC's own (small rotation, 2.6 cm baseline) and a large turn that makes footprints
// rotated and sheared.
std::vector<dm::CameraGeometry> geometries(cv::Size depth, cv::Size target) {
  std::vector<dm::CameraGeometry> gs(2);
  const double(&apc)[16] = dmtest::kApcDepthToColor;
  const double a = 0.35, b = 0.6;  // radians about y, then about z
  const double ca = std::cos(a), sa = std::sin(a), cb = std::cos(b), sb = std::sin(b);
  const double turn[16] = {cb * ca, -sb, cb * sa, -0.05, sb * ca, cb, sb * sa, 0.03, -sa, 0, ca, 0.1, 0, 0, 0, 1};
  for (int i = 0; i < 2; ++i) {
    gs[i].depth = k_for(depth);
    gs[i].color = k_for(target, i == 0 ? 1.3 : 0.8);
    std::memcpy(gs[i].depth_to_color.data(), i == 0 ? apc : turn, sizeof apc);
  }
  return gs;
}

using ParityParam = std::tuple<std::pair<cv::Size, cv::Size> /*depth, target*/, int /*depth type*/, Op, bool /*roi*/>;

class RegisterParity : public ::testing::TestWithParam<ParityParam> {};

}  // namespace

TEST_P(RegisterParity, GpuEqualsCpuExactly) {
  DM_REQUIRE_GPU();
#if DEPTHMASK_HAVE_CUDA
  const auto [sizes, dtype, op, roi] = GetParam();
  const auto [dsize, tsize] = sizes;
  std::mt19937 rng(static_cast<unsigned>(dsize.width * 7919 + dsize.height * 104729 + tsize.width * 31 +
                                         tsize.height * 17 + dtype + 3 * static_cast<int>(op) + roi));
  // Host source is an ROI of a larger image when `roi`: the CPU reads it with its step too.
  const cv::Mat full = random_depth(cv::Size(dsize.width + 6, dsize.height + 4), dtype, rng);
  const cv::Mat depth =
      roi ? full(cv::Rect(3, 2, dsize.width, dsize.height)) : full(cv::Rect(0, 0, dsize.width, dsize.height)).clone();
  const size_t es = depth.elemSize();
  const float scale = 0.00025f;  // 16-bit values up to 65535 reach 16 m, past every range

  struct Variant {
    std::string name;
    dm::ResampleMap map;
    dm::ReprojectParams proj;
  };
  std::vector<Variant> variants;
  if (op == Op::Resample) {
    variants.push_back({"sizes", dm::resample_map_sizes(dsize.width, dsize.height, tsize.width, tsize.height), {}});
    const dm::Intrinsics kd = k_for(dsize), kc = k_for(tsize, 1.3);
    variants.push_back({"intrinsics", dm::resample_map(kd.fx, kd.fy, kd.cx, kd.cy, kc.fx, kc.fy, kc.cx, kc.cy), {}});
  } else {
    const auto gs = geometries(dsize, tsize);
    variants.push_back({"apc_extrinsic", {}, dm::reproject_params(gs[0])});
    variants.push_back({"large_turn", {}, dm::reproject_params(gs[1])});
    // Footprints of up to 100 pixels a side: 1x1 -> 31x33 and 13x1 -> 639x481 splat 40-65 pixels
    // wide, many threads contending for the same atomics.
    variants.push_back({"big_footprints", {}, dm::reproject_params(gs[0])});
    variants.back().proj.max_footprint = 100;
    // The depth camera's inverse Brown-Conrady distortion: APC's coefficients with APC's extrinsic,
    // and strong ones (every term far from zero) with the large turn.
    dm::CameraGeometry apc = gs[0], turn = gs[1];
    apc.depth_distortion.model = turn.depth_distortion.model = dm::DistortionModel::InverseBrownConrady;
    std::copy(std::begin(dmtest::kApcDepthDistortion), std::end(dmtest::kApcDepthDistortion),
              apc.depth_distortion.coeffs.begin());
    turn.depth_distortion.coeffs = {0.3, -0.25, 0.02, -0.015, 0.1};
    variants.push_back({"apc_distortion", {}, dm::reproject_params(apc)});
    variants.push_back({"large_turn_strong_distortion", {}, dm::reproject_params(turn)});
  }

  const dmtest::TestStream stream;
  DM_CUDA_OK(stream.status());
  for (const Variant& v : variants) {
    SCOPED_TRACE(v.name);
    cv::Mat gold(tsize, CV_32FC1, cv::Scalar(-7.0f));
    dm::RegisterJob host = dmtest::register_job(depth, gold);
    if (op == Op::Resample)
      dm::resample_cpu(host, v.map, dm::decode_with_scale(scale));
    else
      dm::reproject_cpu(host, v.proj, dm::decode_with_scale(scale));

    const dmtest::DeviceImage d(dsize, es, roi ? 5 : 0, roi ? 1 : 0, roi ? 9 : 0, roi ? 2 : 0);
    const dmtest::DeviceImage o(tsize, sizeof(float), roi ? 2 : 0, roi ? 3 : 0, roi ? 3 : 0, roi ? 1 : 0);
    DM_CUDA_OK(d.status());
    DM_CUDA_OK(o.status());
    DM_CUDA_OK(d.upload(depth));
    // The fills and uploads run on the legacy default stream (a pageable cudaMemcpy may return before
    // its DMA lands), which does not order with a non-blocking stream: wait for them before launching.
    DM_CUDA_OK(cudaDeviceSynchronize());
    dm::RegisterJob job;
    job.depth = {d.roi(), d.pitch()};
    job.depth_type = dtype == CV_16UC1 ? dm::DepthType::U16 : dm::DepthType::F32;
    job.depth_rows = dsize.height, job.depth_cols = dsize.width;
    job.out = {reinterpret_cast<float*>(o.roi()), o.pitch()};
    job.out_rows = tsize.height, job.out_cols = tsize.width;
    if (op == Op::Resample)
      dm::launch_resample(job, v.map, dm::decode_with_scale(scale), stream.get());
    else
      dm::launch_reproject(job, v.proj, dm::decode_with_scale(scale), stream.get());
    DM_CUDA_OK(cudaStreamSynchronize(stream.get()));
    DM_CUDA_OK(cudaGetLastError());
    cv::Mat got(tsize, CV_32FC1, cv::Scalar(-9.0f));
    DM_CUDA_OK(o.download(got));
    EXPECT_TRUE(same_pixels(gold, got));
    EXPECT_EQ(o.padding_changes(), 0) << "the kernels wrote outside the target ROI";
    EXPECT_EQ(d.padding_changes(), 0) << "the kernels wrote into the source";
  }
#endif
}

namespace {
std::string size_text(cv::Size s) { return std::to_string(s.width) + "x" + std::to_string(s.height); }

std::string parity_name(const ::testing::TestParamInfo<ParityParam>& i) {
  const auto [sizes, dtype, op, roi] = i.param;
  return std::string(op == Op::Resample ? "resample_" : "reproject_") + size_text(sizes.first) + "_to_" +
         size_text(sizes.second) + (dtype == CV_16UC1 ? "_d16" : "_f32") + (roi ? "_roi" : "");
}

const std::pair<cv::Size, cv::Size> kSizes[] = {
    {{1, 1}, {1, 1}},          {{13, 1}, {13, 1}},       {{1, 13}, {1, 13}},       {{31, 33}, {31, 33}},
    {{640, 480}, {640, 480}},  {{639, 481}, {639, 481}}, {{320, 240}, {640, 480}},  // up
    {{640, 480}, {320, 240}},                                                       // down
    {{639, 481}, {1280, 960}}, {{31, 33}, {13, 1}},      {{1, 1}, {31, 33}},       {{13, 1}, {639, 481}}};
}  // namespace

INSTANTIATE_TEST_SUITE_P(Sizes, RegisterParity,
                         ::testing::Combine(::testing::ValuesIn(kSizes), ::testing::Values(CV_16UC1, CV_32FC1),
                                            ::testing::Values(Op::Resample, Op::Reproject), ::testing::Bool()),
                         parity_name);

// Every GPU backend through FrameSlot (its transfers, heads and the registered buffer) against the
// cpu backend, with sizes that grow and shrink the buffers.
class RegisterBackendParity : public ::testing::TestWithParam<dm::BackendKind> {};

TEST_P(RegisterBackendParity, FrameSlotOutputEqualsCpuBackend) {
  DM_REQUIRE_GPU();
  auto cpu = dmtest::cpu_gold_backend();
  auto gpu = dmtest::backend_of(GetParam());
  dm::FrameSlot gold_slot(*cpu), slot(*gpu);
  std::mt19937 rng(42);
  std::uniform_int_distribution<int> label(0, 3);
  const std::pair<cv::Size, cv::Size> sizes[] = {{{639, 481}, {640, 480}},
                                                 {{1, 1}, {1, 1}},
                                                 {{31, 33}, {13, 1}},
                                                 {{320, 240}, {640, 480}},
                                                 {{640, 480}, {320, 240}}};
  dm::MaskParams p;
  dm::set_depth_range(p, 0.001, 0.3, 6.0);
  p.invalid = std::numeric_limits<float>::quiet_NaN();
  p.threshold = 1;
  for (const auto& [dsize, msize] : sizes)
    for (const int dtype : {CV_16UC1, CV_32FC1})
      for (const dm::RegistrationMode mode : {dm::RegistrationMode::Resample, dm::RegistrationMode::Reproject}) {
        SCOPED_TRACE(size_text(dsize) + " -> " + size_text(msize) + (dtype == CV_16UC1 ? " d16 " : " f32 ") +
                     std::string(dm::to_string(mode)));
        const cv::Mat depth = random_depth(dsize, dtype, rng);
        cv::Mat mask(msize, CV_8UC1);
        for (int y = 0; y < mask.rows; ++y)
          for (int x = 0; x < mask.cols; ++x) mask.at<uint8_t>(y, x) = static_cast<uint8_t>(label(rng));
        std::optional<dm::CameraGeometry> g;
        if (mode == dm::RegistrationMode::Reproject) {
          g = geometries(dsize, msize)[0];
          // 16-bit depth with the depth camera's distortion (FrameSlot passes it to the kernels),
          // float depth without.
          if (dtype == CV_16UC1) {
            g->depth_distortion.model = dm::DistortionModel::InverseBrownConrady;
            std::copy(std::begin(dmtest::kApcDepthDistortion), std::end(dmtest::kApcDepthDistortion),
                      g->depth_distortion.coeffs.begin());
          }
        }
        gold_slot.set_registration(mode, g);
        slot.set_registration(mode, g);
        gold_slot.set(depth, mask);
        gold_slot.run_mask(p);
        slot.set(depth, mask);
        slot.run_mask(p);
        EXPECT_TRUE(same_pixels(gold_slot.out(), slot.out()));
      }
}

INSTANTIATE_TEST_SUITE_P(GpuBackends, RegisterBackendParity,
                         ::testing::Values(dm::BackendKind::Copy, dm::BackendKind::ZeroCopy, dm::BackendKind::Managed),
                         [](const ::testing::TestParamInfo<dm::BackendKind>& i) {
                           return std::string(dm::to_string(i.param));
                         });

#if DEPTHMASK_HAVE_CUDA
namespace {
// APC's raw/ frames [first, kApcFrames) reprojected with `g` on the GPU: equal to the CPU loop, and
// the vendor-alignment bounds (the centre ones without distortion, the whole frame's with it).
void check_apc_on_gpu(const std::filesystem::path& scene, const dm::CameraGeometry& g, int first, const char* label) {
  const dm::ReprojectParams params = dm::reproject_params(g);
  const dm::DepthDecode decode = dm::decode_with_scale(dmtest::kApcScale);
  const dmtest::TestStream stream;
  DM_CUDA_OK(stream.status());
  for (int i = first; i < dmtest::kApcFrames; ++i) {
    const std::string id = dmtest::apc_id(i);
    SCOPED_TRACE("frame-" + id);
    const dmtest::ApcPair pair = dmtest::load_apc_pair(scene, id);
    cv::Mat gold(pair.vendor_m.size(), CV_32FC1);
    dm::reproject_cpu(dmtest::register_job(pair.raw_decoded, gold), params, decode);

    const dmtest::DeviceImage d(pair.raw_decoded.size(), sizeof(uint16_t), 0, 0, 0, 0);
    const dmtest::DeviceImage o(pair.vendor_m.size(), sizeof(float), 0, 0, 0, 0);
    DM_CUDA_OK(d.status());
    DM_CUDA_OK(o.status());
    DM_CUDA_OK(d.upload(pair.raw_decoded));
    DM_CUDA_OK(cudaDeviceSynchronize());  // the upload ran on the legacy stream: see GpuEqualsCpuExactly
    dm::RegisterJob job;
    job.depth = {d.roi(), d.pitch()}, job.depth_type = dm::DepthType::U16;
    job.depth_rows = pair.raw_decoded.rows, job.depth_cols = pair.raw_decoded.cols;
    job.out = {reinterpret_cast<float*>(o.roi()), o.pitch()};
    job.out_rows = gold.rows, job.out_cols = gold.cols;
    dm::launch_reproject(job, params, decode, stream.get());
    DM_CUDA_OK(cudaStreamSynchronize(stream.get()));
    cv::Mat got(gold.size(), CV_32FC1);
    DM_CUDA_OK(o.download(got));
    EXPECT_TRUE(same_pixels(gold, got));
    if (g.depth_distortion.model == dm::DistortionModel::None)
      dmtest::expect_vendor_alignment(got, pair.vendor_m, g, std::string(label) + " " + id);
    else
      dmtest::expect_vendor_alignment_whole_frame(got, pair.vendor_m, std::string(label) + " " + id);
  }
}
}  // namespace
#endif

// The APC acceptance check with the GPU kernels: equal to the CPU loop, and the same bounds.
TEST(RegisterApcGpu, RawDepthReprojectedOnTheGpuMatchesCpuAndTheVendorsAlignment) {
  DM_REQUIRE_GPU();
#if DEPTHMASK_HAVE_CUDA
  const auto scene = dmtest::apc_scene();
  if (scene.empty()) GTEST_SKIP() << "real data not present: " << dmtest::shared_data_dir() / "apc-vision-toolbox";
  check_apc_on_gpu(scene, dm::read_apc_cam_info(scene / "cam.info.txt"), 0, "gpu");
#endif
}

// With the depth camera's distortion fitted on frame 0 (test_register.cpp says how): the whole
// frame's bounds on frames 1-7, the GPU equal to the CPU.
TEST(RegisterApcGpu, WithTheDepthDistortionTheWholeFrameMatchesOnTheGpu) {
  DM_REQUIRE_GPU();
#if DEPTHMASK_HAVE_CUDA
  const auto scene = dmtest::apc_scene();
  if (scene.empty()) GTEST_SKIP() << "real data not present: " << dmtest::shared_data_dir() / "apc-vision-toolbox";
  dm::CameraGeometry g = dm::read_apc_cam_info(scene / "cam.info.txt");
  g.depth_distortion.model = dm::DistortionModel::InverseBrownConrady;
  std::copy(std::begin(dmtest::kApcDepthDistortion), std::end(dmtest::kApcDepthDistortion),
            g.depth_distortion.coeffs.begin());
  check_apc_on_gpu(scene, g, 1, "gpu distortion");
#endif
}

// Which source pixel each target pixel reads: the source holds its own coordinates as float depth
// (1000 * x + y + 1 metres, exact in float), so a mismatch names both pixels.
TEST(ResampleIndexParity, GpuReadsTheSameSourcePixelAsTheCpu) {
  DM_REQUIRE_GPU();
#if DEPTHMASK_HAVE_CUDA
  const cv::Size dsize(640, 480), tsize(320, 240);
  cv::Mat depth(dsize, CV_32FC1);
  for (int y = 0; y < dsize.height; ++y)
    for (int x = 0; x < dsize.width; ++x) depth.at<float>(y, x) = static_cast<float>(1000 * x + y + 1);
  const dm::Intrinsics kd = k_for(dsize), kc = k_for(tsize, 1.3);
  for (const dm::ResampleMap& map : {dm::resample_map_sizes(640, 480, 320, 240),
                                     dm::resample_map(kd.fx, kd.fy, kd.cx, kd.cy, kc.fx, kc.fy, kc.cx, kc.cy)}) {
    SCOPED_TRACE(::testing::Message() << "map ax " << map.ax << " bx " << map.bx << " ay " << map.ay << " by "
                                      << map.by);
    cv::Mat gold(tsize, CV_32FC1, cv::Scalar(-7.0f));
    dm::resample_cpu(dmtest::register_job(depth, gold), map, dm::decode_with_scale(0.001f));
    const dmtest::DeviceImage d(dsize, sizeof(float), 0, 0, 0, 0);
    const dmtest::DeviceImage o(tsize, sizeof(float), 0, 0, 0, 0);
    DM_CUDA_OK(d.status());
    DM_CUDA_OK(o.status());
    DM_CUDA_OK(d.upload(depth));
    dm::RegisterJob job;
    job.depth = {d.roi(), d.pitch()}, job.depth_type = dm::DepthType::F32;
    job.depth_rows = dsize.height, job.depth_cols = dsize.width;
    job.out = {reinterpret_cast<float*>(o.roi()), o.pitch()};
    job.out_rows = tsize.height, job.out_cols = tsize.width;
    dm::launch_resample(job, map, dm::decode_with_scale(0.001f), nullptr);
    DM_CUDA_OK(cudaDeviceSynchronize());
    cv::Mat got(tsize, CV_32FC1, cv::Scalar(-9.0f));
    DM_CUDA_OK(o.download(got));
    int shown = 0;
    for (int y = 0; y < tsize.height && shown < 5; ++y)
      for (int x = 0; x < tsize.width && shown < 5; ++x) {
        const float a = gold.at<float>(y, x), b = got.at<float>(y, x);
        if (a != b) {
          ++shown;
          ADD_FAILURE() << "target (" << x << ", " << y << "): cpu reads " << a << ", gpu reads " << b;
        }
      }
  }
#endif
}
