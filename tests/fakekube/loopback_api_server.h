// LoopbackApiServer: the fake API server as the socket tests meet it: a
// Store served by an ApiServer on 127.0.0.1 (an ephemeral port, HTTPS with
// a fresh CA unless told otherwise, behind a bearer token), and the ways a
// test reaches it: ClientOptions for the plain test client
// (api_test_client.h), a kube::Client, a kubeconfig. The tests that talk to
// the API server over sockets share it instead of each wiring one up.
//
// Thread-safe as its Store and ApiServer are.
#pragma once

#include <memory>
#include <string>

#include "base/status.h"
#include "kube/client.h"
#include "tests/fakekube/api_test_client.h"
#include "tests/fakekube/server/api_server.h"
#include "tests/fakekube/server/store.h"

namespace edl::fakekube::testing {

class LoopbackApiServer {
 public:
  // The token the server takes when `options.token` is empty.
  static constexpr char kToken[] = "t0ken-for-tests";

  explicit LoopbackApiServer(ApiServer::Options options = {}, Store::Options store_options = {});
  LoopbackApiServer(const LoopbackApiServer&) = delete;
  LoopbackApiServer& operator=(const LoopbackApiServer&) = delete;

  // Binds and starts serving (ApiServer::Start's errors).
  Status Start();

  Store& store() { return store_; }
  ApiServer& server() { return server_; }
  const std::string& token() const { return token_; }

  // What follows REQUIRES: Start() succeeded.
  // For the plain test client: this server's port, scheme and CA, and
  // "Bearer <token>".
  ClientOptions client() const;
  // One request on a fresh connection with client().
  HttpResult Send(const std::string& method, const std::string& target,
                  const std::string& body = "",
                  const std::string& content_type = "application/json") const;
  // edl's Kubernetes client for this server, or why it could not be made.
  Result<std::unique_ptr<kube::Client>> NewKubeClient() const;

 private:
  const std::string token_;
  const bool tls_;
  Store store_;
  ApiServer server_;  // after store_: stops before the store goes
};

}  // namespace edl::fakekube::testing
