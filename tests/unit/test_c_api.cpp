// The C ABI (depthmask_c.h): status codes and messages per failure class, results equal to the C++
// facade's, the batch job with its JSON summary, and no crash on null or nonsense arguments.
#include "depthmask/depthmask_c.h"

#include <gtest/gtest.h>
#include <nlohmann/json.hpp>

#include <opencv2/core.hpp>

#include <cstring>
#include <string>

#include "c_api_support.h"
#include "depthmask/bench/scratch_dir.h"
#include "depthmask/masker.h"
#include "depthmask/synth.h"
#include "depthmask/version.h"

namespace {

using dmtest::host_dm_image;

struct Handle {
  dm_masker* m = nullptr;
  ~Handle() { dm_masker_close(m); }
};

}  // namespace

TEST(CApi, VersionAndAbi) {
  EXPECT_STREQ(dm_version(), DEPTHMASK_VERSION);
  EXPECT_EQ(dm_abi_version(), DM_ABI_VERSION);
  EXPECT_EQ(dm_cuda_built(), DEPTHMASK_HAVE_CUDA ? 1 : 0);
}

TEST(CApi, MasksLikeTheFacade) {
  const char* ov[] = {"backend.kind=cpu", "depth.max=3"};
  Handle h;
  ASSERT_EQ(dm_masker_open(nullptr, "depth: {scale: 0.001}\n", ov, 2, &h.m), DM_OK) << dm_last_error();
  EXPECT_STREQ(dm_last_error(), "");
  EXPECT_STREQ(dm_masker_backend(h.m), "cpu");
  EXPECT_NE(std::string(dm_masker_reason(h.m)), "");
  EXPECT_EQ(dm_masker_device(h.m), -1);
  char* yaml = nullptr;
  ASSERT_EQ(dm_masker_config_yaml(h.m, &yaml), DM_OK);
  EXPECT_NE(std::string(yaml).find("max: 3"), std::string::npos) << yaml;
  dm_string_free(yaml);

  cv::Mat depth(17, 23, CV_16UC1), mask(17, 23, CV_8UC1), out(17, 23, CV_32FC1);
  cv::randu(depth, 0, 4000);
  cv::randu(mask, 0, 2);
  const dm_image d = host_dm_image(depth, DM_DTYPE_UINT16), k = host_dm_image(mask, DM_DTYPE_UINT8),
                 o = host_dm_image(out, DM_DTYPE_FLOAT32);
  ASSERT_EQ(dm_masker_mask(h.m, &d, &k, nullptr, &o, nullptr), DM_OK) << dm_last_error();
  depthmask::Masker cxx = depthmask::Masker::from_yaml("depth: {scale: 0.001}\n", {"backend.kind=cpu", "depth.max=3"});
  const cv::Mat gold = cxx.mask(depth, mask);
  for (int y = 0; y < out.rows; ++y) EXPECT_EQ(std::memcmp(out.ptr(y), gold.ptr(y), out.cols * sizeof(float)), 0);
}

TEST(CApi, StatusCodesAndMessagesPerFailureClass) {
  Handle h;
  const char* bad_key[] = {"mask.erode=99"};
  EXPECT_EQ(dm_masker_open(nullptr, nullptr, bad_key, 1, &h.m), DM_ERROR_CONFIG);
  EXPECT_NE(std::string(dm_last_error()).find("mask.erode"), std::string::npos) << dm_last_error();
  EXPECT_EQ(h.m, nullptr);
  EXPECT_EQ(dm_masker_open("/nonexistent/depthmask.yaml", nullptr, nullptr, 0, &h.m), DM_ERROR_CONFIG);
  EXPECT_NE(std::string(dm_last_error()).find("/nonexistent/depthmask.yaml"), std::string::npos) << dm_last_error();
  EXPECT_EQ(dm_masker_open("a.yaml", "b: 1", nullptr, 0, &h.m), DM_ERROR_CONFIG);
  EXPECT_EQ(dm_masker_open(nullptr, nullptr, nullptr, 3, &h.m), DM_ERROR_CONFIG);  // 3 overrides, no array

  const char* cpu[] = {"backend.kind=cpu"};
  ASSERT_EQ(dm_masker_open(nullptr, nullptr, cpu, 1, &h.m), DM_OK);
  cv::Mat depth(4, 4, CV_16UC1, cv::Scalar(1000)), mask(4, 4, CV_8UC1, cv::Scalar(1)), out(4, 4, CV_32FC1);
  dm_image d = host_dm_image(depth, DM_DTYPE_UINT16), k = host_dm_image(mask, DM_DTYPE_UINT8),
           o = host_dm_image(out, DM_DTYPE_FLOAT32);
  dm_image bad = d;
  bad.dtype = 99;
  EXPECT_EQ(dm_masker_mask(h.m, &bad, &k, nullptr, &o, nullptr), DM_ERROR_INPUT);
  EXPECT_NE(std::string(dm_last_error()).find("dtype 99"), std::string::npos) << dm_last_error();
  bad = d;
  bad.memory = 7;
  EXPECT_EQ(dm_masker_mask(h.m, &bad, &k, nullptr, &o, nullptr), DM_ERROR_INPUT);
  EXPECT_NE(std::string(dm_last_error()).find("memory 7 is none of DM_MEMORY_HOST"), std::string::npos)
      << dm_last_error();
  bad = d;
  bad.ndim = 4;
  EXPECT_EQ(dm_masker_mask(h.m, &bad, &k, nullptr, &o, nullptr), DM_ERROR_INPUT);
  bad = o;
  bad.read_only = 1;
  EXPECT_EQ(dm_masker_mask(h.m, &d, &k, nullptr, &bad, nullptr), DM_ERROR_INPUT);
  EXPECT_NE(std::string(dm_last_error()).find("out is read-only"), std::string::npos) << dm_last_error();
  bad = d;
  bad.memory = DM_MEMORY_CUDA;
  bad.device = 0;
  dm_image kd = k, od = o;
  kd.memory = od.memory = DM_MEMORY_CUDA;
  kd.device = od.device = 0;
  EXPECT_EQ(dm_masker_mask(h.m, &bad, &kd, nullptr, &od, nullptr), DM_ERROR_CONFIG);
  EXPECT_NE(std::string(dm_last_error()).find("backend is cpu"), std::string::npos) << dm_last_error();
  EXPECT_EQ(dm_masker_mask(h.m, nullptr, &k, nullptr, &o, nullptr), DM_ERROR_INPUT);
  EXPECT_EQ(dm_masker_mask(nullptr, &d, &k, nullptr, &o, nullptr), DM_ERROR_CONFIG);
  // A success clears the message.
  EXPECT_EQ(dm_masker_mask(h.m, &d, &k, nullptr, &o, nullptr), DM_OK);
  EXPECT_STREQ(dm_last_error(), "");
  EXPECT_EQ(out.at<float>(0, 0), 1.0f);
  // Nothing crashes on nulls.
  dm_masker_close(nullptr);
  dm_masker_cancel(nullptr);
  dm_string_free(nullptr);
  EXPECT_STREQ(dm_masker_backend(nullptr), "");
  EXPECT_EQ(dm_masker_config_yaml(nullptr, nullptr), DM_ERROR_CONFIG);
}

