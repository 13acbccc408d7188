// Start-up (issue 16): backend.kind: cpu never initialises CUDA; other kinds start it on a thread of
// their own while the run lists its input; the summary says where the start-up went. The CUDA driver's
// own view of a cpu run is tests/gpu/test_startup_gpu.cpp.
#include <gtest/gtest.h>

#include <stdexcept>
#include <string>

#include "depthmask/errors.h"
#include "depthmask/kernels/mask_kernel.h"
#include "depthmask/open_backend.h"
#include "depthmask/platform.h"
#include "startup_support.h"
#include "test_support.h"

namespace dm = depthmask;
using dmtest::TempDir;

namespace {

dm::Config config_with(const std::string& kind) {
  return dm::load_config(std::nullopt, {{"backend.kind", kind, "test"}});
}

}  // namespace

// ctest runs each case in a process of its own, so no other case has probed before this one.
TEST(Startup, CpuRunsNeverInitialiseCuda) {
  if (dm::detail::cuda_initialised())
    GTEST_SKIP() << "CUDA was initialised before this case: run it in a process of its own (ctest does)";
  TempDir tmp;
  const dm::RunSummary s = dmtest::run_everything_on_cpu(tmp.path());
  EXPECT_FALSE(dm::detail::cuda_initialised()) << "a cpu run called the platform probe or started a GPU backend";
  EXPECT_EQ(s.ok, 2u);
  EXPECT_EQ(s.backend, dm::BackendKind::Cpu);
  EXPECT_NE(s.backend_reason.find("CUDA not initialised"), std::string::npos) << s.backend_reason;
  EXPECT_EQ(s.startup.cuda_init_ms, 0.0);
  EXPECT_GT(s.startup.first_frame_ms, 0.0);
  EXPECT_GT(s.startup.run_first_frame_ms, 0.0);
  EXPECT_GE(s.startup.first_frame_ms, s.startup.run_first_frame_ms)
      << "the process started before the run (one clock tick of slack is in the process figure's favour)";
  EXPECT_GE(s.startup.listing_ms, 0.0);
  EXPECT_GE(s.startup.backend_open_ms, 0.0);
}

TEST(Startup, UnprobedPlatformSaysSo) {
  const dm::PlatformInfo p = dm::unprobed_platform();
  EXPECT_FALSE(p.probed);
  EXPECT_EQ(p.cuda_built, dm::have_cuda_kernels());
  EXPECT_TRUE(p.devices.empty());
  EXPECT_FALSE(p.problem.empty());
  const dm::BackendChoice cpu = dm::choose_backend(config_with("cpu").backend, p);
  EXPECT_EQ(cpu.kind, dm::BackendKind::Cpu);
  EXPECT_EQ(cpu.reason, "backend.kind is cpu (forced in the configuration; CUDA not initialised)");
  // A probed platform keeps today's words.
  dm::PlatformInfo probed = p;
  probed.probed = true;
  EXPECT_EQ(dm::choose_backend(config_with("cpu").backend, probed).reason,
            "backend.kind is cpu (forced in the configuration)");
}

// auto probes on the opener's thread (CUDA builds initialise CUDA there, and time it); the choice is
// open_backend()'s.
TEST(Startup, OpenerProbesForAutoAndChoosesAsOpenBackend) {
  const dm::Config c = config_with("auto");
  dm::BackendOpener opener(c);
  const dm::OpenedBackend opened = opener.open();
  const dm::OpenedBackend direct = dm::open_backend(c);
  EXPECT_EQ(opened.backend->kind(), direct.backend->kind());
  EXPECT_EQ(opened.choice.reason, direct.choice.reason);
  EXPECT_TRUE(dm::detail::cuda_initialised());
  if (dm::have_cuda_kernels())
    EXPECT_GT(opener.cuda_init_ms(), 0.0);
  else
    EXPECT_GE(opener.cuda_init_ms(), 0.0);
  EXPECT_GE(opener.open_ms(), 0.0);
  EXPECT_THROW((void)opener.open(), std::logic_error);
}

// An explicit GPU backend the platform cannot provide fails in open(), on the caller's thread, with
// open_backend()'s message; without a GPU that is every machine of the unit suite's CI.
TEST(Startup, OpenerRethrowsWhatOpenBackendThrows) {
  const dm::Config c =
      dm::load_config(std::nullopt, {{"backend.kind", "copy", "test"}, {"backend.device", "99", "test"}});
  std::string direct, deferred;
  try {
    (void)dm::open_backend(c);
  } catch (const dm::PlatformError& e) {
    direct = e.what();
  }
  dm::BackendOpener opener(c);
  try {
    (void)opener.open();
  } catch (const dm::PlatformError& e) {
    deferred = e.what();
  }
  EXPECT_FALSE(direct.empty());
  EXPECT_EQ(deferred, direct);
}

// An opener that is never opened (the run failed while listing) waits for its probe and goes quietly.
TEST(Startup, OpenerNeverOpenedIsDestroyedCleanly) {
  const dm::Config c = config_with("auto");
  { const dm::BackendOpener opener(c); }
  SUCCEED();
}

// The run with an opener refuses an input it cannot list before it opens the backend, and the
// backend that cannot start before the output folder is touched.
TEST(Startup, RunWithOpenerFailsEarly) {
  TempDir tmp;
  std::vector<dm::Override> ov{{"input.root", (tmp / "missing").string(), "test", true},
                               {"output.dir", (tmp / "out").string(), "test", true}};
  const dm::Config missing = dm::load_config(std::nullopt, ov);
  {
    dm::BackendOpener opener(missing);
    EXPECT_THROW((void)dm::run_batch(missing, opener), dm::InputError);
  }
  dm::write_synthetic_dataset(tmp / "data", 1, 16, 12);
  ov[0].value = (tmp / "data").string();
  ov.push_back({"backend.kind", "copy", "test"});
  ov.push_back({"backend.device", "99", "test"});
  const dm::Config no_device = dm::load_config(std::nullopt, ov);
  dm::BackendOpener opener(no_device);
  EXPECT_THROW((void)dm::run_batch(no_device, opener), dm::PlatformError);
  EXPECT_FALSE(std::filesystem::exists(tmp / "out"));
}
