#include <charconv>

#include "net/rpc.h"

namespace edl::net {

Status ParseAddress(const std::string& address, const std::string& what, std::string* host,
                    int* port) {
  const std::string example = " (expected host:port, e.g. 10.0.0.5:7000)";
  size_t colon = address.rfind(':');
  if (colon == std::string::npos) {
    return InvalidArgument(what + ": \"" + address + "\" has no port" + example);
  }
  std::string h = address.substr(0, colon);
  std::string p = address.substr(colon + 1);
  if (h.size() >= 2 && h.front() == '[' && h.back() == ']') {
    h = h.substr(1, h.size() - 2);  // [::1]:7000
  } else if (h.find(':') != std::string::npos) {
    return InvalidArgument(what + ": \"" + address +
                           "\": write an IPv6 host in brackets, e.g. [::1]:7000");
  }
  if (h.empty()) {
    return InvalidArgument(what + ": \"" + address + "\" has an empty host" + example);
  }
  int value = -1;
  auto [end, ec] = std::from_chars(p.data(), p.data() + p.size(), value);
  if (p.empty() || ec != std::errc() || end != p.data() + p.size() || value < 0 || value > 65535) {
    return InvalidArgument(what + ": port \"" + p + "\" in \"" + address +
                           "\" must be an integer 0-65535");
  }
  *host = std::move(h);
  *port = value;
  return Status::Ok();
}

}  // namespace edl::net
