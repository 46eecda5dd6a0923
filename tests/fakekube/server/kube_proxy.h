// KubeProxy: the fake cluster's kube-proxy. For every Service with a
// clusterIP (the store allocates loopback addresses) it listens on
// clusterIP:port and forwards each TCP connection to podIP:targetPort of a
// ready Running pod matching the Service's selector, round robin, trying
// the next pod when a connect fails. Follows Service changes; pods are
// looked up per connection. Also answers "where would a connection to this
// Service port go" for the API server's services/proxy.
//
// Boost.Asio stays inside kube_proxy.cc. One I/O thread. Thread-safe.
#pragma once

#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "base/status.h"
#include "tests/fakekube/server/store.h"

namespace edl::fakekube {

class KubeProxy {
 public:
  explicit KubeProxy(Store& store);
  ~KubeProxy();  // Stop()s
  KubeProxy(const KubeProxy&) = delete;
  KubeProxy& operator=(const KubeProxy&) = delete;

  // Subscribes to the store, opens the listeners of existing Services and
  // starts the I/O thread.
  Status Start();
  // Closes listeners and connections, joins the thread. Idempotent.
  void Stop();

  // "podIP:targetPort" of the next ready backend of `service` (a v1 Service
  // object) for its port `port` (the port number, or the port's name; ""
  // means the first port); nullopt when there is none.
  std::optional<std::string> Endpoint(const Json& service, const std::string& port);
  std::optional<std::string> Endpoint(const Json& service, int port);

  // "clusterIP:port" of every listener now open (for tests and logs).
  std::vector<std::string> Listening() const;

 private:
  struct Impl;
  std::unique_ptr<Impl> impl_;
};

}  // namespace edl::fakekube
