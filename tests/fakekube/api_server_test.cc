// The fake API server over real HTTPS sockets: auth, discovery, CRUD,
// watch, logs and proxy as a Kubernetes client sees them on the wire.
#include "tests/fakekube/server/api_server.h"

#include <gtest/gtest.h>

#include <thread>

#include "net/rpc.h"
#include "tests/fakekube/api_test_client.h"
#include "tests/fakekube/server/base64.h"

namespace edl::fakekube {
namespace {

using testing::ClientOptions;
using testing::Request;
using testing::StreamReader;

constexpr char kToken[] = "t0ken-for-tests";

Json Pod(const std::string& name) {
  return {{"apiVersion", "v1"},
          {"kind", "Pod"},
          {"metadata", {{"name", name}, {"labels", {{"app", "edl"}}}}},
          {"spec", {{"containers", {{{"name", "main"}, {"image", "edl:1.0"}}}}}}};
}

Json Line(const std::optional<std::string>& line) {
  return line ? Json::parse(*line, nullptr, false) : Json();
}

class ApiServerTest : public ::testing::Test {
 protected:
  void SetUp() override { StartServer(ApiServer::Options{}); }

  void StartServer(ApiServer::Options options, Store::Options store_options = {}) {
    server_.reset();
    store_ = std::make_unique<Store>(store_options);
    options.token = kToken;
    options.bookmark_interval = std::chrono::seconds(1);
    server_ = std::make_unique<ApiServer>(*store_, options);
    ASSERT_TRUE(server_->Start().ok());
    client_.port = server_->port();
    client_.tls = options.tls;
    client_.ca_pem = server_->CaCertificatePem();
    client_.authorization = std::string("Bearer ") + kToken;
  }

  testing::HttpResult Send(const std::string& method, const std::string& target,
                           const std::string& body = "",
                           const std::string& type = "application/json") {
    return Request(client_, method, target, body, type);
  }
  Json CreatePod(const std::string& name) {
    auto r = Send("POST", "/api/v1/namespaces/default/pods", Pod(name).dump());
    EXPECT_EQ(r.status, 201) << r.body;
    return r.json();
  }
  // Marks the pod's container running, as the kubelet does.
  void StartContainer(const std::string& name) {
    ASSERT_TRUE(
        store_
            ->Update("pods", "default", name,
                     [](Json& pod) {
                       pod["spec"]["nodeName"] = "node-1";
                       pod["status"]["phase"] = "Running";
                       pod["status"]["containerStatuses"] = {
                           {{"name", "main"},
                            {"state", {{"running", {{"startedAt", "2026-01-01T00:00:00Z"}}}}}}};
                     })
            .ok());
  }

