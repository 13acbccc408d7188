// The run record: what a run was (its settings, its summary), a file of the output folder.
#pragma once

#include <optional>
#include <string>

#include "depthmask/config.h"
#include "depthmask/run_files.h"
#include "depthmask/run_summary.h"
#include "depthmask/shard_spec.h"

namespace depthmask {

// The record of the last run over an output folder, for the report and `status`: the state
// ("running": written when the run starts, so a killed or still running run has one too;
// "finished": written again at its end), the settings hash of the effective configuration and its
// input.root (what `depthmask status OUT` checks the folder against), the summary (counts, seconds,
// backend and why, this run's failures) as the C ABI's run summary JSON (null while running), the
// effective configuration as YAML (to_yaml), the depthmask version and the date (UTC, ISO 8601):
// {"format": "depthmask-run", "version": 2, "state": "running"|"finished", "depthmask": "<version>",
//  "date": "...", "settings": "<hash>", "input": "<input.root>", "summary": {...}|null,
//  "config": "<YAML>"}.
// Version 1 (read still) had no state, settings or input and was written at the end only.
// A file of its own, not the manifest's head: the manifest is the resume record, rewritten every
// second while frames finish and cut down by the next run's plan; this is written twice per run.
std::string run_record_json(const Config& effective, const RunSummary& summary);
// The record written when the run starts: state "running", no summary.
std::string run_record_started_json(const Config& effective);
// The run record's file name in output.dir: kRunRecordName unsharded, else
// depthmask-run.shard-K-of-N.json beside the shard's manifest (shards never overwrite each other's).
std::string run_record_name(const std::optional<Shard>& shard);
// Writes run_record_json to <output.dir>/run_record_name(effective.run.shard) atomically. Throws
// OutputError.
void write_run_record(const Config& effective, const RunSummary& summary);
// Writes run_record_started_json the same way. Throws OutputError.
void write_run_record_started(const Config& effective);

}  // namespace depthmask
