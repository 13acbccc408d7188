// Unit tests of the live runner (live_runner.h) with a fake source on the cpu backend: every frame
// processed and equal to FrameSlot::run_mask, the overflow policies, reconnects, the stop flag and
// the limits, files every Nth frame, and the ZeroMQ output over a loopback socket. No timing asserts:
// where a test needs frames to pile up it holds the output until the source has produced them.
#include <gtest/gtest.h>

#include <nlohmann/json.hpp>
#include <zmq.hpp>

#include <opencv2/imgproc.hpp>

#include <atomic>
#include <chrono>
#include <condition_variable>
#include <cstdlib>
#include <cstring>
#include <map>
#include <mutex>
#include <thread>

#include "depthmask/config.h"
#include "depthmask/errors.h"
#include "depthmask/live_runner.h"
#include "live_support.h"
#include "test_support.h"

namespace dm = depthmask;
using dmtest::FakeSource;

namespace {

constexpr int kW = 37, kH = 29;

dm::Config live_config(dm::Overflow overflow, int buffers) {
  dm::Config c;
  c.depth.max = 9.0;
  c.live.overflow = overflow;
  c.live.buffers = buffers;
  c.live.stats_interval = 0;
  c.live.reconnect_max = 0.2;
  return c;
}

// Keeps a copy of every processed frame's output; optionally holds the first frame until `release`
// says so, or sleeps per frame (a slow output).
class Recorder : public dm::LiveObserver {
 public:
  std::function<void()> on_first;
  std::function<void(size_t)> after_each;  // with the count so far
  std::chrono::milliseconds delay{0};
  std::map<uint64_t, cv::Mat> outputs;
  std::atomic<size_t> stats_calls{0};

