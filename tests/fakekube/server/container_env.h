// ContainerEnv: the environment and command line a container starts with,
// as the kubelet builds them: image PATH, then envFrom, then env in order
// (each value expanded with the variables defined before it), with
// valueFrom.fieldRef (downward API), secretKeyRef and configMapKeyRef read
// through the Store; command+args expanded with Kubernetes' $(VAR) rule.
// Pure functions apart from Store reads.
#pragma once

#include <map>
#include <string>
#include <utility>
#include <vector>

#include "base/status.h"
#include "tests/fakekube/server/store.h"

namespace edl::fakekube {

using EnvList = std::vector<std::pair<std::string, std::string>>;  // in order, names unique

// Kubernetes' expansion (third_party/forked/golang/expansion): "$(NAME)"
// becomes the value of NAME if defined and stays as is otherwise; "$$"
// becomes "$"; any other "$" is kept.
std::string ExpandVars(const std::string& text, const EnvList& env);

// What the kubelet knows about the pod's placement for the downward API.
struct PodPlacement {
  std::string pod_ip;
  std::string host_ip;
};

// The container's environment. `base` comes first (PATH from the image
// table, HOSTNAME, KUBERNETES_SERVICE_*). FailedPrecondition with the
// kubelet's message (`configmap "x" not found`, `couldn't find key k in
// Secret ns/x`, ...) for a missing non-optional reference; InvalidArgument
// for an unsupported fieldRef.
Result<EnvList> ContainerEnv(const Store& store, const Json& pod, const Json& container,
                             const PodPlacement& placement, const EnvList& base);

// command + args with $(VAR) expanded from `env`.
std::vector<std::string> ContainerArgv(const Json& container, const EnvList& env);

// A ConfigMap's or Secret's data as key → bytes (secret data base64-decoded,
// binaryData too). NotFound `configmap "x" not found` when absent.
// `kind` is "configmaps" or "secrets".
Result<std::map<std::string, std::string>> ReadKeyedData(const Store& store,
                                                         const std::string& kind,
                                                         const std::string& ns,
                                                         const std::string& name);

// Secret data: padded standard base64. InvalidArgument otherwise.
Result<std::string> DecodeSecretData(const std::string& text);

}  // namespace edl::fakekube
