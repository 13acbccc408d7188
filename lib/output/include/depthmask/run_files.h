/// \file
/// The names of the files a run writes beside the frames' outputs, in output.dir. Kept apart from the
/// frames' names: the frame writer refuses an input that would be overwritten by one of them.
#pragma once

namespace depthmask {

/// The resume manifest of an unsharded run (a shard's: manifest_name, manifest.h).
inline constexpr const char* kManifestName = "depthmask-manifest.json";
/// The run record of an unsharded run (a shard's: run_record_name, run_record.h).
inline constexpr const char* kRunRecordName = "depthmask-run.json";
/// The QA report's page (report.h).
inline constexpr const char* kReportName = "depthmask-report.html";

}  // namespace depthmask
