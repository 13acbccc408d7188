// live.serve's text as an address and a port (live_server.h); built with or without the server.
#include <string>

#include "depthmask/errors.h"
#include "depthmask/live_server.h"

namespace depthmask {

ServeAddress parse_serve_address(const std::string& text) {
  ServeAddress a;
  std::string port = text;
  const size_t colon = text.rfind(':');
  if (colon != std::string::npos) {
    a.host = text.substr(0, colon);
    port = text.substr(colon + 1);
    if (a.host.size() >= 2 && a.host.front() == '[' && a.host.back() == ']')
      a.host = a.host.substr(1, a.host.size() - 2);
    DM_EXPECT(!a.host.empty(), ConfigError, "live.serve '" << text << "': expected ADDR:PORT, the address is empty");
  }
  DM_EXPECT(!port.empty() && port.size() <= 5 && port.find_first_not_of("0123456789") == std::string::npos &&
                std::stoi(port) <= 65535,
            ConfigError, "live.serve '" << text << "': expected PORT or ADDR:PORT with a port in 0..65535");
  a.port = static_cast<uint16_t>(std::stoi(port));
  return a;
}

}  // namespace depthmask
