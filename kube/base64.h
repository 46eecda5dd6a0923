// Standard base64 (RFC 4648 §4, with '=' padding) as kubeconfig `*-data`
// fields and ExecCredential `clientCertificateData` use it.
#pragma once

#include <optional>
#include <string>
#include <string_view>

namespace edl::kube {

// Decodes `text`; ASCII whitespace (line breaks in YAML block scalars) is
// ignored, padding is optional. nullopt on any other character, on padding
// in the middle, or on a length that cannot be base64.
std::optional<std::string> Base64Decode(std::string_view text);

std::string Base64Encode(std::string_view bytes);

}  // namespace edl::kube
