// StateConfigMap: the master's state directory (journal, snapshot, flags,
// processes.json) kept in a ConfigMap too, for a master pod on Kubernetes
// without a volume for it (docs/kubernetes.md, 'A master pod that dies').
// The master works on a directory of its own pod; every time the journal has
// written records (before anyone is told they are durable), after a snapshot
// and after processes.json changes, Save makes the ConfigMap
// <job>-master-state hold exactly the directory's files (binaryData, one key
// per file). A new master pod Restores them into its directory first.
//
// Saves are fenced: each carries the resourceVersion the last one produced,
// so a master that lost the ConfigMap to a newer one gets Aborted and must
// stop. A ConfigMap holds at most 1 MiB: a directory larger than
// kMaxStateBytes is ResourceExhausted, naming its size (the master's
// compaction keeps the journal no larger than its snapshot, so only a job
// whose snapshot nears half of that needs --checkpoint_dir on a volume).
//
// Thread-safe.
#pragma once

#include <mutex>
#include <nlohmann/json.hpp>
#include <string>

#include "base/status.h"

namespace edl::kube {
class Client;
}

namespace edl::roles::job {

inline constexpr size_t kMaxStateBytes = 900 * 1024;  // base64 included

class StateConfigMap {
 public:
  // `owner`: the ownerReferences of the ConfigMap (the master's Job).
  StateConfigMap(kube::Client& client, std::string ns, std::string name, nlohmann::json owner);

  // Writes the ConfigMap's files into `dir` (creating the ConfigMap, empty,
  // if there is none: a new job). Returns whether it held any state.
  Result<bool> Restore(const std::string& dir);
  // Makes the ConfigMap hold exactly the files of `dir`.
  Status Save(const std::string& dir);

 private:
  kube::Client& client_;
  const std::string ns_, name_;
  const nlohmann::json owner_;
  std::mutex mu_;                 // one Save at a time
  std::string resource_version_;  // of the last write (guarded by mu_)
  nlohmann::json keys_;           // binaryData key -> the base64 it holds (guarded by mu_)
};

}  // namespace edl::roles::job
