// The QA report (report.h): the model read from the folder, the page made of it, written atomically.
// The parts: report_parts.h.

#include "depthmask/report.h"

#include <system_error>

#include "depthmask/atomic_file.h"
#include "depthmask/errors.h"
#include "report_parts.h"

namespace fs = std::filesystem;

namespace depthmask {

fs::path write_report(const fs::path& dir, const ReportOptions& o) {
  DM_EXPECT(o.thumbnails >= 1 && o.thumbnail_width >= 16, ConfigError,
            "report: --thumbnails must be at least 1 (got " << o.thumbnails << ")");
  std::error_code ec;
  DM_EXPECT(fs::is_directory(dir, ec), InputError, "report: '" << dir.string() << "' is not a folder");
  report_parts::ReportModel model = report_parts::read_report_model(dir);
  fs::path out = o.out.empty() ? dir / kReportName : o.out;
  // Messages and ids may hold any bytes; the page is declared UTF-8 and browsers replace what is not.
  const std::string text = report_parts::report_page(model, o);
  write_file_atomic(out, text.data(), text.size(), false);
  return out;
}

}  // namespace depthmask
