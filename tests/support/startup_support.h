// Every way the library runs on the cpu backend, for the start-up tests (issue 16): none of them may
// initialise CUDA. The unit suite checks the library's own record (detail::cuda_initialised()); the
// GPU suite asks the CUDA driver itself.
#pragma once

#include <gtest/gtest.h>

#include <opencv2/core.hpp>

#include <cstring>
#include <filesystem>
#include <string>

#include "c_api_support.h"
#include "depthmask/config.h"
#include "depthmask/depthmask_c.h"
#include "depthmask/masker.h"
#include "depthmask/open_backend.h"
#include "depthmask/pipeline.h"
#include "depthmask/synth.h"

namespace dmtest {

// Masks frames through the Masker (host frames, and its batch run), the C ABI, open_backend() and
// run_batch() with a BackendOpener, all with backend.kind: cpu, in `scratch`. Returns the last run's
// summary.
inline depthmask::RunSummary run_everything_on_cpu(const std::filesystem::path& scratch) {
  namespace dm = depthmask;
  const std::filesystem::path data = scratch / "data";
  dm::write_synthetic_dataset(data, 2, 64, 48);
  const std::string yaml = "depth: {scale: 0.001, max: 3}\nmask: {labels: [1, 2]}\n";

  dm::Masker masker = dm::Masker::from_yaml(yaml, {"backend.kind=cpu"});
  cv::Mat depth(48, 64, CV_16UC1), mask(48, 64, CV_8UC1);
  cv::randu(depth, 0, 4000);
  cv::randu(mask, 0, 3);
  EXPECT_EQ(masker.mask(depth, mask).size(), depth.size());
  dm::RunRequest request;
  request.input = data;
  request.output = scratch / "masker-out";
  EXPECT_EQ(masker.run(request).ok, 2u);

  const char* overrides[] = {"backend.kind=cpu"};
  dm_masker* c_masker = nullptr;
  EXPECT_EQ(dm_masker_open(nullptr, yaml.c_str(), overrides, 1, &c_masker), DM_OK) << dm_last_error();
  cv::Mat out(48, 64, CV_32FC1);
  const auto image = host_dm_image;

  const dm_image d = image(depth, DM_DTYPE_UINT16), k = image(mask, DM_DTYPE_UINT8), o = image(out, DM_DTYPE_FLOAT32);
  EXPECT_EQ(dm_masker_mask(c_masker, &d, &k, nullptr, &o, nullptr), DM_OK) << dm_last_error();
  const std::string c_out = (scratch / "c-out").string();
  EXPECT_EQ(dm_masker_run(c_masker, data.string().c_str(), c_out.c_str(), nullptr, 0, nullptr, nullptr, nullptr), DM_OK)
      << dm_last_error();
  dm_masker_close(c_masker);

  const std::vector<dm::Override> ov{{"backend.kind", "cpu", "test"},
                                     {"output.dir", (scratch / "out").string(), "test", true}};
  const dm::Config c = dm::load_config(data / "depthmask.yaml", ov);
  {
    const dm::OpenedBackend opened = dm::open_backend(c);
    EXPECT_EQ(opened.backend->kind(), dm::BackendKind::Cpu);
  }
  dm::BackendOpener opener(c);
  return dm::run_batch(c, opener);
}

}  // namespace dmtest
