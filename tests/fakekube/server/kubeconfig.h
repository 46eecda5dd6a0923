// The kubeconfig a client of the fake API server needs:
// one cluster, one user, one context with namespace default.
#pragma once

#include <string>

namespace edl::fakekube {

// YAML for `server` ("https://127.0.0.1:PORT"), trusting `ca_pem` (as
// certificate-authority-data; none if "") and sending `token` (no user
// credentials if "").
std::string KubeconfigYaml(const std::string& server, const std::string& ca_pem,
                           const std::string& token);

}  // namespace edl::fakekube
