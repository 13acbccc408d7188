// The C ABI (depthmask_c.h): status codes and messages per failure class, results equal to the C++
// facade's, the batch job with its JSON summary, and no crash on null or nonsense arguments.
#include "depthmask/depthmask_c.h"

#include <gtest/gtest.h>
#include <nlohmann/json.hpp>

#include <opencv2/core.hpp>

#include <algorithm>
#include <cstring>
#include <filesystem>
#include <string>
#include <utility>
#include <vector>

#include "c_api_support.h"
#include "depthmask/bench/scratch_dir.h"
#include "depthmask/masker.h"
#include "depthmask/synth.h"
#include "depthmask/version.h"
#include "test_support.h"

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

// A ROS 2 bag through the C ABI (docs/ROSBAG.md): dm_masker_run on a bag writes the bytes a run on
// the same frames as a folder writes; dm_doctor lists its topics; a cut bag keeps the frames before
// the cut and fails as input, naming the file.
TEST(CApi, RunsAndChecksABagLikeAFolder) {
  depthmask::ScratchDir tmp("c-api-bag");
  try {
    depthmask::write_synthetic_bag(tmp.path() / "bag", 4, 16, 12);
  } catch (const depthmask::InputError& e) {
    GTEST_SKIP() << "no bag support in this build: " << e.what();
  }
  depthmask::write_synthetic_dataset(tmp.path() / "dir", 4, 16, 12);
  const char* overrides[] = {"backend.kind=cpu", "output.format=[npy]", "output.preview=false"};
  Handle h;
  const std::string cfg = (tmp.path() / "dir" / "depthmask.yaml").string();
  ASSERT_EQ(dm_masker_open(cfg.c_str(), nullptr, overrides, 3, &h.m), DM_OK) << dm_last_error();
  const auto run = [&](const std::filesystem::path& in, const std::filesystem::path& out) {
    char* json = nullptr;
    const int status =
        dm_masker_run(h.m, in.string().c_str(), out.string().c_str(), nullptr, 0, nullptr, nullptr, &json);
    nlohmann::json s;
    if (json) s = nlohmann::json::parse(json);
    dm_string_free(json);
    return std::make_pair(status, s);
  };
  const auto [bag_status, bag_summary] = run(tmp.path() / "bag", tmp.path() / "out-bag");
  ASSERT_EQ(bag_status, DM_OK) << dm_last_error();
  EXPECT_EQ(bag_summary["ok"], 4) << bag_summary.dump();
  ASSERT_EQ(run(tmp.path() / "dir", tmp.path() / "out-dir").first, DM_OK) << dm_last_error();
  const auto npys = [](const std::filesystem::path& d) {
    std::vector<std::filesystem::path> v;
    for (const auto& e : std::filesystem::directory_iterator(d))
      if (e.path().extension() == ".npy") v.push_back(e.path());
    std::sort(v.begin(), v.end());
    return v;
  };
  const auto from_bag = npys(tmp.path() / "out-bag"), from_dir = npys(tmp.path() / "out-dir");
  ASSERT_EQ(from_bag.size(), 4u);
  ASSERT_EQ(from_dir.size(), 4u);
  EXPECT_EQ(from_bag[0].filename(), "1700000000000000000.npy");  // the depth stamp in ns
  for (size_t i = 0; i < 4; ++i)
    EXPECT_EQ(dmtest::read_bytes(from_bag[i]), dmtest::read_bytes(from_dir[i])) << from_bag[i] << " " << from_dir[i];

  char* report = nullptr;
  const std::string bag_dir = (tmp.path() / "bag").string();
  ASSERT_EQ(dm_doctor(nullptr, "backend: {kind: cpu}\n", bag_dir.c_str(), nullptr, 0, 1, &report), DM_OK)
      << dm_last_error();
  const nlohmann::json r = nlohmann::json::parse(report);
  dm_string_free(report);
  EXPECT_EQ(r["layout"], "rosbag2") << r.dump();
  EXPECT_NE(r.dump().find("/seg/mask"), std::string::npos) << r.dump();

  // A bag cut in its second chunk (640x480 frames: two to a chunk): the frames before the damage are
  // written, the run fails as input and its message names the file.
  depthmask::write_synthetic_bag(tmp.path() / "big", 6, 640, 480);
  const std::filesystem::path mcap = tmp.path() / "big" / "synthetic_0.mcap";
  std::filesystem::resize_file(mcap, std::filesystem::file_size(mcap) * 2 / 3);
  const auto [cut_status, cut_summary] = run(tmp.path() / "big", tmp.path() / "out-cut");
  EXPECT_EQ(cut_status, DM_ERROR_INPUT) << cut_summary.dump();
  EXPECT_GE(cut_summary["ok"].get<int>(), 1) << cut_summary.dump();
  EXPECT_LT(cut_summary["ok"].get<int>(), 6) << cut_summary.dump();
  EXPECT_EQ(npys(tmp.path() / "out-cut").size(), cut_summary["ok"].get<size_t>());
  EXPECT_NE(std::string(dm_last_error()).find("synthetic_0.mcap"), std::string::npos) << dm_last_error();
}
