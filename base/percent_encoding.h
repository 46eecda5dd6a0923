// PercentEncode: text as a URL path segment or query value (RFC 3986): the
// unreserved characters (letters, digits, - . _ ~) as they are, every other
// byte as %XX. Used for Kubernetes API paths and database URLs.
#pragma once

#include <string>

namespace edl {

std::string PercentEncode(const std::string& text);

}  // namespace edl
