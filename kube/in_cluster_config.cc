// The in-cluster configuration (client-go rest.InClusterConfig) and
// LoadConfig, which picks between it and kubeconfig files the way a CLI does.
#include <sys/stat.h>

#include <cstdlib>

#include "base/file.h"
#include "base/logging.h"
#include "kube/config.h"

namespace edl::kube {
namespace {

std::string Getenv(const char* name) {
  const char* v = std::getenv(name);
  return v == nullptr ? "" : v;
}

std::string Trim(const std::string& s) {
  size_t b = s.find_first_not_of(" \t\r\n");
  if (b == std::string::npos) return "";
  size_t e = s.find_last_not_of(" \t\r\n");
  return s.substr(b, e - b + 1);
}

std::string JoinHostPort(const std::string& host, const std::string& port) {
  if (host.find(':') != std::string::npos) return "[" + host + "]:" + port;
  return host + ":" + port;
}

bool IsRegularFile(const std::string& path) {
  struct stat st;
  return ::stat(path.c_str(), &st) == 0 && !S_ISDIR(st.st_mode);
}

}  // namespace

InClusterEnv InClusterEnv::FromProcess() {
  InClusterEnv env;
  env.service_host = Getenv("KUBERNETES_SERVICE_HOST");
  env.service_port = Getenv("KUBERNETES_SERVICE_PORT");
  env.pod_namespace = Getenv("POD_NAMESPACE");
  return env;
}

bool InClusterPossible(const InClusterEnv& env) {
  return !env.service_host.empty() && !env.service_port.empty() && IsRegularFile(env.token_path);
}

Result<ClusterConfig> LoadInClusterConfig(const InClusterEnv& env) {
  if (env.service_host.empty() || env.service_port.empty()) {
    return FailedPrecondition(
        "kube: not in cluster: KUBERNETES_SERVICE_HOST and "
        "KUBERNETES_SERVICE_PORT must both be set (use --kubeconfig outside "
        "a cluster)");
  }
  ClusterConfig config;
  config.description = "in-cluster";
  config.server = "https://" + JoinHostPort(env.service_host, env.service_port);
  Result<std::string> token = ReadFile(env.token_path);
  if (!token.ok()) {
    return token.status().WithPrefix("kube: in-cluster service account token");
  }
  config.token = Trim(*token);
  config.token_file = env.token_path;
  Result<std::string> ca = ReadFile(env.ca_path);
  if (ca.ok()) {
    config.ca_pem = std::move(*ca);
  } else {
    EDL_LOG(WARNING) << "kube: in-cluster CA " << env.ca_path << " cannot be read ("
                     << ca.status().message() << "); verifying the API server against system roots";
  }
  if (!env.pod_namespace.empty()) {
    config.namespace_name = env.pod_namespace;
  } else if (Result<std::string> ns = ReadFile(env.namespace_path); ns.ok() && !Trim(*ns).empty()) {
    config.namespace_name = Trim(*ns);
  }
  return config;
}

Result<ClusterConfig> LoadConfig(const std::string& kubeconfig_flag, const std::string& context) {
  if (!kubeconfig_flag.empty()) return LoadKubeconfig(kubeconfig_flag, context);
  std::string env_list = Getenv("KUBECONFIG");
  if (!env_list.empty()) return LoadKubeconfig(env_list, context);
  InClusterEnv in_cluster = InClusterEnv::FromProcess();
  if (context.empty() && InClusterPossible(in_cluster)) {
    return LoadInClusterConfig(in_cluster);
  }
  std::string home = Getenv("HOME");
  std::string path = (home.empty() ? std::string(".") : home) + "/.kube/config";
  if (!IsRegularFile(path)) {
    return NotFound(
        "kube: no Kubernetes configuration: not running in a cluster, "
        "$KUBECONFIG is unset and " +
        path + " does not exist (pass --kubeconfig)");
  }
  return LoadKubeconfig(path, context);
}

}  // namespace edl::kube
