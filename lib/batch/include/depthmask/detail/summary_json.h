// A run summary as JSON: the C ABI's summary (dm_run's summary_json_out) and the run record
// (report.h) give the same object.
#pragma once

#include <nlohmann/json.hpp>

#include "depthmask/run_summary.h"

namespace depthmask::detail {

nlohmann::json summary_json(const RunSummary& s);

}  // namespace depthmask::detail
