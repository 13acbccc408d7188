// The doctor's checks of the listing (doctor_checks.h): the layout and the frames, pairing, the files
// no frame uses, and the sizes the headers of an evenly spaced set give.
#include <filesystem>
#include <fstream>
#include <system_error>
#include <unordered_set>

#include "depthmask/detail/bag_frame.h"
#include "depthmask/detail/dataset_patterns.h"
#include "depthmask/detail/image_header.h"
#include "depthmask/detail/layout_readers.h"
#include "depthmask/errors.h"
#include "depthmask/registration.h"
#include "depthmask/ros_msgs.h"
#include "doctor_checks.h"
#include "doctor_propose.h"

namespace fs = std::filesystem;

namespace depthmask::detail {

namespace {

// A file's image size from its first bytes (detail/image_header.h), without decoding: PNG, JPEG, EXR
// and most TIFFs say it there. nullopt when the file cannot be read or its header is further in.
std::optional<cv::Size> header_size(const fs::path& file) {
  std::ifstream in(file, std::ios::binary);
  if (!in) return std::nullopt;
  std::vector<uint8_t> head(size_t{64} * 1024);
  in.read(reinterpret_cast<char*>(head.data()), static_cast<std::streamsize>(head.size()));
  const auto got = static_cast<size_t>(in.gcount());
  const auto s = detail::image_size(head.data(), got);
  if (!s || s->width > 1u << 30 || s->height > 1u << 30) return std::nullopt;
  return cv::Size(static_cast<int>(s->width), static_cast<int>(s->height));
}

// A bag image message's size: an Image's own fields; a CompressedImage's from its PNG or JPEG header
// (compressedDepth: after its 12-byte header). nullopt when it cannot be read.
std::optional<cv::Size> bag_image_size(const BagFrame& b, const BagImageMessage& m) {
  try {
    const std::vector<uint8_t> payload = b.bag->read(m.ref);
    const std::string what = describe_message(*b.bag, m);
    if (!m.compressed) {
      const ros::ImageView im = ros::decode_image_view(payload.data(), payload.size(), what);
      return cv::Size(static_cast<int>(im.width), static_cast<int>(im.height));
    }
    const ros::CompressedImage c = ros::decode_compressed_image(payload.data(), payload.size(), what);
    const size_t skip = c.format.find("compressedDepth") != std::string::npos && c.data.size() > 12 ? 12 : 0;
    const auto s = detail::image_size(c.data.data() + skip, c.data.size() - skip);
    if (!s || s->width > 1u << 30 || s->height > 1u << 30) return std::nullopt;
    return cv::Size(static_cast<int>(s->width), static_cast<int>(s->height));
  } catch (const Error&) {
    return std::nullopt;
  }
}

std::string yaml_quote(const std::string& s) {
  std::string q = "\"";
  for (char ch : s) {
    if (ch == '"' || ch == '\\') q += '\\';
    q += ch;
  }
  return q + "\"";
}

size_t masks_without_depth(const Diagnosis& d, std::string& detail) {
  const InputLayout l = d.input.layout;
  const InputConfig& ic = d.config().input;
  if (!(l == InputLayout::Pattern || l == InputLayout::Apc || l == InputLayout::SevenScenes ||
        l == InputLayout::YcbInEOAT) ||
      ic.mask.find("{id}") == std::string::npos)
    return 0;
  // The listing counts every file of the mask folder that no frame uses: none, no orphan mask (and
  // no second pass over the folder).
  if (d.input.listing.unmatched_files == 0) return 0;
  std::unordered_set<std::string> ids;
  for (const FrameEntry& f : d.input.listing.frames) ids.insert(f.id);
  size_t n = 0;
  std::string ex;
  for (const auto& [id, file] : detail::pattern_matches(ic.root, ic.mask)) {
    if (ids.count(id)) continue;
    if (++n <= 3) ex += (ex.empty() ? "" : ", ") + file.filename().string();
  }
  if (n)
    detail +=
        plural(n, "mask has", "masks have") + " no depth image (input.depth '" + ic.depth + "'), e.g. " + ex + "\n";
  return n;
}

size_t tum_beyond_tolerance(const Diagnosis& d, std::string& detail) {
  if (d.input.layout != InputLayout::Tum) return 0;
  const fs::path root = d.config().input.root;
  const auto depth = detail::read_tum_list(root / "depth.txt", d.config().input.allow_paths_outside_root);
  std::unordered_set<std::string> ids;
  for (const FrameEntry& f : d.input.listing.frames) ids.insert(f.id);
  size_t n = 0;
  std::string ex;
  for (const auto& entry : depth) {
    if (ids.count(fs::path(entry.file).stem().string())) continue;
    if (++n <= 3) ex += (ex.empty() ? "" : ", ") + cformat("%.6f", entry.t);
  }
  if (n)
    detail += plural(n, "depth image of depth.txt has", "depth images of depth.txt have") +
              " no rgb image (or mask) within input.max_time_diff " + num(d.config().input.max_time_diff) +
              " s, e.g. at " + ex + "\n";
  return n;
}

}  // namespace

// The layout and the frames (resolve_input, as `run` starts).
bool check_input(Diagnosis& d) {
  try {
    d.input = resolve_input(d.given);
  } catch (const InputError& e) {
    std::error_code ec;
    bool unknown_folder = false;  // no layout's marker files: propose patterns from the file names
    if (fs::is_directory(d.given.input.root, ec)) {
      const LayoutGuess g = d.given.input.layout == InputLayout::Auto
                                ? detect_layout(d.given.input.root)
                                : LayoutGuess{d.given.input.layout, "set by input.layout"};
      d.report.layout = std::string(to_string(g.layout));
      d.report.layout_reason = g.reason;
      d.add("layout", DoctorLevel::Info, "layout " + d.report.layout + ": " + d.report.layout_reason);
      unknown_folder = g.layout == InputLayout::Pattern;
    }
    d.add("frames", DoctorLevel::Error, "no frames: the input cannot be listed", e.what(),
          "check input.root, the input.depth / input.mask patterns or input.layout (`depthmask run --print-config` "
          "shows them)");
    if (unknown_folder && d.options.propose) propose_patterns(d.given, d.options, d.report);
    return false;
  }
  d.report.layout = std::string(to_string(d.input.layout));
  d.report.layout_reason = d.input.reason;
  d.report.frames = d.input.listing.frames.size();
  d.add("layout", DoctorLevel::Ok, "layout " + d.report.layout + ": " + d.report.layout_reason);
  std::error_code ec;
  const fs::path root = fs::weakly_canonical(fs::absolute(d.given.input.root, ec), ec);
  d.suggest("input.root", yaml_quote((ec ? d.given.input.root : root).generic_string()));
  d.suggest("input.layout", d.report.layout);
  if (d.input.depth_from_depth_camera) d.geometry = d.input.geometry;
  // A registration.mode the input cannot serve (reproject without a camera geometry) is a
  // configuration error, exit 2, as in `run`.
  check_registration(d.config().registration.mode, d.geometry);
  if (d.report.frames == 0)
    d.add("frames", DoctorLevel::Error, "no frames listed");
  else
    d.add("frames", DoctorLevel::Ok, plural(d.report.frames, "frame", "frames") + " listed");
  return d.report.frames > 0;
}

void check_topics(Diagnosis& d) {
  if (d.input.layout != InputLayout::Rosbag2) return;
  std::string detail;
  for (const InputTopic& t : d.input.topics) {
    detail += t.name + "  " + t.type + (t.encoding.empty() ? "" : " (" + t.encoding + ")") + ", " +
              plural(t.messages, "message", "messages") + (t.rate_hz > 0 ? cformat(", %.1f Hz", t.rate_hz) : "") +
              (t.role.empty() ? "" : "  <- " + t.role) + "\n";
    if (t.role == "depth" || t.role == "color" || t.role == "camera_info") d.suggest("input.topics." + t.role, t.name);
  }
  std::string masks;
  for (const InputTopic& t : d.input.topics)
    if (t.role == "mask") masks += (masks.empty() ? "" : ", ") + t.name;
  if (!masks.empty()) d.suggest("input.topics.mask", "[" + masks + "]");
  if (!detail.empty()) detail.pop_back();
  d.add("topics", DoctorLevel::Ok, plural(d.input.topics.size(), "topic", "topics") + " in the bag", detail,
        "input.topics.{depth,color,mask,camera_info} choose others");
}

// Depth without mask (every frame's mask is stat'ed), mask without depth (the mask pattern's matches
// whose id is no frame's), TUM depth images without an rgb image within input.max_time_diff.
void check_pairing(Diagnosis& d) {
  const auto& frames = d.input.listing.frames;
  std::vector<std::string> lacking;
  size_t no_mask = 0;
  for (const FrameEntry& f : frames) {
    if (!f.instances.empty()) continue;
    std::error_code ec;
    if (fs::is_regular_file(f.mask, ec)) continue;
    if (++no_mask <= 3) lacking.push_back(f.id + " (" + f.mask.string() + ")");
  }
  std::string detail;
  if (no_mask) {
    detail += plural(no_mask, "depth image has", "depth images have") + " no mask, e.g. ";
    for (size_t i = 0; i < lacking.size(); ++i) detail += (i ? ", " : "") + lacking[i];
    detail += "\n";
  }
  const size_t orphan_masks = masks_without_depth(d, detail);
  const size_t tum_unpaired = tum_beyond_tolerance(d, detail);
  const size_t paired = frames.size() - no_mask;
  if (no_mask + orphan_masks + tum_unpaired == 0) {
    d.add("pairing", DoctorLevel::Ok, "all " + plural(frames.size(), "frame is", "frames are") + " paired");
    return;
  }
  if (!detail.empty() && detail.back() == '\n') detail.pop_back();
  d.add("pairing", DoctorLevel::Warning,
        std::to_string(paired) + " of " + plural(frames.size(), "frame", "frames") + " paired; " +
            std::to_string(no_mask + orphan_masks + tum_unpaired) + " unpaired",
        detail,
        no_mask ? "frames without a mask fail in `run` (run.on_error: skip goes on past them); check input.mask" : "");
}

void check_skipped(Diagnosis& d) {
  const DatasetListing& l = d.input.listing;
  if (l.unmatched_files == 0) {
    d.add("skipped", DoctorLevel::Ok, "no file in the input folders is left out");
    return;
  }
  std::string ex;
  for (const auto& p : l.unmatched_examples) ex += (ex.empty() ? "" : ", ") + p.string();
  d.add("skipped", DoctorLevel::Info,
        plural(l.unmatched_files, "file belongs", "files belong") + " to no frame: the run skips " +
            (l.unmatched_files == 1 ? "it" : "them"),
        "e.g. " + ex);
}

// Sizes from the headers of an evenly spaced set, and whether registration reconciles depth and mask.
void check_sizes(Diagnosis& d) {
  const auto& frames = d.input.listing.frames;
  const std::vector<size_t> idx = evenly_spaced(frames.size(), d.options.headers);
  Tally depth, mask, color;
  size_t unknown = 0, unreconciled = 0, registered = 0, color_differs = 0;
  std::string unreconciled_ex, unreconciled_reason, registered_reason;
  for (size_t i : idx) {
    const FrameEntry& f = frames[i];
    const auto dsize = f.bag ? bag_image_size(*f.bag, f.bag->depth) : header_size(f.depth);
    const fs::path& mask_file = f.instances.empty() ? f.mask : f.instances.front().second;
    const auto msize = f.bag ? bag_image_size(*f.bag, f.bag->masks.front()) : header_size(mask_file);
    if (dsize) depth.add(size_text(dsize->width, dsize->height), f.id);
    if (msize) mask.add(size_text(msize->width, msize->height), f.id);
    if (!f.color.empty())
      if (const auto c =
              f.bag ? (f.bag->color ? bag_image_size(*f.bag, *f.bag->color) : std::nullopt) : header_size(f.color)) {
        color.add(size_text(c->width, c->height), f.id);
        if (msize && *c != *msize) ++color_differs;
      }
    if (!dsize || !msize) {
      ++unknown;
      continue;
    }
    const RegistrationPlan plan = plan_registration(d.config().registration.mode, d.geometry, *dsize, *msize);
    if (plan.mode == RegistrationMode::None && *dsize != *msize) {
      if (++unreconciled <= 3)
        unreconciled_ex += (unreconciled_ex.empty() ? "" : ", ") + f.id + " (depth " +
                           size_text(dsize->width, dsize->height) + ", mask " + size_text(msize->width, msize->height) +
                           ")";
      if (unreconciled_reason.empty()) unreconciled_reason = plan.reason;
    } else if (plan.mode != RegistrationMode::None) {
      ++registered;
      if (registered_reason.empty()) registered_reason = plan.reason;
    }
  }
  d.report.headers_read = idx.size();
  std::string detail = "depth: " + depth.describe() + "\nmask: " + mask.describe();
  if (!color.counts.empty()) detail += "\ncolor: " + color.describe();
  detail += "\nread from the headers of " + spacing(idx.size(), frames.size());
  if (unknown) detail += "; " + plural(unknown, "frame's", "frames'") + " depth or mask header could not be read";
  if (unreconciled) {
    d.add("sizes", DoctorLevel::Error,
          plural(unreconciled, "frame has", "frames have") + " depth and mask sizes that no registration reconciles",
          detail + "\ne.g. " + unreconciled_ex + (unreconciled_reason.empty() ? "" : ("\n" + unreconciled_reason)),
          "depth and mask must have the same size, the same aspect ratio (registration.mode: resample) or a camera "
          "geometry (registration.mode: reproject)");
    return;
  }
  const bool differ = !depth.uniform() || !mask.uniform() || !color.uniform();
  std::string title = "sizes: depth " + depth.common() + ", mask " + mask.common();
  if (!color.counts.empty()) title += ", color " + color.common();
  if (registered)
    detail += "\n" + plural(registered, "frame's", "frames'") + " depth is registered: " + registered_reason;
  if (color_differs)
    detail += "\n" + plural(color_differs, "frame's", "frames'") +
              " color differs in size from its mask (the preview, PLY colours and live.mask.color_key need the "
              "mask's size)";
  d.add("sizes", differ || color_differs ? DoctorLevel::Warning : DoctorLevel::Ok,
        differ ? title + ", but not every frame has these" : title, detail);
}

}  // namespace depthmask::detail