  std::unique_ptr<Store> store_;
  std::unique_ptr<ApiServer> server_;
  ClientOptions client_;
};

TEST_F(ApiServerTest, RefusesRequestsWithoutTheTokenAndAcceptsAnySchemeCase) {
  ClientOptions anonymous = client_;
  anonymous.authorization = "";
  auto refused = Request(anonymous, "GET", "/api/v1/namespaces/default/pods");
  EXPECT_EQ(refused.status, 401);
  EXPECT_EQ(refused.json()["reason"], "Unauthorized");
  EXPECT_EQ(refused.json()["message"], "Unauthorized");
  ClientOptions wrong = client_;
  wrong.authorization = "Bearer nope";
  EXPECT_EQ(Request(wrong, "GET", "/version").status, 401);
  ClientOptions lower = client_;
  lower.authorization = std::string("bearer ") + kToken;  // python's in-cluster client
  EXPECT_EQ(Request(lower, "GET", "/version").status, 200);
  ClientOptions basic = client_;
  basic.authorization = std::string("Basic ") + kToken;
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

TEST_F(ApiServerTest, CreatesGetsListsAndDeletesPods) {
  Json created = CreatePod("w-0");
  EXPECT_EQ(created["kind"], "Pod");
  EXPECT_EQ(created["metadata"]["namespace"], "default");
  auto got = Send("GET", "/api/v1/namespaces/default/pods/w-0");
  ASSERT_EQ(got.status, 200);
  EXPECT_EQ(got.json()["metadata"]["uid"], created["metadata"]["uid"]);
  auto list = Send("GET", "/api/v1/namespaces/default/pods?labelSelector=app%3Dedl&limit=500");
  ASSERT_EQ(list.status, 200);
  Json l = list.json();
  EXPECT_EQ(l["kind"], "PodList");
  EXPECT_EQ(l["metadata"]["resourceVersion"], std::to_string(store_->CurrentResourceVersion()));
  ASSERT_EQ(l["items"].size(), 1u);
  EXPECT_FALSE(l["items"][0].contains("kind"));
  EXPECT_EQ(Send("GET", "/api/v1/pods").json()["items"].size(), 1u);  // all namespaces
  auto deleted = Send("DELETE", "/api/v1/namespaces/default/pods/w-0",
                      R"({"propagationPolicy":"Background"})");
  ASSERT_EQ(deleted.status, 200);
  EXPECT_EQ(deleted.json()["kind"], "Pod");
  auto gone = Send("GET", "/api/v1/namespaces/default/pods/w-0");
  EXPECT_EQ(gone.status, 404);
  EXPECT_EQ(gone.json()["message"], "pods \"w-0\" not found");
}

TEST_F(ApiServerTest, CreateRefusesMalformedBodiesAndReportsStoreErrors) {
  EXPECT_EQ(Send("POST", "/api/v1/namespaces/default/pods", "{not json").status, 400);
  EXPECT_EQ(Send("POST", "/api/v1/namespaces/default/pods", "[1,2]").status, 400);
  EXPECT_EQ(Send("POST", "/api/v1/namespaces/default/pods?dryRun=All", Pod("dry").dump()).status,
            400);  // refused rather than done for real
  Json cm = {{"kind", "ConfigMap"}, {"metadata", {{"name", "x"}}}};
  EXPECT_EQ(Send("POST", "/api/v1/namespaces/default/pods", cm.dump()).status, 400);
  CreatePod("w-0");
  auto again = Send("POST", "/api/v1/namespaces/default/pods", Pod("w-0").dump());
  EXPECT_EQ(again.status, 409);
  EXPECT_EQ(again.json()["reason"], "AlreadyExists");
  Json invalid = Pod("w-1");
  invalid["spec"].erase("containers");
  auto refused = Send("POST", "/api/v1/namespaces/default/pods", invalid.dump());
  EXPECT_EQ(refused.status, 422);
  EXPECT_EQ(refused.json()["message"], "Pod \"w-1\" is invalid: spec.containers: Required value");
}

TEST_F(ApiServerTest, DeleteHonoursQueryAndBodyOptions) {
  CreatePod("w-0");
  StartContainer("w-0");
  auto graceful = Send("DELETE", "/api/v1/namespaces/default/pods/w-0");
  ASSERT_EQ(graceful.status, 200);
  EXPECT_EQ(graceful.json()["metadata"]["deletionGracePeriodSeconds"], 30);
  auto conflict =
      Send("DELETE", "/api/v1/namespaces/default/pods/w-0", R"({"preconditions":{"uid":"other"}})");
  EXPECT_EQ(conflict.status, 409);
  EXPECT_EQ(conflict.json()["reason"], "Conflict");
  EXPECT_EQ(Send("DELETE", "/api/v1/namespaces/default/pods/w-0?gracePeriodSeconds=0").status, 200);
  EXPECT_EQ(Send("GET", "/api/v1/namespaces/default/pods/w-0").status, 404);
  ASSERT_EQ(Send("POST", "/api/v1/namespaces/default/configmaps",
                 R"({"metadata":{"name":"c"},"data":{"a":"b"}})")
                .status,
            201);
  auto status = Send("DELETE", "/api/v1/namespaces/default/configmaps/c");
  EXPECT_EQ(status.json()["kind"], "Status");
  EXPECT_EQ(status.json()["details"]["kind"], "configmaps");
}

TEST_F(ApiServerTest, PutAndPatchUpdateObjectsAndTheStatusSubresource) {
  CreatePod("w-0");
  const std::string path = "/api/v1/namespaces/default/pods/w-0";
  auto labelled =
      Send("PATCH", path,
           R"({"metadata":{"labels":{"edl-role":"worker"}},"status":{"phase":"Running"}})",
           "application/merge-patch+json");
  ASSERT_EQ(labelled.status, 200) << labelled.body;
  EXPECT_EQ(labelled.json()["metadata"]["labels"]["edl-role"], "worker");
  EXPECT_EQ(labelled.json()["status"]["phase"], "Pending");  // the main resource keeps status
  auto status = Send("PATCH", path + "/status", R"({"status":{"phase":"Running"}})",
                     "application/strategic-merge-patch+json");
  ASSERT_EQ(status.status, 200);
  EXPECT_EQ(status.json()["status"]["phase"], "Running");
  auto json_patch =
      Send("PATCH", path, R"([{"op":"add","path":"/metadata/annotations","value":{"a":"b"}}])",
           "application/json-patch+json");
  ASSERT_EQ(json_patch.status, 200);
  EXPECT_EQ(json_patch.json()["metadata"]["annotations"]["a"], "b");
  EXPECT_EQ(Send("PATCH", path, "{}", "application/apply-patch+yaml").status, 415);
  EXPECT_EQ(Send("PATCH", path, "not json", "application/merge-patch+json").status, 400);

  Json current = Send("GET", path).json();
  Json stale = current;
  stale["metadata"]["resourceVersion"] = "1";
  auto conflict = Send("PUT", path, stale.dump());
  EXPECT_EQ(conflict.status, 409);
  EXPECT_EQ(conflict.json()["message"],
            "Operation cannot be fulfilled on pods \"w-0\": the object has been modified; "
            "please apply your changes to the latest version and try again");
  current["status"]["phase"] = "Failed";
  auto put = Send("PUT", path + "/status", current.dump());
  ASSERT_EQ(put.status, 200);
  EXPECT_EQ(put.json()["status"]["phase"], "Failed");
  Json renamed = current;
  renamed["metadata"]["name"] = "other";
  renamed["metadata"].erase("resourceVersion");
  EXPECT_EQ(Send("PUT", path, renamed.dump()).status, 400);
  EXPECT_EQ(
      Send("PATCH", "/api/v1/namespaces/default/pods/nope", "{}", "application/merge-patch+json")
          .status,
      404);
}

TEST_F(ApiServerTest, ListAtAFutureResourceVersionIs504TooLarge) {
  uint64_t future = store_->CurrentResourceVersion() + 1000;
  auto r = Send("GET", "/api/v1/namespaces/default/pods?resourceVersion=" + std::to_string(future));
  EXPECT_EQ(r.status, 504);
  EXPECT_EQ(r.json()["reason"], "Timeout");
  EXPECT_EQ(r.json()["details"]["causes"][0]["reason"], "ResourceVersionTooLarge");
  EXPECT_EQ(Send("GET", "/api/v1/namespaces/default/pods?resourceVersion=abc").status, 400);
  EXPECT_EQ(Send("GET", "/api/v1/namespaces/default/pods?resourceVersion=0").status, 200);
}

TEST_F(ApiServerTest, ListWithMalformedSelectorsIs400) {
  auto field = Send("GET", "/api/v1/namespaces/default/pods?fieldSelector=spec.foo%3Dx");
  EXPECT_EQ(field.status, 400);
  EXPECT_EQ(field.json()["message"], "field label not supported: spec.foo");
  EXPECT_EQ(Send("GET", "/api/v1/namespaces/default/pods?labelSelector=a%20in%20(b").status, 400);
  EXPECT_EQ(Send("GET", "/api/v1/namespaces/default/pods?watch=1&labelSelector=%3D").status, 400);
}

TEST_F(ApiServerTest, KeepsTheConnectionAliveAcrossRequests) {
  testing::ApiTestClient client(client_);
  ASSERT_TRUE(client.connected());
  EXPECT_EQ(client.Send("GET", "/version").status, 200);
  EXPECT_EQ(client.Send("GET", "/api/v1/namespaces/default/pods").status, 200);
  EXPECT_EQ(client.Send("GET", "/api/v1/namespaces/default/pods/nope").status, 404);
}

TEST_F(ApiServerTest, WatchWithoutVersionStartsWithSyntheticAddedThenLiveChanges) {
  CreatePod("existing");
  StreamReader watch(client_, "/api/v1/namespaces/default/pods?watch=true");
  ASSERT_EQ(watch.status(), 200);
  EXPECT_EQ(watch.content_type(), "application/json");
  Json first = Line(watch.NextLine());
  EXPECT_EQ(first["type"], "ADDED");
  EXPECT_EQ(first["object"]["kind"], "Pod");
  EXPECT_EQ(first["object"]["metadata"]["name"], "existing");
  CreatePod("new");
  Json added = Line(watch.NextLine());
  EXPECT_EQ(added["type"], "ADDED");
  EXPECT_EQ(added["object"]["metadata"]["name"], "new");
  EXPECT_EQ(added["object"]["apiVersion"], "v1");
  ASSERT_EQ(Send("DELETE", "/api/v1/namespaces/default/pods/new").status, 200);
  Json deleted = Line(watch.NextLine());
  EXPECT_EQ(deleted["type"], "DELETED");
  EXPECT_EQ(deleted["object"]["metadata"]["name"], "new");
}

TEST_F(ApiServerTest, WatchFromAVersionReplaysOnlyLaterChanges) {
  CreatePod("before");
  Json list = Send("GET", "/api/v1/namespaces/default/pods").json();
  std::string rv = list["metadata"]["resourceVersion"];
  CreatePod("after");
  StreamReader watch(client_, "/api/v1/namespaces/default/pods?watch=1&resourceVersion=" + rv);
  Json event = Line(watch.NextLine());
  EXPECT_EQ(event["type"], "ADDED");
  EXPECT_EQ(event["object"]["metadata"]["name"], "after");
  ASSERT_TRUE(
      store_
          ->Update("pods", "default", "before", [](Json& p) { p["metadata"]["labels"]["x"] = "y"; })
          .ok());
  Json modified = Line(watch.NextLine());
  EXPECT_EQ(modified["type"], "MODIFIED");
  EXPECT_EQ(modified["object"]["metadata"]["name"], "before");
}

TEST_F(ApiServerTest, WatchFromAnExpiredVersionGetsOneErrorEventAndEnds) {
  Store::Options small;
  small.history_limit = 2;
  StartServer(ApiServer::Options{}, small);
  std::string old = std::to_string(store_->CurrentResourceVersion());
  for (int i = 0; i < 4; ++i) CreatePod("p" + std::to_string(i));
  StreamReader watch(client_, "/api/v1/namespaces/default/pods?watch=True&resourceVersion=" + old);
  EXPECT_EQ(watch.status(), 200);
  Json error = Line(watch.NextLine());
  EXPECT_EQ(error["type"], "ERROR");
  EXPECT_EQ(error["object"]["kind"], "Status");
  EXPECT_EQ(error["object"]["code"], 410);
  EXPECT_EQ(error["object"]["reason"], "Expired");
  EXPECT_EQ(
      error["object"]["message"].get<std::string>().rfind("too old resource version: " + old, 0),
      0u);
  EXPECT_TRUE(watch.WaitForEnd());
  EXPECT_TRUE(watch.ended_cleanly());
}

TEST_F(ApiServerTest, WatchAppliesSelectorsToEveryEvent) {
  StreamReader watch(client_, "/api/v1/namespaces/default/pods?watch&labelSelector=app%3Dedl");
  ASSERT_EQ(watch.status(), 200);
  Json other = Pod("other");
  other["metadata"]["labels"]["app"] = "other";
  ASSERT_EQ(Send("POST", "/api/v1/namespaces/default/pods", other.dump()).status, 201);
  CreatePod("w-0");
  Json added = Line(watch.NextLine());
  EXPECT_EQ(added["type"], "ADDED");
  EXPECT_EQ(added["object"]["metadata"]["name"], "w-0");  // "other" was never sent
  auto relabel = [&](const std::string& app) {
    ASSERT_EQ(Send("PATCH", "/api/v1/namespaces/default/pods/w-0",
                   Json{{"metadata", {{"labels", {{"app", app}}}}}}.dump(),
                   "application/merge-patch+json")
                  .status,
              200);
  };
  relabel("gone");
  Json left = Line(watch.NextLine());
  EXPECT_EQ(left["type"], "DELETED");
  EXPECT_EQ(left["object"]["metadata"]["labels"]["app"], "edl");  // the last matching state
  relabel("edl");
  EXPECT_EQ(Line(watch.NextLine())["type"], "ADDED");
}

TEST_F(ApiServerTest, WatchOnANamedObjectFollowsOnlyThatObject) {
  CreatePod("a");
  CreatePod("b");
  StreamReader watch(client_, "/api/v1/namespaces/default/pods/b?watch=1");
  Json first = Line(watch.NextLine());
  EXPECT_EQ(first["object"]["metadata"]["name"], "b");
  ASSERT_EQ(Send("DELETE", "/api/v1/namespaces/default/pods/a").status, 200);
  ASSERT_EQ(Send("DELETE", "/api/v1/namespaces/default/pods/b").status, 200);
  Json deleted = Line(watch.NextLine());
  EXPECT_EQ(deleted["type"], "DELETED");
  EXPECT_EQ(deleted["object"]["metadata"]["name"], "b");
}

TEST_F(ApiServerTest, WatchEndsAtTimeoutSecondsWithABookmarkWhenAllowed) {
  StreamReader watch(
      client_, "/api/v1/namespaces/default/pods?watch=1&timeoutSeconds=1&allowWatchBookmarks=1");
  ASSERT_EQ(watch.status(), 200);
  ASSERT_TRUE(watch.WaitForEnd());
  EXPECT_TRUE(watch.ended_cleanly());
  Json bookmark = Line(watch.NextLine());
  EXPECT_EQ(bookmark["type"], "BOOKMARK");
  EXPECT_EQ(bookmark["object"]["kind"], "Pod");
  EXPECT_EQ(bookmark["object"]["metadata"]["resourceVersion"],
            std::to_string(store_->CurrentResourceVersion()));
}

TEST_F(ApiServerTest, WatchWithBookmarksSendsThemPeriodically) {
  StreamReader watch(client_,
                     "/api/v1/namespaces/default/configmaps?watch=true&"
                     "allowWatchBookmarks=True&timeoutSeconds=30");
  Json first = Line(watch.NextLine());
  EXPECT_EQ(first["type"], "BOOKMARK");
  EXPECT_EQ(first["object"]["kind"], "ConfigMap");
  ASSERT_TRUE(store_->Create("configmaps", "default", {{"metadata", {{"name", "c"}}}}).ok());
  // Events and bookmarks interleave; the bookmark after the event carries
  // at least the event's version.
  std::optional<uint64_t> added_rv;
  for (int i = 0; i < 5; ++i) {
    Json e = Line(watch.NextLine());
    if (e["type"] == "ADDED")
      added_rv = std::stoull(e["object"]["metadata"]["resourceVersion"].get<std::string>());
    if (e["type"] == "BOOKMARK" && added_rv) {
      EXPECT_GE(std::stoull(e["object"]["metadata"]["resourceVersion"].get<std::string>()),
                *added_rv);
      return;
    }
  }
  FAIL() << "no bookmark after the event";
}

TEST_F(ApiServerTest, WatchParsesBooleansLikeApimachinery) {
  CreatePod("a");
  for (const char* no : {"watch=0", "watch=false", "watch=FALSE"}) {
    auto list = Send("GET", std::string("/api/v1/namespaces/default/pods?") + no);
    EXPECT_EQ(list.json()["kind"], "PodList") << no;
  }
  for (const char* yes : {"watch=1", "watch=true", "watch=True", "watch=", "watch=yes"}) {
    StreamReader watch(client_, std::string("/api/v1/namespaces/default/pods?") + yes);
    EXPECT_EQ(Line(watch.NextLine())["type"], "ADDED") << yes;
  }
}

TEST_F(ApiServerTest, LogsOfAPodThatNeverStartedAre400WaitingToStart) {
  CreatePod("w-0");
  auto r = Send("GET", "/api/v1/namespaces/default/pods/w-0/log?container=main");
  EXPECT_EQ(r.status, 400);
  EXPECT_EQ(r.json()["message"],
            "container \"main\" in pod \"w-0\" is waiting to start: ContainerCreating");
  EXPECT_EQ(Send("GET", "/api/v1/namespaces/default/pods/w-0/log?container=side").status, 400);
  EXPECT_EQ(Send("GET", "/api/v1/namespaces/default/pods/nope/log").status, 404);
}

TEST_F(ApiServerTest, LogsAreTextWithTailLines) {
  Json pod = CreatePod("w-0");
  StartContainer("w-0");
  store_->AppendLog(pod["metadata"]["uid"], "one\ntwo\nthree\n");
  auto all = Send("GET", "/api/v1/namespaces/default/pods/w-0/log");
  ASSERT_EQ(all.status, 200);
  EXPECT_EQ(all.content_type, "text/plain");
  EXPECT_EQ(all.body, "one\ntwo\nthree\n");
  EXPECT_EQ(Send("GET", "/api/v1/namespaces/default/pods/w-0/log?tailLines=2").body,
            "two\nthree\n");
  EXPECT_EQ(Send("GET", "/api/v1/namespaces/default/pods/w-0/log?limitBytes=5").body, "one\nt");
}

TEST_F(ApiServerTest, FollowedLogsStreamUntilThePodIsTerminal) {
  Json pod = CreatePod("w-0");
  StartContainer("w-0");
  const std::string uid = pod["metadata"]["uid"];
  store_->AppendLog(uid, "early\n");
  StreamReader follow(client_, "/api/v1/namespaces/default/pods/w-0/log?follow=true&tailLines=10");
  ASSERT_EQ(follow.status(), 200);
  EXPECT_EQ(follow.NextLine(), "early");
  store_->AppendLog(uid, "late\n");
  EXPECT_EQ(follow.NextLine(), "late");
  EXPECT_FALSE(follow.ended());
  store_->AppendLog(uid, "last\n");
  ASSERT_TRUE(
      store_->Update("pods", "default", "w-0", [](Json& p) { p["status"]["phase"] = "Succeeded"; })
          .ok());
  ASSERT_TRUE(follow.WaitForEnd());
  EXPECT_TRUE(follow.ended_cleanly());
  EXPECT_EQ(follow.body(), "early\nlate\nlast\n");
}

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
  server_->SetProxyTarget([&](const Json& service, int port) -> std::optional<std::string> {
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

TEST_F(ApiServerTest, KubeconfigNamesTheServerTheTokenAndTheCa) {
  std::string kubeconfig = server_->Kubeconfig();
  EXPECT_NE(kubeconfig.find("server: https://127.0.0.1:" + std::to_string(server_->port())),
            std::string::npos);
  EXPECT_NE(kubeconfig.find(std::string("token: ") + kToken), std::string::npos);
  EXPECT_NE(
      kubeconfig.find("certificate-authority-data: " + Base64Encode(server_->CaCertificatePem())),
      std::string::npos);
  EXPECT_NE(kubeconfig.find("namespace: default"), std::string::npos);
}

TEST_F(ApiServerTest, ServesPlainHttpWhenTlsIsOff) {
  ApiServer::Options plain;
  plain.tls = false;
  StartServer(plain);
  EXPECT_EQ(Send("GET", "/version").status, 200);
  EXPECT_NE(server_->Kubeconfig().find("server: http://127.0.0.1:"), std::string::npos);
}

TEST_F(ApiServerTest, StopsWithWatchesOpen) {
  StreamReader watch(client_, "/api/v1/namespaces/default/pods?watch=1");
  ASSERT_EQ(watch.status(), 200);
  server_->Stop();
  EXPECT_TRUE(watch.WaitForEnd());
  // The store outlives the server and no longer feeds the closed watch.
  EXPECT_TRUE(store_->Create("pods", "default", Pod("after-stop")).ok());
  EXPECT_EQ(Send("GET", "/version").status, 0);
}

}  // namespace
}  // namespace edl::fakekube
