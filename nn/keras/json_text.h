// Parsing JSON text into nlohmann::json without letting its exceptions
// escape: a syntax error becomes
//   InvalidArgument("<origin>: invalid JSON at line 3, column 5: <reason>").
// Internal to nn/keras (includes nlohmann/json.hpp).
#pragma once

#include <nlohmann/json.hpp>
#include <string>

#include "base/status.h"

namespace edl::nn::keras {

Result<nlohmann::json> ParseJsonText(const std::string& text, const std::string& origin);

// "a.b" / "a[3]" path joining that leaves out empty prefixes.
std::string JoinPath(const std::string& prefix, const std::string& key);
std::string IndexPath(const std::string& prefix, size_t index);

}  // namespace edl::nn::keras
