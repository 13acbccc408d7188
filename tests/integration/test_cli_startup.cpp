// The CLI's start-up report (issue 16): `depthmask run` prints where its start-up went, and says so
// when CUDA was not initialised (backend.kind: cpu).
#include <gtest/gtest.h>

#include <regex>
#include <string>

#include "depthmask/synth.h"
#include "test_support.h"

namespace dm = depthmask;
using dmtest::q;
using dmtest::TempDir;

namespace {

dmtest::CmdResult run_one_frame(const TempDir& tmp, const std::string& backend) {
  dm::write_synthetic_dataset(tmp / "data", 1, 64, 48);
  return dmtest::run_depthmask("run --config " + q(tmp / "data" / "depthmask.yaml") + " -b " + backend + " -o " +
                               q(tmp / "out"));
}

// The first frame's figure from the summary's start-up line.
double first_frame_ms(const std::string& output) {
  std::smatch m;
  static const std::regex line(R"(start-up: first frame at ([0-9]+) ms \(CUDA initialisation ([0-9]+) ms)");
  return std::regex_search(output, m, line) ? std::stod(m[1].str()) : -1;
}

}  // namespace

TEST(CliStartup, CpuRunSaysCudaWasNotInitialised) {
  TempDir tmp;
  const auto r = run_one_frame(tmp, "cpu");
  SCOPED_TRACE(r.output);
  ASSERT_EQ(r.exit_code, 0);
  EXPECT_NE(r.output.find("CUDA initialisation 0 ms: not initialised"), std::string::npos);
  EXPECT_NE(r.output.find("backend: cpu (backend.kind is cpu (forced in the configuration; CUDA not initialised))"),
            std::string::npos);
  EXPECT_GT(first_frame_ms(r.output), 0.0);
}

TEST(CliStartup, CopyRunReportsCudaInitialisationApart) {
  DM_REQUIRE_GPU();
  TempDir tmp;
  const auto r = run_one_frame(tmp, "copy");
  SCOPED_TRACE(r.output);
  ASSERT_EQ(r.exit_code, 0);
  EXPECT_GT(first_frame_ms(r.output), 0.0);
  EXPECT_EQ(r.output.find("not initialised"), std::string::npos);
}
