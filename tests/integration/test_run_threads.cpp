// run.threads: the batch pipeline's worker threads. Fewer than the machine has leave cores to other
// work; more oversubscribe them. Either way the outputs are the default run's, byte for byte.
#include <gtest/gtest.h>

#include <tbb/task_arena.h>

#include <algorithm>
#include <atomic>
#include <string>
#include <thread>

#include "depthmask/backend.h"
#include "depthmask/config.h"
#include "depthmask/errors.h"
#include "depthmask/pipeline.h"
#include "depthmask/platform.h"
#include "depthmask/synth.h"
#include "test_support.h"

namespace dm = depthmask;
namespace fs = std::filesystem;

namespace {

// The arena's concurrency as the commit stage sees it, at most.
struct ArenaWidth : dm::RunObserver {
  std::atomic<int> widest{0};
  void on_frame(const dm::FrameEntry&, size_t, size_t, const dm::FrameFailure*) override {
    const int n = tbb::this_task_arena::max_concurrency();
    int w = widest.load();
    while (n > w && !widest.compare_exchange_weak(w, n)) {
    }
  }
};

dm::RunSummary run(const fs::path& data, const fs::path& out, int threads, dm::RunObserver* observer) {
  std::vector<dm::Override> ov = {dm::parse_override("backend.kind=cpu"), dm::parse_override("output.preview=false"),
                                  dm::parse_override("run.threads=" + std::to_string(threads))};
  ov.push_back({"output.dir", out.string(), "test", true});
  const dm::Config c = dm::load_config(data / "depthmask.yaml", ov);
  auto backend = dm::make_backend(dm::BackendChoice{dm::BackendKind::Cpu, 0, "test", false}, dm::PlatformInfo{});
  return dm::run_batch(c, *backend, dm::BackendChoice{dm::BackendKind::Cpu, 0, "test", false}, observer);
}

}  // namespace

TEST(RunThreads, FewerAndMoreThreadsThanCoresGiveTheDefaultRunsOutputs) {
  dmtest::TempDir tmp;
  dm::write_synthetic_dataset(tmp / "data", 12, 96, 64);
  ArenaWidth default_width;
  const dm::RunSummary base = run(tmp / "data", tmp / "default", 0, &default_width);
  ASSERT_EQ(base.ok, 12u);
  const auto hw = static_cast<int>(std::max(1u, std::thread::hardware_concurrency()));
  // More threads than cores, within run.threads' range (at most 256): a machine of 128 cores or more
  // would otherwise ask for 257 and get the configuration error of the test below.
  for (int threads : {1, 3, std::min(2 * hw + 1, 256)}) {
    SCOPED_TRACE("run.threads " + std::to_string(threads));
    ArenaWidth width;
    const fs::path out = tmp / ("t" + std::to_string(threads));
    const dm::RunSummary s = run(tmp / "data", out, threads, &width);
    EXPECT_EQ(s.ok, 12u);
    EXPECT_EQ(s.failed, 0u);
    EXPECT_EQ(width.widest.load(), threads) << "the pipeline ran in an arena of run.threads slots";
    for (const auto& e : fs::directory_iterator(tmp / "default")) {
      // The manifest and the run record (its date and times) are bookkeeping, not outputs.
      if (e.path().filename().string().rfind("depthmask-", 0) == 0) continue;
      EXPECT_EQ(dmtest::read_bytes(out / e.path().filename()), dmtest::read_bytes(e.path())) << e.path().filename();
    }
  }
  EXPECT_EQ(default_width.widest.load(), tbb::this_task_arena::max_concurrency());
}

TEST(RunThreads, OutOfRangeIsAConfigErrorNamingTheKey) {
  for (const char* bad : {"run.threads=-1", "run.threads=257", "run.threads=two"}) {
    SCOPED_TRACE(bad);
    try {
      (void)dm::load_config(std::nullopt, {dm::parse_override(bad)});
      FAIL() << "accepted";
    } catch (const dm::ConfigError& e) {
      EXPECT_NE(std::string(e.what()).find("run.threads"), std::string::npos) << e.what();
    }
  }
}
