// LoopbackApiServer: the options and clients that match one running server.
#include "tests/fakekube/loopback_api_server.h"

#include <utility>

#include "kube/config.h"

namespace edl::fakekube::testing {
namespace {

ApiServer::Options WithToken(ApiServer::Options options, const std::string& token) {
  options.token = token;
  return options;
}

}  // namespace

LoopbackApiServer::LoopbackApiServer(ApiServer::Options options, Store::Options store_options)
    : token_(options.token.empty() ? kToken : options.token),
      tls_(options.tls),
      store_(std::move(store_options)),
      server_(store_, WithToken(std::move(options), token_)) {}

Status LoopbackApiServer::Start() { return server_.Start(); }

ClientOptions LoopbackApiServer::client() const {
  ClientOptions options;
  options.port = server_.port();
  options.tls = tls_;
  options.ca_pem = server_.CaCertificatePem();
  options.authorization = "Bearer " + token_;
  return options;
}

HttpResult LoopbackApiServer::Send(const std::string& method, const std::string& target,
                                   const std::string& body, const std::string& content_type) const {
  return Request(client(), method, target, body, content_type);
}

Result<std::unique_ptr<kube::Client>> LoopbackApiServer::NewKubeClient() const {
  kube::ClusterConfig config;
  config.server =
      (tls_ ? "https://127.0.0.1:" : "http://127.0.0.1:") + std::to_string(server_.port());
  config.ca_pem = server_.CaCertificatePem();
  config.token = token_;
  return kube::Client::Create(config);
}

}  // namespace edl::fakekube::testing
