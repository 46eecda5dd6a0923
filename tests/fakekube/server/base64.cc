// Base64 (see base64.h): kube/'s codec, with the API server's strictness.
#include "tests/fakekube/server/base64.h"

#include "kube/base64.h"

namespace edl::fakekube {

std::string Base64Encode(std::string_view bytes) { return kube::Base64Encode(bytes); }

std::optional<std::string> Base64Decode(std::string_view text) {
  // The API server takes only padded base64 with no whitespace; kube/'s
  // decoder is lenient (kubeconfig block scalars), so check that first.
  if (text.size() % 4 != 0) return std::nullopt;
  for (char c : text) {
    if (c == ' ' || c == '\n' || c == '\r' || c == '\t') return std::nullopt;
  }
  return kube::Base64Decode(text);
}

}  // namespace edl::fakekube
