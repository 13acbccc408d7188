// The YAML configuration: parser and validator (load_config's own path, from memory). A
// ConfigError is the expected answer to bad input; anything else escaping is a finding.
#include <cstddef>
#include <cstdint>
#include <string>

#include "depthmask/config.h"
#include "depthmask/errors.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  const std::string text(reinterpret_cast<const char*>(data), size);
  try {
    // A folder that does not exist: relative paths (input.intrinsics) resolve to nothing readable.
    const depthmask::Config c = depthmask::load_config_text(text, "fuzz.yaml", "/nonexistent/depthmask-fuzz", {},
                                                            "/nonexistent/depthmask-fuzz");
    (void)depthmask::to_yaml(c);
  } catch (const depthmask::Error&) {
  }
  return 0;
}
