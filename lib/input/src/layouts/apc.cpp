// APC (Amazon Picking Challenge 2016, apc-vision-toolbox): cam.info.txt (color K, depth K and the
// depth-to-color extrinsic), frame-XXXXXX.{color,depth}.png with the depth aligned to color, raw/ with
// the depth camera's frames, segm/ ground-truth labels and masks/frame-X.<object>.mask.png probability
// maps thresholded by masks/<object>.thresh.txt.
#include <set>
#include <sstream>
#include <system_error>

#include "depthmask/detail/layout_readers.h"
#include "depthmask/detail/read_file.h"
#include "depthmask/detail/text_numbers.h"
#include "depthmask/errors.h"

namespace fs = std::filesystem;

namespace depthmask::detail {

namespace {

// APC's masks/<object>.thresh.txt: one number, the threshold as a fraction of the mask's full scale.
double read_thresh_file(const fs::path& file) {
  std::istringstream in(detail::read_file_bounded(file, detail::kMaxTextFileBytes, "threshold file"));
  std::string line;
  int lineno = 0;
  std::optional<double> value;
  while (std::getline(in, line)) {
    ++lineno;
    if (const auto hash = line.find('#'); hash != std::string::npos) line.resize(hash);
    for (const auto& [tok, x] : detail::line_numbers(line, "threshold file '" + file.string() + "'", lineno,
                                                     "; expected one threshold in [0, 1]")) {
      DM_EXPECT(!value, InputError,
                "threshold file '" << file.string() << "' line " << lineno << ": a second number '" << tok
                                   << "'; expected one threshold in [0, 1]");
      DM_EXPECT(x >= 0 && x <= 1, InputError,
                "threshold file '" << file.string() << "' line " << lineno << ": " << tok
                                   << " is outside [0, 1]; expected a fraction of the mask's full scale");
      value = x;
    }
  }
  DM_EXPECT(value, InputError,
            "threshold file '" << file.string() << "' holds no number; expected one threshold in [0, 1]");
  return *value;
}

}  // namespace

void resolve_apc(ResolvedInput& r) {
  Config& e = r.config;
  const fs::path root = e.input.root;
  const fs::path cam = root / "cam.info.txt";
  DM_EXPECT(is_file(cam), InputError,
            layout_label(r) << ": no cam.info.txt in '" << root.string()
                            << "' (APC's camera file: color K, depth K, depth-to-color extrinsic)");
  r.geometry = read_apc_cam_info(cam);
  // The aligned depth (frame-*.depth.png) is on the color camera's grid, so the color K applies; raw/
  // depth is registered onto that grid with the geometry.
  if (!e.is_set_by_user("input.intrinsics")) {
    e.input.intrinsics = r.geometry->color;
    e.input.intrinsics_file.clear();
  } else {
    warn_override(r, "input.intrinsics", describe(e.input.intrinsics), "the color K of " + cam.string());
  }
  layout_default(r, "depth.scale", e.depth.scale, 0.0001);
  layout_default(r, "depth.encoding", e.depth.encoding, DepthEncoding::Apc);
  layout_default(r, "input.depth", e.input.depth, std::string("frame-{id}.depth.png"));
  layout_default(r, "input.color", e.input.color, std::string("frame-{id}.color.png"));

  r.depth_from_depth_camera = e.input.depth.rfind("raw/", 0) == 0;
  const std::string& object = e.input.object;
  if (object.empty()) {
    layout_default(r, "input.mask", e.input.mask, std::string("segm/frame-{id}.segm.png"));
  } else {
    DM_EXPECT(object.find('/') == std::string::npos && object.find("{id}") == std::string::npos, ConfigError,
              "config key 'input.object': '" << object << "' is not an object name such as kleenex_tissue_box");
    const std::string suffix = "." + object + ".mask.png";
    layout_default(r, "input.mask", e.input.mask, "masks/frame-{id}" + suffix);
    if (!e.is_set_by_user("input.mask")) {
      bool any = false;
      std::set<std::string> objects;
      std::error_code ec;
      if (is_dir(root / "masks"))
        for (fs::directory_iterator it(root / "masks", ec), end; !ec && it != end; it.increment(ec)) {
          const std::string n = it->path().filename().string();
          any = any || (starts_with(n, "frame-") && ends_with(n, suffix));
          if (ends_with(n, ".thresh.txt")) objects.insert(n.substr(0, n.size() - 11));
        }
      if (!any) {
        std::string list;
        for (const auto& o : objects) list += (list.empty() ? "" : ", ") + o;
        throw InputError("config key 'input.object': no masks/frame-*" + suffix + " in '" + root.string() + "'" +
                         (list.empty() ? std::string() : "; objects with masks here: " + list));
      }
    }
    // The probability maps are p x 65535; upstream keeps p > thresh.
    if (!e.is_set_by_user("mask.threshold_fraction"))
      e.mask.threshold_fraction = read_thresh_file(root / "masks" / (object + ".thresh.txt"));
    else
      warn_override(r, "mask.threshold_fraction", describe(e.mask.threshold_fraction),
                    "masks/" + object + ".thresh.txt");
  }

  // Files of the dataset that this run does not read: the camera file, the other depth stream, the
  // thresholds and the other objects' probability maps.
  auto layout_file = [root, suffix = "." + object + ".mask.png", object](const fs::path& p) {
    const std::string rel = p.lexically_relative(root).generic_string();
    const std::string name = p.filename().string();
    if (rel == "cam.info.txt") return true;
    if (is_frame_file(name, "depth.png") && (rel == name || rel == "raw/" + name)) return true;
    if (starts_with(rel, "masks/"))
      return ends_with(name, ".thresh.txt") ||
             (ends_with(name, ".mask.png") && (object.empty() || !ends_with(name, suffix)));
    return false;
  };
  r.listing = list_frames(e.input, layout_file);
}

}  // namespace depthmask::detail
