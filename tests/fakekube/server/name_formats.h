// The name and key formats of apimachinery's pkg/util/validation, with its
// exact messages: each check returns the ways `value` breaks the format
// (empty when it is valid), for a FieldValueInvalid each. Thread-safe.
#pragma once

#include <string>
#include <vector>

namespace edl::fakekube {

// A lowercase RFC 1123 label (container, volume, namespace names): at most
// 63 characters of [a-z0-9-], alphanumeric at both ends.
std::vector<std::string> Dns1123LabelErrors(const std::string& value);
// A lowercase RFC 1123 subdomain (most object names): dot-separated labels,
// at most 253 characters.
std::vector<std::string> Dns1123SubdomainErrors(const std::string& value);
// A DNS-1035 label (Service names): a label that starts with a letter.
std::vector<std::string> Dns1035LabelErrors(const std::string& value);
// A qualified name (label keys, condition types): an optional subdomain
// prefix and '/', then at most 63 characters of [-A-Za-z0-9_.],
// alphanumeric at both ends.
std::vector<std::string> QualifiedNameErrors(const std::string& value);
// A ConfigMap or Secret key: [-._a-zA-Z0-9]+, at most 253 characters, not
// "." or "..", not starting with "..".
std::vector<std::string> ConfigMapKeyErrors(const std::string& value);

}  // namespace edl::fakekube
