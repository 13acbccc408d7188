// The run record: what a run was (its settings, its summary), a file of the output folder.
#pragma once

#include <optional>
#include <string>

#include "depthmask/config.h"
#include "depthmask/run_files.h"
#include "depthmask/run_summary.h"
#include "depthmask/shard_spec.h"

namespace depthmask {

// The record of the last run over an output folder, for the report (and `status`): the summary
// (counts, seconds, backend and why, this run's failures) as the C ABI's run summary JSON, the
// effective configuration as YAML (to_yaml), the depthmask version and the date (UTC, ISO 8601):
// {"format": "depthmask-run", "version": 1, "depthmask": "<version>", "date": "...",
//  "summary": {...}, "config": "<YAML>"}.
// A file of its own, not the manifest's head: the manifest is the resume record, rewritten every
// second while frames finish and cut down by the next run's plan; this is written once at the end.
std::string run_record_json(const Config& effective, const RunSummary& summary);
// The run record's file name in output.dir: kRunRecordName unsharded, else
// depthmask-run.shard-K-of-N.json beside the shard's manifest (shards never overwrite each other's).
std::string run_record_name(const std::optional<Shard>& shard);
// Writes run_record_json to <output.dir>/run_record_name(effective.run.shard) atomically. Throws
// OutputError.
void write_run_record(const Config& effective, const RunSummary& summary);

}  // namespace depthmask
