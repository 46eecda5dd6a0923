// The fake API server's service proxy over HTTPS: 503 without a target,
// GETs and POSTs relayed to the target it is given (by port number or
// name), the client's Authorization kept back.
#include <gtest/gtest.h>

#include <optional>

#include "net/rpc.h"
#include "tests/fakekube/api_server_fixture.h"
#include "tests/fakekube/server/api_server.h"

namespace edl::fakekube {
namespace {

using testing::ApiServerTest;

TEST_F(ApiServerTest, ProxiesGetsAndPostsToTheTargetItIsGivenAnd503Otherwise) {
  ASSERT_EQ(
      Send("POST", "/api/v1/namespaces/default/services",
           R"({"metadata":{"name":"job1-master"},"spec":{"ports":[{"name":"http","port":8080}]}})")
          .status,
      201);
  const std::string path = "/api/v1/namespaces/default/services/job1-master:8080/proxy/status";
  auto none = Send("GET", path);
  EXPECT_EQ(none.status, 503);
  EXPECT_EQ(none.json()["reason"], "ServiceUnavailable");

  net::ServerOptions upstream_options;
  upstream_options.secret = "unused";
  net::RpcServer upstream(upstream_options);
  upstream.HandleGet(
      "/status",
      [] {
        return net::HttpResponse{200, "application/json", "{\"ok\":1}"};
      },
      /*public_access=*/true);
  ASSERT_TRUE(upstream.Start().ok());
  int seen_port = 0;
  server().SetProxyTarget([&](const Json& service, int port) -> std::optional<std::string> {
    seen_port = port;
    if (service["metadata"]["name"] != "job1-master") return std::nullopt;
    return "127.0.0.1:" + std::to_string(upstream.port());
  });
  auto proxied = Send("GET", path);
  EXPECT_EQ(proxied.status, 200);
  EXPECT_EQ(proxied.body, "{\"ok\":1}");
  EXPECT_EQ(seen_port, 8080);
  EXPECT_EQ(Send("GET", "/api/v1/namespaces/default/services/job1-master:http/proxy/status").body,
            "{\"ok\":1}");
  EXPECT_EQ(Send("GET", "/api/v1/namespaces/default/services/nope:80/proxy/x").status, 404);
  // A POST is relayed too, but not the client's Authorization (the API
  // server's own token, which kube-apiserver consumes): the upstream, which
  // wants its own secret, refuses it. (With the secret in
  // X-Edl-Authorization it goes through: tests/fakekube/edl_on_kube_test.cc.)
  auto posted = Send("POST", path, "x", "application/octet-stream");
  EXPECT_EQ(posted.status, 401) << posted.body;
  EXPECT_NE(posted.body.find("missing Authorization"), std::string::npos) << posted.body;
  EXPECT_EQ(Send("PUT", path).status, 405);
}

}  // namespace
}  // namespace edl::fakekube
