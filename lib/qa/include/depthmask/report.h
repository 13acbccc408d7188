/// \file
/// After a run: the QA report, one self-contained HTML page to look at (docs/REPORT.md): the summary and settings, a
/// contact sheet of thumbnails, the kept fraction per frame, the kept-depth histogram and the failures.
#pragma once

#include <cstddef>
#include <filesystem>
#include <optional>
#include <string>

#include "depthmask/run_files.h"

namespace depthmask {

/// Where write_report writes and how many thumbnails it makes.
struct ReportOptions {
  std::filesystem::path out;  ///< empty: `output_dir`/depthmask-report.html
  size_t thumbnails = 48;     ///< at most this many frames on the contact sheet (at least 1)
  int thumbnail_width = 160;  ///< pixels per panel (colour | mask | masked depth [| reason])
};

/// Writes the QA report of the run whose outputs are in `output_dir`, atomically, and returns its path.
/// Reads the resume manifests once (ManifestSet, manifest_set.h: the unsharded one and every shard's, a
/// frame counted once; version 2 for kept fractions and the histogram; version 1 shows them as n/a; the
/// settings the run records name count, else the first readable manifest's; a manifest of other
/// settings or one that cannot be read is left out, with a warning), the run record when present
/// (depthmask-run.json, else the shards' records, their counts summed), and the frames' files:
/// `{id}.preview.png` where the run wrote previews, else a thumbnail composed from the masked depth
/// output and, through the sidecar `{id}.json` (sidecar.h), the colour and mask inputs;
/// `{id}.reason.png` as a fourth, colour-mapped panel. A folder without a manifest (the live runner's)
/// is reported from its sidecars. Throws InputError when the folder holds neither a manifest nor
/// sidecars; ConfigError when its run records name different settings; OutputError when the page
/// cannot be written.
std::filesystem::path write_report(const std::filesystem::path& output_dir, const ReportOptions& options = {});

}  // namespace depthmask