  void on_frame(const dm::CapturedFrame& meta, const dm::FrameSlot& slot, uint64_t) override {
    if (outputs.empty() && on_first) on_first();
    if (delay.count() > 0) std::this_thread::sleep_for(delay);
    EXPECT_EQ(meta.id, "f" + std::to_string(meta.sequence));
    EXPECT_TRUE(outputs.emplace(meta.sequence, slot.out().clone()).second) << "frame " << meta.sequence << " twice";
    if (after_each) after_each(outputs.size());
  }
  void on_stats(const dm::LiveStats&) override { ++stats_calls; }
};

void expect_gold(const dm::Config& c, const std::map<uint64_t, cv::Mat>& outputs) {
  for (const auto& [seq, out] : outputs)
    EXPECT_TRUE(dmtest::SameBits(dmtest::gold_frame(c, seq, kW, kH), out)) << "frame " << seq;
}

void expect_accounted(const dm::LiveSummary& s) { EXPECT_EQ(s.captured, s.processed + s.drops_overflow + s.failed); }

// Waits (up to 20 s, so a bug fails rather than hangs) until pred().
template <class P>
bool eventually(P pred) {
  for (int i = 0; i < 20000 && !pred(); ++i) std::this_thread::sleep_for(std::chrono::milliseconds(1));
  return pred();
}

TEST(LiveRunner, EveryFrameIsProcessedAndEqualsRunMaskOnTheCpuBackend) {
  const dm::Config c = live_config(dm::Overflow::Block, 3);
  auto backend = dmtest::cpu_backend();
  FakeSource src(kW, kH, 40);
  Recorder rec;
  const dm::LiveSummary s = dm::run_live(c, *backend, src, {}, nullptr, &rec);
  EXPECT_TRUE(s.source_ended);
  EXPECT_FALSE(s.interrupted);
  EXPECT_EQ(s.captured, 40u);
  EXPECT_EQ(s.processed, 40u);
  EXPECT_EQ(s.drops_overflow, 0u);
  EXPECT_EQ(s.failed, 0u);
  EXPECT_EQ(s.source, "fake 37x29");
  EXPECT_EQ(s.backend, dm::BackendKind::Cpu);
  ASSERT_EQ(rec.outputs.size(), 40u);
  EXPECT_EQ(rec.outputs.begin()->first, 0u);
  EXPECT_EQ(rec.outputs.rbegin()->first, 39u);
  expect_gold(c, rec.outputs);
  EXPECT_LE(s.latency.p50_us, s.latency.p99_us);
  EXPECT_LE(s.latency.p99_us, s.latency.max_us);
  EXPECT_EQ(src.opens.load(), 1);
}

TEST(LiveRunner, DropOldestDropsWhileTheOutputIsSlowAndNeverGrowsThePool) {
  const int buffers = 3;
  const dm::Config c = live_config(dm::Overflow::DropOldest, buffers);
  auto backend = dmtest::cpu_backend();
  FakeSource src(kW, kH, 120);
  Recorder rec;
  // The output holds its first frame until the source has produced 60: meanwhile capture must drop.
  rec.on_first = [&] { ASSERT_TRUE(eventually([&] { return src.produced.load() >= 60; })); };
  rec.delay = std::chrono::milliseconds(1);
  const dm::LiveSummary s = dm::run_live(c, *backend, src, {}, nullptr, &rec);
  EXPECT_EQ(s.captured, 120u);
  // Of the ~60 frames captured while the output was held, only what the slots hold survived.
  EXPECT_GE(s.drops_overflow, 50u);
  EXPECT_EQ(s.failed, 0u);
  expect_accounted(s);
  EXPECT_EQ(rec.outputs.size(), s.processed);
  expect_gold(c, rec.outputs);  // what survives is still the right frame's output
  // The pool: depth, mask and output buffers per slot, made once, however many frames went through.
  const dm::AllocationStats a = backend->stats();
  EXPECT_LE(a.allocations, 3u * buffers);
  EXPECT_LE(a.peak_bytes, static_cast<size_t>(buffers) * kW * kH * (2 + 1 + 4) * 2);
}

TEST(LiveRunner, BlockDropsNothingWithASlowOutput) {
  const dm::Config c = live_config(dm::Overflow::Block, 2);
  auto backend = dmtest::cpu_backend();
  FakeSource src(kW, kH, 30);
  Recorder rec;
  rec.delay = std::chrono::milliseconds(2);
  const dm::LiveSummary s = dm::run_live(c, *backend, src, {}, nullptr, &rec);
  EXPECT_EQ(s.captured, 30u);
  EXPECT_EQ(s.processed, 30u);
  EXPECT_EQ(s.drops_overflow, 0u);
  expect_gold(c, rec.outputs);
  EXPECT_LE(backend->stats().allocations, 3u * 2);
}

TEST(LiveRunner, ReconnectsAfterReadFailuresAndFramesKeepComing) {
  const dm::Config c = live_config(dm::Overflow::Block, 3);
  auto backend = dmtest::cpu_backend();
  FakeSource src(kW, kH, 20);
  src.fail_reads = {5, 12};
  src.open_failures = 1;  // the first reopen after each failure fails too: the back-off doubles
  Recorder rec;
  const dm::LiveSummary s = dm::run_live(c, *backend, src, {}, nullptr, &rec);
  EXPECT_EQ(s.source_errors, 4u);  // 2 reads + 2 reopens
  EXPECT_EQ(s.reconnects, 2u);
  EXPECT_EQ(s.captured, 20u);
  EXPECT_EQ(s.processed, 20u);
  EXPECT_TRUE(s.source_ended);
  EXPECT_EQ(src.opens.load(), 1 + 4);
  expect_gold(c, rec.outputs);
}

TEST(LiveRunner, StopFlagEndsTheRunAndFramesInFlightFinish) {
  const dm::Config c = live_config(dm::Overflow::DropOldest, 4);
  auto backend = dmtest::cpu_backend();
  FakeSource src(kW, kH);  // endless
  std::atomic<bool> stop{false};
  Recorder rec;
  rec.after_each = [&](size_t n) {
    if (n == 10) stop = true;
  };
  const dm::LiveSummary s = dm::run_live(c, *backend, src, {}, &stop, &rec);
  EXPECT_TRUE(s.interrupted);
  EXPECT_FALSE(s.source_ended);
  EXPECT_GE(s.processed, 10u);
  expect_accounted(s);
  expect_gold(c, rec.outputs);
}

TEST(LiveRunner, StopFlagIsHonouredDuringTheReconnectBackOff) {
  dm::Config c = live_config(dm::Overflow::DropOldest, 2);
  c.live.reconnect_max = 3600;  // without the flag the back-off would wait for an hour
  auto backend = dmtest::cpu_backend();
  FakeSource src(kW, kH);
  src.fail_reads = {3};
  src.open_always_fails_after_read_failure = true;
  std::atomic<bool> stop{false};
  std::thread stopper([&] {
    eventually([&] { return src.opens.load() >= 4; });
    stop = true;
  });
  const dm::LiveSummary s = dm::run_live(c, *backend, src, {}, &stop, nullptr);
  stopper.join();
  EXPECT_TRUE(s.interrupted);
  EXPECT_EQ(s.captured, 3u);
  EXPECT_EQ(s.reconnects, 0u);
  EXPECT_GE(s.source_errors, 4u);
  expect_accounted(s);
}

TEST(LiveRunner, MaxFramesLimitsCapturedFrames) {
  const dm::Config c = live_config(dm::Overflow::Block, 3);
  auto backend = dmtest::cpu_backend();
  FakeSource src(kW, kH);
  dm::LiveLimits limits;
  limits.max_frames = 25;
  Recorder rec;
  const dm::LiveSummary s = dm::run_live(c, *backend, src, limits, nullptr, &rec);
  EXPECT_EQ(s.captured, 25u);
  EXPECT_EQ(s.processed, 25u);
  EXPECT_FALSE(s.interrupted);
  EXPECT_FALSE(s.source_ended);
  expect_gold(c, rec.outputs);
}

TEST(LiveRunner, DurationLimitEndsAnEndlessSourceAndStatsAreReported) {
  dm::Config c = live_config(dm::Overflow::DropOldest, 3);
  c.live.stats_interval = 0.02;
  auto backend = dmtest::cpu_backend();
  FakeSource src(kW, kH);
  src.pace = std::chrono::microseconds(500);
  dm::LiveLimits limits;
  limits.duration = 0.2;
  Recorder rec;
  const dm::LiveSummary s = dm::run_live(c, *backend, src, limits, nullptr, &rec);
  EXPECT_FALSE(s.interrupted);
  EXPECT_FALSE(s.source_ended);
  EXPECT_GT(s.captured, 0u);
  expect_accounted(s);
  EXPECT_GE(rec.stats_calls.load(), 1u);
  EXPECT_GT(s.seconds, 0.0);
}

TEST(LiveRunner, AFailedFrameIsCountedAndTheRunGoesOn) {
  const dm::Config c = live_config(dm::Overflow::Block, 2);
  auto backend = dmtest::cpu_backend();
  FakeSource src(kW, kH, 10);
  src.bad_mask_at = 4;
  Recorder rec;
  const dm::LiveSummary s = dm::run_live(c, *backend, src, {}, nullptr, &rec);
  EXPECT_EQ(s.captured, 10u);
  EXPECT_EQ(s.failed, 1u);
  EXPECT_EQ(s.processed, 9u);
  EXPECT_EQ(rec.outputs.count(4), 0u);
  expect_gold(c, rec.outputs);
}

// Out of memory in the live runner is classified as in the batch: the frame fails (class resource)
// and its slot gives back what it grew. Frame 3 is 4x as wide and high: its depth and mask fit in
// backend.memory_limit_mb, its output does not. Kept, its slot's grown buffers would hold about
// 4x what a small frame's slot holds until the run ends.
TEST(LiveRunner, OutOfMemoryFailsTheFrameAndItsSlotGivesItsBuffersBack) {
  class OneBigFrame : public FakeSource {
   public:
    OneBigFrame() : FakeSource(kW, kH, 10) {}
    bool read(dm::CapturedFrame& f) override {
      if (!FakeSource::read(f)) return false;
      if (f.sequence == 3) {
        cv::resize(cv::Mat(f.depth), f.depth, cv::Size(4 * kW, 4 * kH), 0, 0, cv::INTER_NEAREST);
        cv::resize(cv::Mat(f.mask), f.mask, cv::Size(4 * kW, 4 * kH), 0, 0, cv::INTER_NEAREST);
      }
      return true;
    }
  } src;
  const dm::Config c = live_config(dm::Overflow::Block, 2);
  auto backend = dmtest::cpu_backend();
  const size_t small_slot = size_t{kW} * kH * (2 + 1 + 4);  // 16-bit depth, 8-bit mask, float output
  const size_t big_inputs = size_t{16} * kW * kH * (2 + 1);
  // Both small slots and the big frame's inputs fit; its output (16 x kW x kH floats) does not.
  backend->set_memory_limit(2 * small_slot + big_inputs + small_slot);
  Recorder rec;
  size_t live_at_end = 0;
  rec.after_each = [&](size_t n) {
    if (n == 9) live_at_end = backend->stats().live_bytes;
  };
  const dm::LiveSummary s = dm::run_live(c, *backend, src, {}, nullptr, &rec);
  EXPECT_EQ(s.captured, 10u);
  EXPECT_EQ(s.failed, 1u);
  EXPECT_EQ(s.failed_resource, 1u) << "out of memory is a resource failure";
  EXPECT_EQ(s.processed, 9u);
  EXPECT_EQ(rec.outputs.count(3), 0u);
  expect_gold(c, rec.outputs);
  EXPECT_LE(live_at_end, 2 * small_slot) << "the slot that ran out kept the big frame's buffers";
}

TEST(LiveRunner, OpenFailureAtTheStartIsThrown) {
  class Broken : public FakeSource {
   public:
    Broken() : FakeSource(kW, kH) {}
    void open() override { throw dm::InputError("no such camera"); }
  } src;
  auto backend = dmtest::cpu_backend();
  EXPECT_THROW(dm::run_live(live_config(dm::Overflow::Block, 2), *backend, src, {}, nullptr), dm::InputError);
}

TEST(LiveRunner, WritesEveryNthFrameWithTheBatchWriter) {
  dmtest::TempDir tmp;
  dm::Config c = live_config(dm::Overflow::Block, 3);
  c.output.dir = tmp / "out";
  c.output.formats = {dm::OutputFormat::Tiff};
  c.live.output_every = 3;
  auto backend = dmtest::cpu_backend();
  FakeSource src(kW, kH, 9);
  const dm::LiveSummary s = dm::run_live(c, *backend, src, {}, nullptr);
  EXPECT_EQ(s.written, 3u);
  EXPECT_EQ(s.processed, 9u);
  for (const char* id : {"f2", "f5", "f8"})
    EXPECT_TRUE(std::filesystem::exists(tmp / "out" / (std::string(id) + ".tiff"))) << id;
  EXPECT_FALSE(std::filesystem::exists(tmp / "out" / "f0.tiff"));
}

TEST(LiveRunner, PublishesHeaderAndPayloadOverZeroMq) {
  dmtest::TempDir tmp;
  dm::Config c = live_config(dm::Overflow::DropOldest, 3);
  const std::string endpoint = "ipc://" + (tmp / "live.sock").string();
  c.live.publish = endpoint;
  auto backend = dmtest::cpu_backend();
  FakeSource src(kW, kH);  // endless, until the subscriber has what it wants
  src.pace = std::chrono::microseconds(2000);
  std::atomic<bool> stop{false};

  struct Message {
    nlohmann::json header;
    std::vector<uint8_t> payload;
    bool more_after_payload = false;
  };
  std::vector<Message> got;
  std::string error;
  std::thread subscriber([&] {
    zmq::context_t ctx(1);
    zmq::socket_t sub(ctx, zmq::socket_type::sub);
    sub.set(zmq::sockopt::subscribe, "");
    sub.set(zmq::sockopt::rcvtimeo, 20000);
    sub.connect(endpoint);  // before the runner binds: ZeroMQ retries the connection
    while (got.size() < 3) {
      zmq::message_t h, p;
      if (!sub.recv(h) || !h.more() || !sub.recv(p)) {
        error = "no complete message within 20 s";
        break;
      }
      Message m;
      m.header = nlohmann::json::parse(h.to_string());
      m.payload.assign(static_cast<const uint8_t*>(p.data()), static_cast<const uint8_t*>(p.data()) + p.size());
      m.more_after_payload = p.more();
      got.push_back(std::move(m));
    }
    stop = true;
  });
  const dm::LiveSummary s = dm::run_live(c, *backend, src, {}, &stop, nullptr);
  subscriber.join();
  ASSERT_TRUE(error.empty()) << error;
  EXPECT_GE(s.published, 3u);
  for (const Message& m : got) {
    const auto& h = m.header;
    EXPECT_FALSE(m.more_after_payload);
    EXPECT_EQ(h.at("width"), kW);
    EXPECT_EQ(h.at("height"), kH);
    EXPECT_EQ(h.at("dtype"), "float32");
    EXPECT_EQ(h.at("units"), "m");
    EXPECT_EQ(h.at("invalid"), 0.0);
    EXPECT_EQ(h.at("backend"), "cpu");
    EXPECT_TRUE(h.at("capture_to_ready_us").is_number_unsigned());
    const uint64_t seq = h.at("sequence");
    EXPECT_EQ(h.at("id"), "f" + std::to_string(seq));
    const cv::Mat gold = dmtest::gold_frame(c, seq, kW, kH);
    ASSERT_EQ(m.payload.size(), gold.total() * sizeof(float));
    EXPECT_EQ(std::memcmp(m.payload.data(), gold.data, m.payload.size()), 0) << "frame " << seq;
  }
}

TEST(LiveRunner, PublishOnAnEndpointThatCannotBeBoundIsAnOutputError) {
  dm::Config c = live_config(dm::Overflow::DropOldest, 2);
  c.live.publish = "tcp://no-such-interface-for-depthmask:5555";
  auto backend = dmtest::cpu_backend();
  FakeSource src(kW, kH, 1);
  const std::string msg = dmtest::message_of<dm::OutputError>([&] { dm::run_live(c, *backend, src, {}, nullptr); });
  EXPECT_TRUE(dmtest::Contains(msg, "live.publish"));
  EXPECT_TRUE(dmtest::Contains(msg, "no-such-interface"));
}

}  // namespace

TEST(LiveRunner, PreviewWithAnUnreachableDisplayIsOffAndEveryFrameIsProcessed) {
  // HighGUI would end the process on a display it cannot reach: the runner must ask first.
  const char* old = std::getenv("DISPLAY");
  const std::string saved = old ? old : "";
  ::setenv("DISPLAY", "127.0.0.1:59999", 1);
  dm::Config c = live_config(dm::Overflow::Block, 3);
  c.live.preview = true;
  auto backend = dmtest::cpu_backend();
  FakeSource src(kW, kH, 12);
  Recorder rec;
  const dm::LiveSummary s = dm::run_live(c, *backend, src, {}, nullptr, &rec);
  if (old)
    ::setenv("DISPLAY", saved.c_str(), 1);
  else
    ::unsetenv("DISPLAY");
  EXPECT_EQ(s.processed, 12u);
  EXPECT_EQ(s.previewed, 0u);
  expect_gold(c, rec.outputs);
}
