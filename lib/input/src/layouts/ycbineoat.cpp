// YCBInEOAT / FoundationPose: rgb/, depth/ (millimetres), masks/ and cam_K.txt (3x3 K).
#include <system_error>

#include "depthmask/detail/layout_readers.h"
#include "depthmask/detail/text_numbers.h"
#include "depthmask/errors.h"

namespace fs = std::filesystem;

namespace depthmask::detail {

void resolve_ycbineoat(ResolvedInput& r) {
  Config& e = r.config;
  const fs::path root = e.input.root;
  DM_EXPECT(is_dir(root / "depth") || e.is_set_by_user("input.depth"), InputError,
            layout_label(r) << ": no depth/ folder in '" << root.string() << "'");
  use_intrinsics_file(r, root / "cam_K.txt", "cam_K.txt");
  layout_default(r, "depth.scale", e.depth.scale, 0.001);
  layout_default(r, "input.depth", e.input.depth, std::string("depth/{id}.png"));
  layout_default(r, "input.color", e.input.color, std::string("rgb/{id}.png"));
  layout_default(r, "input.mask", e.input.mask, std::string("masks/{id}.png"));
  r.listing = list_frames(e.input, [root](const fs::path& p) { return p == (root / "cam_K.txt").lexically_normal(); });
}

}  // namespace depthmask::detail
