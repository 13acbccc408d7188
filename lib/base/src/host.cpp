#include "depthmask/detail/host.h"

#include <unistd.h>

namespace depthmask {

std::string host_name() {
  char buf[256] = {};
  if (::gethostname(buf, sizeof buf - 1) != 0 || buf[0] == '\0') return "localhost";
  std::string h(buf);
  if (h.size() > 64) h.resize(64);
  for (char& ch : h) {
    const bool ok = (ch >= 'a' && ch <= 'z') || (ch >= 'A' && ch <= 'Z') || (ch >= '0' && ch <= '9') || ch == '.' ||
                    ch == '-' || ch == '_';
    if (!ok) ch = '_';
  }
  return h;
}

}  // namespace depthmask
