// A 3x3 pinhole K matrix read from a text file turned into Intrinsics (intrinsics files, scene cameras).
#pragma once

#include <string>
#include <vector>

#include "depthmask/intrinsics.h"

namespace depthmask::detail {

// The Intrinsics of a 3x3 row-major K [fx 0 cx; 0 fy cy; 0 0 1] with positive fx and fy. Anything
// else throws InputError "<file>[ <where>]: ..." naming the count found or the pinhole form: `file`
// names the file as the message shows it, `where` the place in it (e.g. "line 3: block 'K'") or "".
Intrinsics pinhole_from_k(const std::vector<double>& v9, const std::string& file, const std::string& where);

}  // namespace depthmask::detail
