// KubeletOptions: how the fake kubelet runs pods (which nodes it serves,
// the image table, where pod directories and logs go, what in-cluster
// config pods get). Plain values.
#pragma once

#include <chrono>
#include <map>
#include <string>
#include <vector>

#include "tests/fakekube/server/pod_volumes.h"

namespace edl::fakekube {

struct KubeletOptions {
  // Pods bound (spec.nodeName) to one of these are run here.
  std::vector<std::string> nodes = {"node-0"};
  std::string host_ip = "127.0.0.1";  // status.hostIP
  // Image name → a directory prepended to PATH. An image matches by its
  // full name or by its name without the tag. Unknown images: ErrImagePull.
  std::map<std::string, std::string> images;
  // Per-pod directories (volumes, working directory) go to root_dir/<uid>;
  // "" makes a temporary directory, removed when the kubelet stops.
  std::string root_dir;
  // When set, each pod's output also goes to log_dir/<ns>_<name>_<uid>.log.
  std::string log_dir;
  // How often a pod with a memory limit has its resident memory checked.
  std::chrono::milliseconds memory_poll_interval{200};
  // Restart back-off after the first restart (doubles, capped at 10 s).
  std::chrono::milliseconds restart_backoff{500};
  // In-cluster config: when api_host is set, pods get
  // KUBERNETES_SERVICE_HOST/PORT; when the pod has a token
  // (service_account.TokenFor: its own service account's, or one for all),
  // it is mounted with ca.crt and namespace at
  // /var/run/secrets/kubernetes.io/serviceaccount (unless the pod sets
  // automountServiceAccountToken false).
  std::string api_host;
  int api_port = 0;
  ServiceAccountFiles service_account;
};

}  // namespace edl::fakekube
