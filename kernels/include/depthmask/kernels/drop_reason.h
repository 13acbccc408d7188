// Why a pixel is not in the masked depth: the codes of the optional `reason` output
// ({id}.reason.png, 8-bit). A pixel gets the first code that applies, in this order — the mask
// first, so a walk over kept pixels only (zero_copy) still knows every code from the mask plane.
// Plain C++ (no CUDA headers): the per-pixel rule that assigns them lives in mask_rule.h.
#pragma once

#include <cstdint>

namespace depthmask {

enum DropReason : uint8_t {
  kKept = 0,            // in the masked depth
  kDropMaskRule = 1,    // the mask rule (labels, threshold, invert included) rejects it
  kDropLiveMask = 2,    // live.mask.static or live.mask.color_key rejects it
  kDropErosion = 3,     // passes the mask test itself, but mask.erode's window does not
  kDropNotCovered = 4,  // registration left it without a source depth pixel
  kDropNoDepth = 5,     // no depth measurement (0, an invalid marker, NaN/inf, <= 0)
  kDropBelowMin = 6,    // depth below depth.min
  kDropAboveMax = 7,    // depth above depth.max
  kDropDepthBand = 8,   // inside depth.min..depth.max, outside live.mask.depth_band
};
inline constexpr int kDropReasonCount = 9;

}  // namespace depthmask
