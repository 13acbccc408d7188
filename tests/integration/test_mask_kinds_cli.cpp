// The CLI with depth encodings and mask kinds: settings once refused are accepted and reach the rule,
// and the unit sanity check warns once per run.
#include <gtest/gtest.h>

#include <opencv2/core.hpp>
#include <opencv2/imgcodecs.hpp>

#include <string>

#include "cli_helpers.h"
#include "depthmask/config.h"
#include "depthmask/frame.h"
#include "depthmask/kernels/mask_kernel.h"
#include "test_support.h"

namespace {

namespace fs = std::filesystem;
using dmtest::q;
using dmtest::run_depthmask;
using dmtest::TempDir;

size_t count_of(const std::string& text, const std::string& part) {
  size_t n = 0;
  for (size_t at = text.find(part); at != std::string::npos; at = text.find(part, at + 1)) ++n;
  return n;
}

}  // namespace

TEST(CliUnits, WrongScaleWarnsOnceNamingThePlausibleScale) {
  TempDir tmp;
  // The sample is millimetres; read as metres its median is hundreds of metres.
  const auto r = run_depthmask("run --input " + q(dmtest::sample_dir()) + " --output " + q(tmp / "out") +
                               " --set depth.scale=1 --set depth.max=5000");
  ASSERT_EQ(r.exit_code, 0) << r.output;
  EXPECT_EQ(count_of(r.output, "median masked depth"), 1u) << r.output;
  EXPECT_TRUE(dmcli::contains(r.output, "at depth.scale 1 is implausible")) << r.output;
  EXPECT_TRUE(dmcli::contains(r.output, "with depth.scale 0.001 (mm) it would be")) << r.output;
}

TEST(CliUnits, RightScaleDoesNotWarn) {
  TempDir tmp;
  const auto r =
      run_depthmask("run --input " + q(dmtest::sample_dir()) + " --output " + q(tmp / "out") + " --set depth.max=2");
  ASSERT_EQ(r.exit_code, 0) << r.output;
  EXPECT_EQ(count_of(r.output, "median masked depth"), 0u) << r.output;
}

// Erode, threshold_fraction and invalid values through the CLI equal the rule run directly on the
// sample's PNGs with the same configuration.
TEST(CliMaskKinds, ErodeFractionAndInvalidValuesReachTheRule) {
  TempDir tmp;
  const std::vector<std::string> sets = {"depth.max=2", "mask.erode=2", "mask.threshold_fraction=0.005",
                                         "depth.invalid_values=[65535, 1000]"};
  std::string args = "run --input " + q(dmtest::sample_dir()) + " --output " + q(tmp / "out");
  std::vector<depthmask::Override> overrides;
  for (const auto& s : sets) {
    args += " --set " + q(s);
    overrides.push_back(depthmask::parse_override(s));
  }
  const auto r = run_depthmask(args);
  ASSERT_EQ(r.exit_code, 0) << r.output;
  const depthmask::MaskParams p = depthmask::mask_params(depthmask::load_config(std::nullopt, overrides));
  ASSERT_EQ(p.erode, 2);
  for (const std::string id : {"000000", "000004"}) {
    SCOPED_TRACE(id);
    const cv::Mat depth = cv::imread((dmtest::sample_dir() / "depth" / (id + ".png")).string(), cv::IMREAD_UNCHANGED);
    const cv::Mat mask = cv::imread((dmtest::sample_dir() / "mask" / (id + ".png")).string(), cv::IMREAD_UNCHANGED);
    ASSERT_EQ(depth.type(), CV_16UC1);
    cv::Mat want(depth.size(), CV_32FC1);
    depthmask::MaskJob job;
    job.depth = {depth.data, depth.step[0]}, job.depth_type = depthmask::DepthType::U16;
    job.mask = {mask.data, mask.step[0]};
    job.mask_type = mask.type() == CV_8UC1 ? depthmask::MaskType::U8 : depthmask::MaskType::U16;
    job.out = {want.ptr<float>(), want.step[0]}, job.rows = depth.rows, job.cols = depth.cols;
    depthmask::mask_cpu(job, p);
    const cv::Mat got = dmcli::read_tiff(tmp / "out" / (id + ".tiff"));
    EXPECT_EQ(dmcli::count_differences(got, want), 0u);
    // Erode really removed something at the objects' edges.
    depthmask::MaskParams plain = p;
    plain.erode = 0;
    cv::Mat uneroded(depth.size(), CV_32FC1);
    job.out.data = uneroded.ptr<float>();
    depthmask::mask_cpu(job, plain);
    EXPECT_LT(cv::countNonZero(got), cv::countNonZero(uneroded));
    EXPECT_GT(cv::countNonZero(got), 0);
  }
}
