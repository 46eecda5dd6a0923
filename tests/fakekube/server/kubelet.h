// Kubelet: the fake cluster's kubelet for one or more fake nodes. Every pod
// bound to one of its nodes gets a fresh loopback pod IP (127.N.x.y from a
// LoopbackBlock of its own; all of
// 127/8 is on `lo`) and a PodWorker (pod_worker.h) that runs container[0]'s
// command as a local process and reports its life through the Store exactly
// as a real kubelet does: ContainerCreating, Running, terminated with an
// exit code, OOMKilled, graceful deletion (SIGTERM, SIGKILL at the
// deadline, terminal phase, then the final removal: DELETED), eviction.
//
// Woken by pod, ConfigMap and Secret events; one sync thread (a
// ControllerLoop) plus one thread per pod. Thread-safe.
#pragma once

#include <cstdint>
#include <map>
#include <memory>
#include <mutex>
#include <string>

#include "base/status.h"
#include "tests/fakekube/server/controller_loop.h"
#include "tests/fakekube/server/kubelet_options.h"
#include "tests/fakekube/server/loopback_block.h"
#include "tests/fakekube/server/store.h"

namespace edl::fakekube {

class PodWorker;

class Kubelet {
 public:
  using Options = KubeletOptions;
  Kubelet(Store& store, Options options);
  ~Kubelet();  // Stop()s
  Kubelet(const Kubelet&) = delete;
  Kubelet& operator=(const Kubelet&) = delete;

  // Subscribes to the store and starts the sync thread. Internal if the
  // temporary root directory cannot be made.
  Status Start();
  // SIGKILLs every pod process and joins all threads; pods stay in the store
  // as they are. Idempotent.
  void Stop();

  // Node-pressure eviction of a running pod: SIGKILL, one
  // MODIFIED with phase Failed, status.reason Evicted, status.message
  // `message`, DisruptionTarget/TerminationByKubelet; the pod is not
  // deleted. NotFound if the pod does not exist, FailedPrecondition if this
  // kubelet does not run it (not bound here, or already finished).
  Status Evict(const std::string& ns, const std::string& name, const std::string& message);

  // One sync pass on the caller's thread (the sync thread does the same).
  void SyncOnce();

 private:
  std::string AllocatePodIp();

  Store& store_;
  Options options_;
  bool own_root_ = false;  // root_dir is a temporary directory we made

  std::mutex sync_mu_;  // guards workers_, next_ip_; serializes syncs
  std::map<std::string, std::unique_ptr<PodWorker>> workers_;  // by pod uid
  uint32_t next_ip_ = 1;
  LoopbackBlock pod_ips_;  // this kubelet's pod IPs: <prefix>x.y

  ControllerLoop loop_;  // last: its thread stops before the rest goes
};

}  // namespace edl::fakekube
