// Standard base64 (RFC 4648, with padding): Secret data and kubeconfig
// `*-data` fields.
#pragma once

#include <optional>
#include <string>
#include <string_view>

namespace edl::fakekube {

std::string Base64Encode(std::string_view bytes);
// nullopt if `text` is not valid padded base64.
std::optional<std::string> Base64Decode(std::string_view text);

}  // namespace edl::fakekube
