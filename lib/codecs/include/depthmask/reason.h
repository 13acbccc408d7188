// The `reason` output's codes (depthmask/kernels/drop_reason.h) for people: a name and a colour each,
// shared by the preview, the QA report and the docs' table (docs/OUTPUTS.md).
#pragma once

#include <array>
#include <cstdint>

#include "depthmask/kernels/drop_reason.h"

namespace depthmask {

struct ReasonStyle {
  const char* name;  // short, lower case: "mask rule"
  uint8_t b, g, r;   // the colour of the code in previews and the report (BGR, as OpenCV draws)
};

// Indexed by DropReason. Kept is the one dark code, so kept pixels read as holes in a reason image and
// every drop cause stands out.
inline constexpr std::array<ReasonStyle, kDropReasonCount> kReasonStyles{{
    {"kept", 40, 40, 40},
    {"mask rule", 200, 200, 200},
    {"live mask", 220, 120, 40},
    {"erosion", 40, 200, 240},
    {"not covered", 200, 60, 200},
    {"no depth", 60, 60, 220},
    {"below min", 240, 200, 60},
    {"above max", 60, 140, 255},
    {"depth band", 120, 220, 120},
}};

}  // namespace depthmask