namespace {
void count_progress(void* user, uint64_t done, uint64_t total) {
  auto* seen = static_cast<uint64_t*>(user);
  seen[0] = done;
  seen[1] = total;
}
}  // namespace

TEST(CApi, RunsTheBatchAndReturnsTheSummaryAsJson) {
  depthmask::ScratchDir tmp("c-api-run");
  depthmask::write_synthetic_dataset(tmp.path() / "in", 4, 16, 12);
  const std::string cfg = (tmp.path() / "in" / "depthmask.yaml").string();
  const char* cpu[] = {"backend.kind=cpu"};
  Handle h;
  ASSERT_EQ(dm_masker_open(cfg.c_str(), nullptr, cpu, 1, &h.m), DM_OK) << dm_last_error();
  uint64_t seen[2] = {0, 0};
  char* json = nullptr;
  const std::string out = (tmp.path() / "out").string();
  ASSERT_EQ(dm_masker_run(h.m, nullptr, out.c_str(), nullptr, 0, count_progress, seen, &json), DM_OK)
      << dm_last_error();
  ASSERT_NE(json, nullptr);
  const nlohmann::json s = nlohmann::json::parse(json);
  dm_string_free(json);
  EXPECT_EQ(s["ok"], 4);
  EXPECT_EQ(s["total"], 4);
  EXPECT_EQ(s["backend"], "cpu");
  EXPECT_EQ(s["exit_code"], 0);
  EXPECT_TRUE(s["failure"].is_null());
  // The start-up breakdown (pipeline.h StartupTimes): a cpu run never initialises CUDA.
  ASSERT_TRUE(s["startup"].is_object()) << s.dump();
  EXPECT_GT(s["startup"]["run_first_frame_ms"].get<double>(), 0.0);
  EXPECT_EQ(s["startup"]["cuda_init_ms"].get<double>(), 0.0);
  EXPECT_TRUE(s["startup"].contains("listing_ms"));
  EXPECT_EQ(seen[0], 4u);
  EXPECT_EQ(seen[1], 4u);

  // A cancelled run: status interrupted, the summary still comes back.
  dm_masker_cancel(h.m);
  const std::string out2 = (tmp.path() / "out2").string();
  EXPECT_EQ(dm_masker_run(h.m, nullptr, out2.c_str(), nullptr, 0, nullptr, nullptr, &json), DM_ERROR_INTERRUPTED);
  ASSERT_NE(json, nullptr);
  EXPECT_EQ(nlohmann::json::parse(json)["interrupted"], true);
  dm_string_free(json);

  // A folder with no frames: an input error and its message, no summary.
  const std::string empty = (tmp.path() / "empty").string();
  std::filesystem::create_directories(empty);
  EXPECT_EQ(dm_masker_run(h.m, empty.c_str(), out.c_str(), nullptr, 0, nullptr, nullptr, &json), DM_ERROR_INPUT);
  EXPECT_EQ(json, nullptr);
  EXPECT_NE(std::string(dm_last_error()), "");
}
