// `depthmask report` and `run --report` end to end (issue 17): the page is written where asked, the
// exit codes follow the taxonomy, and a re-run's report reflects the manifest. The page's content is
// tests/unit/test_report.cpp; the page in a browser, tests/integration/report_in_chromium.sh.
#include <gtest/gtest.h>

#include <filesystem>
#include <string>

#include "cli_helpers.h"

namespace {

namespace fs = std::filesystem;
using dmcli::contains;
using dmtest::TempDir;

TEST(CliReport, RunReportWritesThePageBesideTheOutputsAndReportRewritesIt) {
  TempDir tmp;
  dmcli::copy_sample(tmp / "data");
  const auto r = dmcli::run_in(tmp.path(), "run --config data/depthmask.yaml --output out --backend cpu --report");
  ASSERT_EQ(r.exit_code, 0) << r.output;
  EXPECT_TRUE(contains(r.output, "report:  ")) << r.output;
  ASSERT_TRUE(fs::exists(tmp / "out" / "depthmask-report.html"));
  EXPECT_TRUE(fs::exists(tmp / "out" / "depthmask-run.json"));

  const auto again = dmcli::run_in(tmp.path(), "report out --out qa.html --thumbnails 2");
  ASSERT_EQ(again.exit_code, 0) << again.output;
  EXPECT_TRUE(contains(again.output, "qa.html")) << again.output;
  const auto bytes = dmtest::read_bytes(tmp / "qa.html");
  const std::string page(bytes.begin(), bytes.end());
  EXPECT_TRUE(contains(page, "2 of 8 frames shown")) << page.substr(0, 3000);
}

TEST(CliReport, ExitCodesFollowTheTaxonomy) {
  TempDir tmp;
  fs::create_directories(tmp / "empty");
  const auto none = dmcli::run_in(tmp.path(), "report empty");
  EXPECT_EQ(none.exit_code, 1) << "nothing to report: an input error\n" << none.output;
  EXPECT_TRUE(contains(none.output, "nothing to report")) << none.output;
  EXPECT_EQ(dmcli::run_in(tmp.path(), "report").exit_code, 2) << "OUTPUT_DIR is required";
  EXPECT_EQ(dmcli::run_in(tmp.path(), "report empty --thumbnails 0").exit_code, 2);
  EXPECT_EQ(dmcli::run_in(tmp.path(), "report missing-folder").exit_code, 1);
}

}  // namespace
