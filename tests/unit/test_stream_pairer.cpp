// StreamPairer: hand-made timestamp sequences (exact, jittered, a missing partner, out of order,
// stalled partner, bounds).
#include <gtest/gtest.h>

#include <utility>
#include <vector>

#include "depthmask/errors.h"
#include "depthmask/stream_pairer.h"
#include "test_support.h"

namespace dm = depthmask;

namespace {

using Pairs = std::vector<std::vector<uint64_t>>;

// Every ready set's handles (streams 0..n-1).
Pairs drain(dm::StreamPairer& p) {
  Pairs out;
  dm::StreamPairer::Set s;
  while (p.pop(s)) out.emplace_back(s.item.begin(), s.item.begin() + p.streams());
  return out;
}

}  // namespace

TEST(StreamPairer, ExactTimestampsPairAtOnce) {
  dm::StreamPairer p(2, 0.02);
  for (uint64_t i = 0; i < 4; ++i) {
    p.push(0, 1.0 + 0.033 * static_cast<double>(i), 100 + i);
    EXPECT_TRUE(drain(p).empty()) << "no color yet for depth " << i;
    p.push(1, 1.0 + 0.033 * static_cast<double>(i), 200 + i);
    // A partner at the same time is the closest any later frame could be: decided without waiting.
    EXPECT_EQ(drain(p), (Pairs{{100 + i, 200 + i}}));
  }
  EXPECT_EQ(p.unpaired(), 0u);
}

TEST(StreamPairer, JitteredTimestampsTakeTheClosestWithinTolerance) {
  // Color 5 ms after depth, with +-4 ms jitter; the 30 Hz streams are 33 ms apart.
  dm::StreamPairer p(2, 0.02);
  const std::vector<double> depth{0.000, 0.033, 0.066, 0.100};
  const std::vector<double> color{0.009, 0.034, 0.067, 0.109};
  for (size_t i = 0; i < depth.size(); ++i) {
    p.push(1, color[i], 200 + i);
    p.push(0, depth[i], 100 + i);
  }
  p.finish();
  EXPECT_EQ(drain(p), (Pairs{{100, 200}, {101, 201}, {102, 202}, {103, 203}}));
  EXPECT_EQ(p.unpaired(), 0u);
}

TEST(StreamPairer, ColorBeforeItsDepthIsTakenWhenClosest) {
  // color at 0.030 is 3 ms before depth 0.033 and 30 ms after depth 0: it belongs to the second.
  dm::StreamPairer p(2, 0.02);
  p.push(1, 0.030, 200);
  p.push(0, 0.000, 100);
  p.push(0, 0.033, 101);
  p.push(1, 0.070, 201);
  p.finish();
  EXPECT_EQ(drain(p), (Pairs{{101, 200}}));
  EXPECT_EQ(p.unpaired(0), 1u);  // depth 0: nothing within 20 ms
  EXPECT_EQ(p.unpaired(1), 1u);  // color 0.070: no depth within 20 ms
}

TEST(StreamPairer, MissingPartnerIsDroppedOnceTheToleranceHasPassed) {
  dm::StreamPairer p(3, 0.02);  // depth, color, mask
  // Frame 1's color is missing.
  p.push(0, 0.000, 100), p.push(1, 0.005, 200), p.push(2, 0.005, 300);
  p.push(0, 0.033, 101), p.push(2, 0.038, 301);
  EXPECT_EQ(drain(p), (Pairs{{100, 200, 300}}));
  // Depth 0.033 waits: a color within 20 ms may still come.
  EXPECT_EQ(p.unpaired(), 0u);
  p.push(0, 0.066, 102), p.push(2, 0.071, 302);
  p.push(1, 0.071, 202);  // the color stream's clock passes 0.033 + 0.02: depth 0.033 has none
  EXPECT_EQ(drain(p), (Pairs{{102, 202, 302}}));
  EXPECT_EQ(p.unpaired(0), 1u);
  EXPECT_EQ(p.unpaired(1), 0u);
  EXPECT_EQ(p.unpaired(2), 1u);  // mask 0.038: its depth was dropped, no other depth is near it
  EXPECT_EQ(p.unpaired(), 2u);
}

