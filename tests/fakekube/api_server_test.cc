// The fake API server over real HTTPS sockets, as any client first meets
// it: the bearer token, discovery and OpenAPI, unknown paths and methods,
// keep-alive connections, its kubeconfig, plain HTTP, and stopping with
// watches open. CRUD, watches, logs and the proxy have files of their own
// (api_server_*_test.cc).
#include "tests/fakekube/server/api_server.h"

#include <gtest/gtest.h>

#include "tests/fakekube/api_server_fixture.h"
#include "tests/fakekube/server/base64.h"

namespace edl::fakekube {
namespace {

using testing::ApiServerTest;
using testing::ClientOptions;
using testing::Request;
using testing::StreamReader;

TEST_F(ApiServerTest, RefusesRequestsWithoutTheTokenAndAcceptsAnySchemeCase) {
  ClientOptions anonymous = client();
  anonymous.authorization = "";
  auto refused = Request(anonymous, "GET", "/api/v1/namespaces/default/pods");
  EXPECT_EQ(refused.status, 401);
  EXPECT_EQ(refused.json()["reason"], "Unauthorized");
  EXPECT_EQ(refused.json()["message"], "Unauthorized");
  ClientOptions wrong = client();
  wrong.authorization = "Bearer nope";
  EXPECT_EQ(Request(wrong, "GET", "/version").status, 401);
  ClientOptions lower = client();
  lower.authorization = std::string("bearer ") + api_->token();  // python's in-cluster client
  EXPECT_EQ(Request(lower, "GET", "/version").status, 200);
  ClientOptions basic = client();
  basic.authorization = std::string("Basic ") + api_->token();
  EXPECT_EQ(Request(basic, "GET", "/version").status, 401);
}

TEST_F(ApiServerTest, ServesVersionDiscoveryAndOpenApi) {
  auto version = Send("GET", "/version?timeout=5s");
  ASSERT_EQ(version.status, 200);
  EXPECT_EQ(version.json()["minor"], "32");
  EXPECT_EQ(Send("GET", "/api").json()["versions"][0], "v1");
  EXPECT_EQ(Send("GET", "/apis").json()["groups"][0]["name"], "scheduling.k8s.io");
  Json core = Send("GET", "/api/v1").json();
  bool pods = false, log = false;
  for (const Json& r : core["resources"]) {
    pods |= r["name"] == "pods" && r["namespaced"] == true;
    log |= r["name"] == "pods/log";
  }
  EXPECT_TRUE(pods && log);
  EXPECT_EQ(Send("GET", "/apis/scheduling.k8s.io/v1").json()["resources"][0]["name"],
            "priorityclasses");
  Json index = Send("GET", "/openapi/v3").json();
  std::string url = index["paths"]["api/v1"]["serverRelativeURL"];
  Json doc = Send("GET", url).json();
  Json patch = doc["paths"]["/api/v1/namespaces/{namespace}/pods/{name}"]["patch"];
  EXPECT_EQ(patch["x-kubernetes-group-version-kind"]["kind"], "Pod");
  EXPECT_EQ(patch["parameters"][0]["name"], "fieldValidation");
}

TEST_F(ApiServerTest, UnknownPathsAre404AndWrongMethods405) {
  auto unknown = Send("GET", "/api/v1/namespaces/default/widgets");
  EXPECT_EQ(unknown.status, 404);
  EXPECT_EQ(unknown.json()["reason"], "NotFound");
  EXPECT_EQ(Send("GET", "/nothing/here").status, 404);
  EXPECT_EQ(Send("GET", "/api/v1/pods/x").status, 404);  // a pod needs its namespace
  auto wrong = Send("PUT", "/api/v1/namespaces/default/pods");
  EXPECT_EQ(wrong.status, 405);
  EXPECT_EQ(wrong.json()["reason"], "MethodNotAllowed");
  EXPECT_EQ(Send("POST", "/version").status, 405);
}

TEST_F(ApiServerTest, KeepsTheConnectionAliveAcrossRequests) {
  testing::ApiTestClient connection(client());
  ASSERT_TRUE(connection.connected());
  EXPECT_EQ(connection.Send("GET", "/version").status, 200);
  EXPECT_EQ(connection.Send("GET", "/api/v1/namespaces/default/pods").status, 200);
  EXPECT_EQ(connection.Send("GET", "/api/v1/namespaces/default/pods/nope").status, 404);
}

TEST_F(ApiServerTest, KubeconfigNamesTheServerTheTokenAndTheCa) {
  std::string kubeconfig = server().Kubeconfig();
  EXPECT_NE(kubeconfig.find("server: https://127.0.0.1:" + std::to_string(server().port())),
            std::string::npos);
  EXPECT_NE(kubeconfig.find(std::string("token: ") + api_->token()), std::string::npos);
  EXPECT_NE(
      kubeconfig.find("certificate-authority-data: " + Base64Encode(server().CaCertificatePem())),
      std::string::npos);
  EXPECT_NE(kubeconfig.find("namespace: default"), std::string::npos);
}

TEST_F(ApiServerTest, ServesPlainHttpWhenTlsIsOff) {
  ApiServer::Options plain;
  plain.tls = false;
  StartServer(plain);
  EXPECT_EQ(Send("GET", "/version").status, 200);
  EXPECT_NE(server().Kubeconfig().find("server: http://127.0.0.1:"), std::string::npos);
}

TEST_F(ApiServerTest, StopsWithWatchesOpen) {
  StreamReader watch(client(), "/api/v1/namespaces/default/pods?watch=1");
  ASSERT_EQ(watch.status(), 200);
  server().Stop();
  EXPECT_TRUE(watch.WaitForEnd());
  // The store outlives the server and no longer feeds the closed watch.
  EXPECT_TRUE(store().Create("pods", "default", Pod("after-stop")).ok());
  EXPECT_EQ(Send("GET", "/version").status, 0);
}

}  // namespace
}  // namespace edl::fakekube
