// Kubeconfig rendering (see kubeconfig.h).
#include "tests/fakekube/server/kubeconfig.h"

#include "tests/fakekube/server/base64.h"

namespace edl::fakekube {

std::string KubeconfigYaml(const std::string& server, const std::string& ca_pem,
                           const std::string& token) {
  std::string cluster = "    server: " + server + "\n";
  if (!ca_pem.empty()) cluster += "    certificate-authority-data: " + Base64Encode(ca_pem) + "\n";
  std::string user = token.empty() ? "  user: {}\n" : "  user:\n    token: " + token + "\n";
  return "apiVersion: v1\n"
         "kind: Config\n"
         "clusters:\n"
         "- name: fake\n"
         "  cluster:\n" +
         cluster +
         "users:\n"
         "- name: fake\n" +
         user +
         "contexts:\n"
         "- name: fake\n"
         "  context:\n"
         "    cluster: fake\n"
         "    user: fake\n"
         "    namespace: default\n"
         "current-context: fake\n";
}

}  // namespace edl::fakekube
