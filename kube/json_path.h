// Reading fields of Kubernetes objects without trusting their shape: a
// missing key, a non-object on the way or a value of another type reads as
// absent, never as an exception.
#pragma once

#include <initializer_list>
#include <nlohmann/json.hpp>
#include <string>

namespace edl::kube {

// The value at `path` ({"status", "phase"}), or nullptr.
const nlohmann::json* FindAt(const nlohmann::json& object, std::initializer_list<const char*> path);
// The string at `path`, or "" when it is absent or not a string.
std::string StringAt(const nlohmann::json& object, std::initializer_list<const char*> path);

}  // namespace edl::kube
