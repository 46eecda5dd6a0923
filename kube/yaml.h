// JSON objects written as YAML documents (edl train --yaml: manifests a
// person reads and `kubectl apply -f` takes).
#pragma once

#include <nlohmann/json.hpp>
#include <string>
#include <vector>

namespace edl::kube {

// One YAML document per object, separated by "---" lines.
std::string ToYaml(const std::vector<nlohmann::json>& objects);

}  // namespace edl::kube
