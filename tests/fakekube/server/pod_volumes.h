// PodVolumes: the kubelet's volume manager for the fake cluster. Writes
// configMap, secret and projected volumes as files (one per key) into the
// pod's own directory, creates emptyDirs there, resolves hostPath as is,
// and turns the first container's volumeMounts into bind mounts for the
// child's private mount namespace (pod_process.h). Not thread-safe (one
// pod worker calls it).
#pragma once

#include <string>
#include <vector>

#include "base/status.h"
#include "tests/fakekube/server/store.h"

namespace edl::fakekube {

struct BindMount {
  std::string source;  // a host path
  std::string target;  // the container's mountPath
  bool read_only = false;
};

// Service-account material for projected serviceAccountToken volumes and
// the automounted token.
struct ServiceAccountFiles {
  std::string token;  // every pod's, when there is no signing_key
  std::string ca_crt;
  // When set, each pod gets the token of its own service account
  // (spec.serviceAccountName, else "default", in its namespace):
  // ServiceAccountToken (identity.h) under this key, as the API server
  // that holds the key authenticates it.
  std::string signing_key;

  // The token `pod` gets ("" = none).
  std::string TokenFor(const Json& pod) const;
};

// REQUIRES: pod_dir exists. FailedPrecondition with the kubelet's words
// (`configmap "x" not found`) for a missing non-optional source, so the
// caller can retry later; InvalidArgument for a mount of an undeclared
// volume or an unsupported volume type.
Result<std::vector<BindMount>> PrepareVolumes(const Store& store, const Json& pod,
                                              const Json& container, const std::string& pod_dir,
                                              const ServiceAccountFiles& service_account);

}  // namespace edl::fakekube
