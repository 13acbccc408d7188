// 7-Scenes as tsdf-fusion ships it: camera-intrinsics.txt (3x3 K) and frame-XXXXXX.{color,depth}.png
// (and .pose.txt) in the folder or in its rgbd-frames/; depth in millimetres, 65535 = no measurement.
#include <system_error>

#include "depthmask/detail/layout_readers.h"
#include "depthmask/detail/text_numbers.h"
#include "depthmask/errors.h"

namespace fs = std::filesystem;

namespace depthmask::detail {

void resolve_seven_scenes(ResolvedInput& r) {
  Config& e = r.config;
  const fs::path root = e.input.root;
  const auto dir = seven_scenes_frames(root);
  DM_EXPECT(dir || e.is_set_by_user("input.depth"), InputError,
            layout_label(r) << ": no frame-*.depth.png in '" << root.string() << "' or in its rgbd-frames/");
  const std::string d = dir.value_or("");
  use_intrinsics_file(r, root / "camera-intrinsics.txt", "camera-intrinsics.txt");
  layout_default(r, "depth.scale", e.depth.scale, 0.001);
  layout_default(r, "depth.invalid_values", e.depth.invalid_values, std::vector<uint32_t>{65535});
  layout_default(r, "input.depth", e.input.depth, d + "frame-{id}.depth.png");
  layout_default(r, "input.color", e.input.color, d + "frame-{id}.color.png");
  // 7-Scenes ships no masks: by default they sit beside the frames.
  layout_default(r, "input.mask", e.input.mask, d + "frame-{id}.mask.png");
  auto layout_file = [root](const fs::path& p) {
    const std::string name = p.filename().string();
    return p.lexically_relative(root).generic_string() == "camera-intrinsics.txt" || is_frame_file(name, "pose.txt");
  };
  r.listing = list_frames(e.input, layout_file);
}

}  // namespace depthmask::detail
