// The batch run's bag (batch_run.h; output.format mcap, bag_output.h): this run's part, and the merge
// of every run's parts once the output folder holds each frame of the listing.

#include <algorithm>
#include <string>

#include "batch_run.h"
#include "depthmask/detail/log.h"
#include "depthmask/errors.h"
#include "depthmask/manifest_set.h"

namespace fs = std::filesystem;

namespace depthmask::detail {

namespace {

// ManifestSet's rule with resume's check, less the CRC-32s: a record holds while its inputs are the
// listed frame's and its outputs are there with their recorded sizes.
class DoneReader : public ManifestSetReader {
 public:
  DoneReader(const std::vector<std::string>& fingerprints, const fs::path& dir)
      : fingerprints_(fingerprints), dir_(dir) {}
  bool on_record(size_t, size_t slot, ManifestRecord&& r) override {
    if (r.inputs != fingerprints_[slot]) return false;
    for (const OutputFile& o : r.files)
      if (!check_output(dir_, o, false, buf_).ok()) return false;
    return true;
  }

 private:
  const std::vector<std::string>& fingerprints_;
  fs::path dir_;
  std::vector<uint8_t> buf_;
};

// Whether every frame of `frames` (every shard's) is done in the manifests of `c`'s output folder,
// for `c`'s settings.
bool every_frame_done(const Config& c, const std::vector<FrameEntry>& frames) {
  ManifestSet set(c.output.dir, ManifestSetOptions{settings_hash(c), {}, false, nullptr});
  std::vector<std::string> fingerprints;
  for (const FrameEntry& f : frames) {
    set.add_key(manifest_key(f));
    fingerprints.push_back(inputs_fingerprint(f));
  }
  DoneReader reader(fingerprints, c.output.dir);
  set.read(reader);
  for (size_t i = 0; i < set.slots(); ++i)
    if (!set.done(i)) return false;
  return true;
}

}  // namespace

void BatchRun::prepare_bag() {
  const Config& c = input_.config;
  bag_lock_.emplace(c.output.dir, BagLock::Mode::Shared);
  bag_.emplace(c, shard_tag(shard_));
  if (std::find(finished_before_.begin(), finished_before_.end(), false) != finished_before_.end()) bag_->open();
}

void BatchRun::finish_bag() {
  const Config& c = input_.config;
  std::optional<ClosedPart> part;
  try {
    bag_->close();
    part = bag_->closed_part();
  } catch (const OutputError& e) {
    detail::log().error("output.format mcap: {}", e.what());
  }
  bag_.reset();
  bag_lock_.reset();
  if (s_.interrupted) return;
  try {
    if (!every_frame_done(c, all_frames_)) {
      detail::log().info(
          "output.format mcap: the bag's parts are merged once every frame is done (the last run "
          "to finish, or `depthmask status {} --finalize`)",
          c.output.dir.string());
      return;
    }
    const BagMerge m = finalize_bag(c.output.dir, part ? &*part : nullptr);
    if (!m.merged) {
      detail::log().info("output.format mcap: not merged: {}", m.why_not);
    } else if (m.depth_messages < all_frames_.size()) {
      detail::log().warn(
          "output.format mcap: the bag holds {} of the {} frame(s) the manifests record done (a "
          "part was removed?); --force redoes them",
          m.depth_messages, all_frames_.size());
    }
  } catch (const Error& e) {
    detail::log().error("output.format mcap: the bag's parts could not be merged: {}", e.what());
  }
}

}  // namespace depthmask::detail
