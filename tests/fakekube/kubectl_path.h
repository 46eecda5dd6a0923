// Where the tests find kubectl: the Google Cloud SDK's kubectl 1.32 where
// present (the version the fake API server is checked against), else the
// first kubectl on PATH (Debian's kubernetes-client); "" when there is none.
#pragma once

#include <unistd.h>

#include <cstdlib>
#include <sstream>
#include <string>

namespace edl::testing {

inline std::string KubectlPath() {
  const std::string pinned = "/usr/lib/google-cloud-sdk/bin/kubectl.1.32";
  if (::access(pinned.c_str(), X_OK) == 0) return pinned;
  const char* path = std::getenv("PATH");
  std::stringstream dirs(path ? path : "");
  std::string dir;
  while (std::getline(dirs, dir, ':')) {
    const std::string candidate = dir + "/kubectl";
    if (!dir.empty() && ::access(candidate.c_str(), X_OK) == 0) return candidate;
  }
  return "";
}

// What tests say when there is none.
inline constexpr char kNoKubectl[] =
    "kubectl is not installed (neither the Google Cloud SDK's "
    "/usr/lib/google-cloud-sdk/bin/kubectl.1.32 nor a kubectl on PATH; "
    "Debian package kubernetes-client, installed by scripts/install-deps.sh)";

}  // namespace edl::testing
