// `depthmask status OUT` from the folder alone (status.h, recorded_input): the run records' settings
// and configuration.

#include <system_error>

#include "depthmask/config.h"
#include "depthmask/detail/run_record_file.h"
#include "depthmask/errors.h"
#include "depthmask/status.h"

namespace fs = std::filesystem;

namespace depthmask {

std::optional<RecordedInput> recorded_input(const fs::path& dir, const std::optional<fs::path>& input_root) {
  const detail::RunRecords records = detail::read_run_records(dir);
  if (!records.settings) return std::nullopt;
  const detail::RunRecord* used = nullptr;
  RecordedInput r;
  r.settings = *records.settings;
  for (const detail::RunRecord& rec : records.records) {
    if (!rec.settings) continue;
    r.records.push_back(rec.path.filename().string() +
                        (rec.finished ? "" : " (written at its start only: still running, or killed)"));
    if (!used && rec.config) used = &rec;
  }
  if (!used) return std::nullopt;
  // The record spells out every key; read back only those that differ from the defaults, as a file of
  // the user's would say them, so listing warns about none of them.
  const std::string name = used->path.string();
  std::error_code ec;
  DM_EXPECT(!input_root || fs::is_directory(*input_root, ec), InputError,
            "input.root '" << input_root->string() << "' (--input) is not a folder");
  std::string yaml = *used->config;
  if (input_root && used->input && !used->input->empty()) {
    // A moved dataset: the recorded configuration's paths under the recorded root (its intrinsics
    // file, a static mask) move with it.
    const std::string then = fs::path(*used->input).lexically_normal().string() + "/";
    const std::string now = fs::absolute(*input_root).lexically_normal().string() + "/";
    for (size_t at = yaml.find(then); at != std::string::npos; at = yaml.find(then, at + now.size()))
      yaml.replace(at, then.size(), now);
  }
  const Config full = load_config_text(yaml, name, dir, {});
  std::vector<Override> ov;
  if (input_root) ov.push_back({"input.root", input_root->string(), "--input", true});
  const Config c = load_config_text(to_yaml_changed(full), name, dir, ov);
  r.recorded_root = used->input ? fs::path(*used->input) : full.input.root;
  r.input = resolve_input(c);
  return r;
}

}  // namespace depthmask
