// Where the Kubernetes API server is and how to authenticate to it: the
// in-cluster service-account configuration and kubeconfig files, resolved the
// way client-go and kubectl resolve them (the order: docs/kubernetes.md,
// 'Flags', --kubeconfig).
//
// Loading is pure: it reads files and the environment handed to it and
// returns a ClusterConfig value; nothing is cached. Errors name the file and
// the field that is wrong, e.g.
//   kubeconfig /x: users[0].user.client-key-data: not base64
#pragma once

#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "base/status.h"

namespace edl::kube {

// A client.authentication.k8s.io/v1 (or v1beta1) exec credential plugin
// (`users[].user.exec` in a kubeconfig).
struct ExecPlugin {
  std::string api_version, command;
  std::vector<std::string> args;
  std::vector<std::pair<std::string, std::string>> env;
  std::string install_hint;
};

struct ClusterConfig {
  std::string server;  // "https://10.0.0.1:6443" (+ optional path prefix)
  std::string ca_pem;  // CA bundle PEM (from -data or file); "" = none given
  bool insecure_skip_tls_verify = false;
  std::string tls_server_name;  // overrides SNI + verification name
  std::string token;            // static bearer token
  // Re-read at least every minute and after any 401. When set it wins over
  // `token` (which is then only the value read at load time).
  std::string token_file;
  std::string client_cert_pem, client_key_pem;
  std::optional<ExecPlugin> exec;  // exec credential plugin
  std::string namespace_name = "default";
  // "in-cluster" / "kubeconfig /a:/b context prod", for messages.
  std::string description;
};

// The inputs of the in-cluster configuration; injectable for tests, the
// defaults read the real environment and service-account paths.
struct InClusterEnv {
  std::string service_host, service_port, pod_namespace;
  std::string token_path = "/var/run/secrets/kubernetes.io/serviceaccount/token";
  std::string ca_path = "/var/run/secrets/kubernetes.io/serviceaccount/ca.crt";
  std::string namespace_path = "/var/run/secrets/kubernetes.io/serviceaccount/namespace";
  // KUBERNETES_SERVICE_HOST, KUBERNETES_SERVICE_PORT and POD_NAMESPACE from
  // this process's environment, default paths.
  static InClusterEnv FromProcess();
};

// True when both service env vars are set and the token file exists and is
// not a directory (client-go's InClusterConfig "possible" check).
bool InClusterPossible(const InClusterEnv& env);

// server = "https://" + JoinHostPort(host, port) (IPv6 hosts in brackets);
// token and token_file from the token path; CA from ca_path (a missing CA is
// only logged, as client-go does); namespace from POD_NAMESPACE, else the
// namespace file (trimmed), else "default".
// Errors: FailedPrecondition "not in cluster" when an env var is missing;
// the token file's read error naming its path.
Result<ClusterConfig> LoadInClusterConfig(const InClusterEnv& env);

// kubeconfig_list: colon-separated paths (first file that sets a value wins
// per map key; missing files in a list of several are skipped, a single
// missing file is NotFound). context "" = current-context. Relative paths
// inside a file are resolved against that file's own directory. `token`
// beats `tokenFile`, which beats `exec`.
Result<ClusterConfig> LoadKubeconfig(const std::string& kubeconfig_list,
                                     const std::string& context);

// What a CLI does: explicit --kubeconfig flag, else $KUBECONFIG, else
// in-cluster if possible (and no context was asked for), else ~/.kube/config.
// Errors name the file and the field (e.g. "kubeconfig /x:
// users[0].user.client-key-data: not base64").
Result<ClusterConfig> LoadConfig(const std::string& kubeconfig_flag, const std::string& context);

}  // namespace edl::kube