TEST(StreamPairer, OutOfOrderArrivalsPairInTimeOrder) {
  dm::StreamPairer p(2, 0.01);
  // Depth frames out of order among themselves, all before any color.
  p.push(0, 0.066, 102);
  p.push(0, 0.000, 100);
  p.push(0, 0.033, 101);
  EXPECT_TRUE(drain(p).empty());
  p.push(1, 0.001, 200);
  EXPECT_EQ(drain(p), (Pairs{{100, 200}}));
  p.push(1, 0.034, 201);
  p.push(1, 0.067, 202);
  EXPECT_EQ(drain(p), (Pairs{{101, 201}, {102, 202}}));
  EXPECT_EQ(p.unpaired(), 0u);
}

TEST(StreamPairer, AStreamsClockDecidesItsLateFrame) {
  // Within one stream frames come in time order: once color 0.034 is seen, depth 0 cannot get one.
  dm::StreamPairer p(2, 0.01);
  p.push(0, 0.000, 100);
  p.push(1, 0.034, 201);
  EXPECT_EQ(p.unpaired(0), 1u);
  p.push(1, 0.001, 200);  // older than its stream's clock: depth 0 was decided without it
  p.push(0, 0.033, 101);
  p.finish();
  EXPECT_EQ(drain(p), (Pairs{{101, 201}}));
  EXPECT_EQ(p.unpaired(1), 1u);
}

TEST(StreamPairer, FramesArrivingAfterTheirTimeWasDecidedAreDropped) {
  dm::StreamPairer p(2, 0.01);
  p.push(0, 0.000, 100), p.push(1, 0.000, 200);
  p.push(0, 0.033, 101), p.push(1, 0.033, 201);
  EXPECT_EQ(drain(p).size(), 2u);
  p.push(0, 0.020, 150);  // a depth frame older than one already paired
  p.push(1, 0.010, 250);  // a color frame no pending or later depth can take
  p.finish();
  EXPECT_TRUE(drain(p).empty());
  EXPECT_EQ(p.unpaired(0), 1u);
  EXPECT_EQ(p.unpaired(1), 1u);
}

TEST(StreamPairer, AdvanceDecidesFramesWaitingOnAStalledPartner) {
  dm::StreamPairer p(2, 0.02);
  p.push(0, 1.000, 100);
  p.push(0, 1.033, 101);
  EXPECT_TRUE(drain(p).empty());
  p.advance(1.030);  // depth 1.000 can get no color within 20 ms any more; 1.033 still can
  EXPECT_EQ(p.unpaired(0), 1u);
  p.push(1, 1.040, 201);
  EXPECT_EQ(drain(p), (Pairs{{101, 201}}));
}

TEST(StreamPairer, PendingFramesAreBounded) {
  dm::StreamPairer p(2, 0.02, 3);
  for (uint64_t i = 0; i < 10; ++i) p.push(0, static_cast<double>(i), i);  // the color stream never comes
  EXPECT_EQ(p.unpaired(0), 7u);
  p.push(1, 9.0, 99);
  p.finish();
  EXPECT_EQ(drain(p), (Pairs{{9, 99}}));
  EXPECT_EQ(p.unpaired(0), 9u);
}

TEST(StreamPairer, OneStreamPassesEverything) {
  dm::StreamPairer p(1, 0);
  p.push(0, 2.0, 7);
  p.push(0, 3.0, 8);
  EXPECT_EQ(drain(p), (Pairs{{7}, {8}}));
}

TEST(StreamPairer, RejectsBadArguments) {
  EXPECT_THROW(dm::StreamPairer(0, 0.02), dm::ConfigError);
  EXPECT_THROW(dm::StreamPairer(dm::StreamPairer::kMaxStreams + 1, 0.02), dm::ConfigError);
  EXPECT_THROW(dm::StreamPairer(2, -0.001), dm::ConfigError);
}
