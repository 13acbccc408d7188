// This machine's name, as the library writes it into file names (temporary files, locks).
#pragma once

#include <string>

namespace depthmask {

// This machine's name as temporary files and lock files carry it: gethostname(), with any byte
// other than letters, digits, '.', '-' and '_' replaced by '_' (so never '@' or '/'), at most 64
// bytes; "localhost" when it cannot be read.
std::string host_name();

}  // namespace depthmask
