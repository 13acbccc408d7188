/// \file
/// `depthmask doctor`: checks a dataset before a long run, in seconds, and says what a run would do
/// with it and what would go wrong. Every check calls the rule the run itself uses (resolve_input and
/// its layouts, the listing, FrameSlot through process_frame for the decoded sample, the mask rule,
/// plan_registration, the unit check), so the doctor cannot disagree with `run`.
///
/// Cost: the listing, one stat per frame (its mask), the headers of at most DoctorOptions::headers
/// frames and the decoding of at most DoctorOptions::sample frames, both evenly spaced
/// (docs/DOCTOR.md has the measured time for 100,000 frames).
#pragma once

#include <cstddef>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "depthmask/config.h"

namespace depthmask {

/// How much of the dataset diagnose() reads.
struct DoctorOptions {
  size_t sample = 64;     ///< frames decoded and masked, evenly spaced (0: none)
  size_t headers = 1024;  ///< frames whose depth, mask and color headers give sizes, evenly spaced
  /// A folder no layout knows whose configured patterns list no frame: propose input.* patterns from its
  /// file names and contents (the `patterns` and `proposal` checks, docs/DOCTOR.md).
  bool propose = true;
};

/// How bad a finding is. Error: a run would fail or give nothing (exit 1). Warning: a run works but
/// probably not as meant (exit 1 only with --strict). Info and ok: for the reader.
enum class DoctorLevel { Ok, Info, Warning, Error };
std::string_view to_string(DoctorLevel level);  ///< "ok", "info", "warning", "error"

/// One finding. `id` is stable (docs/DOCTOR.md lists them): layout, frames, pairing, skipped, sizes,
/// types, three_channel, decode, units, intrinsics, mask_rule, labels, patterns, proposal.
struct DoctorCheck {
  std::string id;                       ///< stable: which check
  DoctorLevel level = DoctorLevel::Ok;  ///< how bad
  std::string title;                    ///< one line: what was found
  std::string detail;                   ///< more lines (may be empty): counts, examples, the frames concerned
  std::string hint;                     ///< what to change (may be empty), naming the key
};

/// What diagnose() found: the dataset as `run` would read it and the checks' findings.
struct DoctorReport {
  std::string root;                 ///< input.root as given
  std::string layout;               ///< the resolved layout's YAML word; empty when the input was not resolved
  std::string layout_reason;        ///< why (detected from which files, or set by input.layout)
  size_t frames = 0;                ///< listed frames
  size_t decoded = 0;               ///< frames decoded and masked (the sample)
  size_t headers_read = 0;          ///< frames whose headers were read
  std::vector<size_t> sample;       ///< the decoded frames' indices in the listing
  std::vector<DoctorCheck> checks;  ///< in report order
  /// Keys the doctor suggests (dotted name, YAML value), in order: the input (input.root,
  /// input.layout) and the fixes it found (depth.scale, mask.labels, mask.threshold).
  std::vector<std::pair<std::string, std::string>> suggested;
  double seconds = 0;  ///< how long the diagnosis took

  /// The worst level of the checks (Ok when there is none).
  DoctorLevel worst() const;
  /// 0 when no check is an error (with strict: and none is a warning), 1 otherwise.
  int exit_code(bool strict) const;
  /// The report a person reads top to bottom.
  std::string to_text() const;
  /// The report as JSON (schema in docs/DOCTOR.md): {"version": 1, "root", "layout", ...}.
  std::string to_json() const;
  /// The suggested keys as a YAML configuration file that load_config() reads.
  std::string suggested_yaml() const;
};

/// Checks the input `config` names (input.root and the rest as `run` would read them). Problems of the
/// data are checks in the report; a configuration that cannot work at all throws ConfigError as
/// `run` does (exit 2).
DoctorReport diagnose(const Config& config, const DoctorOptions& options = DoctorOptions{});

}  // namespace depthmask
