// The MCAP reader (depthmask/mcap.h): the input is a file; the reader opens it (summary or a pass over
// the data section), scans every message and reads each one again by its location.
#include <unistd.h>

#include <cstddef>
#include <cstdint>
#include <cstdio>
#include <string>
#include <vector>

#include "depthmask/errors.h"
#include "depthmask/mcap.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  // The reader takes a path: one file per process, rewritten for each input.
  static const std::string file = "/tmp/fuzz_mcap-" + std::to_string(::getpid()) + ".mcap";
  std::FILE* out = std::fopen(file.c_str(), "wb");
  if (!out) return 0;
  const bool written = std::fwrite(data, 1, size, out) == size;
  std::fclose(out);
  if (!written) return 0;
  try {
    depthmask::mcap::Reader reader(file);
    std::vector<depthmask::mcap::MessageLocation> where;
    try {
      reader.scan([&](const depthmask::mcap::MessageInfo& m, const uint8_t*, size_t) {
        where.push_back(m.location);
        return where.size() < 4096;
      });
    } catch (const depthmask::Error&) {
      // the messages before the damage were delivered: read them again below
    }
    for (const auto& w : where) (void)reader.read(w);
  } catch (const depthmask::Error&) {
  }
  return 0;
}
