// The live runner on the GPU backends: the same fake frames through run_live on copy and zero_copy
// give exactly the cpu backend's outputs (skips without a GPU).
#include <gtest/gtest.h>

#include <map>

#include "depthmask/backend.h"
#include "depthmask/live_runner.h"
#include "depthmask/platform.h"
#include "live_support.h"
#include "test_support.h"

namespace dm = depthmask;

namespace {

class Keep : public dm::LiveObserver {
 public:
  std::map<uint64_t, cv::Mat> outputs;
  void on_frame(const dm::CapturedFrame& meta, const dm::FrameSlot& slot, uint64_t) override {
    outputs.emplace(meta.sequence, slot.out().clone());
  }
};

class LiveRunnerGpu : public ::testing::TestWithParam<dm::BackendKind> {};

TEST_P(LiveRunnerGpu, MatchesTheCpuBackendFrameForFrame) {
  DM_REQUIRE_GPU();
  // Odd sizes; the larger one is split in row bands by the copy backend.
  for (const cv::Size size : {cv::Size(33, 31), cv::Size(639, 481)}) {
    dm::Config c;
    c.depth.max = 9.0;
    c.live.overflow = dm::Overflow::Block;
    c.live.buffers = 3;
    c.live.stats_interval = 0;
    const auto choice = dm::choose_backend(dm::BackendConfig{GetParam(), 0}, dmtest::platform());
    auto backend = dm::make_backend(choice, dmtest::platform());
    dmtest::FakeSource src(size.width, size.height, 12);
    Keep keep;
    const dm::LiveSummary s = dm::run_live(c, *backend, src, {}, nullptr, &keep);
    EXPECT_EQ(s.processed, 12u);
    EXPECT_EQ(s.backend, GetParam());
    ASSERT_EQ(keep.outputs.size(), 12u);
    for (const auto& [seq, out] : keep.outputs)
      EXPECT_TRUE(dmtest::SameBits(dmtest::gold_frame(c, seq, size.width, size.height), out))
          << size << " frame " << seq;
  }
}

INSTANTIATE_TEST_SUITE_P(Backends, LiveRunnerGpu, ::testing::Values(dm::BackendKind::Copy, dm::BackendKind::ZeroCopy),
                         [](const auto& p) { return std::string(dm::to_string(p.param)); });

}  // namespace
