// live.overflow auto (resolve_overflow): block for a source that can wait (an unpaced replay), drop_oldest
// for cameras and paced sources, an explicit value as it is; which sources can wait; and the runner
// applying the resolved policy. No timing asserts: where frames must pile up the output is held until
// the source has produced them.
#include <gtest/gtest.h>

#include <thread>

#include "depthmask/config.h"
#include "depthmask/live.h"
#include "depthmask/live_runner.h"
#include "depthmask/synth.h"
#include "layout_fixtures.h"
#include "live_support.h"
#include "test_support.h"

namespace dm = depthmask;
using dmtest::Contains;
using dmtest::FakeSource;

namespace {

constexpr int kW = 23, kH = 17;

std::unique_ptr<dm::LiveSource> opened(const std::string& uri) {
  auto s = dm::make_live_source(dm::parse_source_uri(uri), dm::Config{});
  s->open();
  return s;
}

TEST(LiveOverflow, AutoBlocksForASourceThatCanWaitAndDropsOldestOtherwise) {
  FakeSource waits(kW, kH), camera(kW, kH);
  waits.waits = true;
  const dm::OverflowChoice w = dm::resolve_overflow(dm::Overflow::Auto, waits);
  EXPECT_EQ(w.policy, dm::Overflow::Block);
  EXPECT_EQ(w.reason, "auto → block: an unpaced replay waits");
  const dm::OverflowChoice c = dm::resolve_overflow(dm::Overflow::Auto, camera);
  EXPECT_EQ(c.policy, dm::Overflow::DropOldest);
  EXPECT_TRUE(Contains(c.reason, "auto → drop_oldest")) << c.reason;
}

TEST(LiveOverflow, AnExplicitValueWinsOverWhatTheSourceCouldDo) {
  FakeSource waits(kW, kH), camera(kW, kH);
  waits.waits = true;
  const dm::OverflowChoice d = dm::resolve_overflow(dm::Overflow::DropOldest, waits);
  EXPECT_EQ(d.policy, dm::Overflow::DropOldest);
  EXPECT_EQ(d.reason, "drop_oldest (live.overflow)");
  const dm::OverflowChoice b = dm::resolve_overflow(dm::Overflow::Block, camera);
  EXPECT_EQ(b.policy, dm::Overflow::Block);
  EXPECT_EQ(b.reason, "block (live.overflow)");
}

TEST(LiveOverflow, OnlyAnUnpacedReplayCanWait) {
  dmtest::TempDir dir;
  dm::write_synthetic_dataset(dir.path(), 2, 16, 12);
  const std::string replay = "replay://" + dir.path().string();
  EXPECT_TRUE(opened(replay + "?fps=0")->can_wait());
  EXPECT_TRUE(opened(replay + "?fps=0&loop=1")->can_wait());
  EXPECT_FALSE(opened(replay + "?fps=30")->can_wait());
  EXPECT_FALSE(opened(replay)->can_wait());                         // 30 fps by default
  EXPECT_FALSE(opened("synthetic://?size=8x6&fps=0")->can_wait());  // stands in for a camera
  // A TUM sequence is paced at its recorded timestamps unless the URI names a rate.
  dmtest::TempDir tum;
  dmfix::write_tum(tum.path());
  const std::string tum_replay = "replay://" + tum.path().string();
  EXPECT_FALSE(opened(tum_replay)->can_wait());
  EXPECT_TRUE(opened(tum_replay + "?fps=0")->can_wait());
}

// A runner with the output held until the source has produced `hold_until` frames.
dm::LiveSummary run_held(FakeSource& src, dm::Overflow overflow, uint64_t hold_until) {
  dm::Config c;
  c.live.overflow = overflow;
  c.live.buffers = 3;
  c.live.stats_interval = 0;
  auto backend = dmtest::cpu_backend();
  struct Hold : dm::LiveObserver {
    FakeSource* src = nullptr;
    uint64_t until = 0;
    bool held = false;
    void on_frame(const dm::CapturedFrame&, const dm::FrameSlot&, uint64_t) override {
      if (held) return;
      held = true;
      // A waiting source never gets past the slots, so the hold ends when it stops producing.
      uint64_t last = 0;
      for (int quiet = 0; quiet < 200 && src->produced.load() < until; ++quiet) {
        std::this_thread::sleep_for(std::chrono::milliseconds(5));
        if (src->produced.load() != last) quiet = 0;
        last = src->produced.load();
      }
    }
  } hold;
  hold.src = &src;
  hold.until = hold_until;
  return dm::run_live(c, *backend, src, {}, nullptr, &hold);
}

TEST(LiveOverflow, TheRunnerBlocksASourceThatCanWaitUnderAuto) {
  FakeSource src(kW, kH, 40);
  src.waits = true;
  const dm::LiveSummary s = run_held(src, dm::Overflow::Auto, 40);
  EXPECT_EQ(s.overflow.policy, dm::Overflow::Block);
  EXPECT_EQ(s.captured, 40u);
  EXPECT_EQ(s.processed, 40u);
  EXPECT_EQ(s.drops_overflow, 0u);
}

TEST(LiveOverflow, TheRunnerDropsForACameraUnderAutoAndForAnExplicitDropOldest) {
  for (const bool waits : {false, true}) {
    FakeSource src(kW, kH, 40);
    src.waits = waits;
    const dm::Overflow configured = waits ? dm::Overflow::DropOldest : dm::Overflow::Auto;
    const dm::LiveSummary s = run_held(src, configured, 40);
    EXPECT_EQ(s.overflow.policy, dm::Overflow::DropOldest) << "waits " << waits;
    EXPECT_EQ(s.captured, 40u);
    // Capture ran on while the output held its first frame: all but what the slots hold was dropped.
    EXPECT_GE(s.drops_overflow, 30u) << "waits " << waits;
    EXPECT_EQ(s.captured, s.processed + s.drops_overflow + s.failed);
  }
}

}  // namespace
