// Client requests over real loopback sockets: token refresh on 401, 429 +
// Retry-After, error mapping, pagination, keep-alive and Connection: close,
// body framings, the exec credential plugin, raw GETs and streams.
#include <gtest/gtest.h>
#include <sys/stat.h>

#include <atomic>
#include <fstream>

#include "kube/client.h"
#include "kube/exec_credential.h"
#include "tests/kube/test_api_server.h"
#include "tests/kube/test_pki.h"

namespace edl::kube {
namespace {

using testing::CertAndKey;
using testing::IssueCert;
using testing::MakeCa;
using testing::SeenRequest;
using testing::ServerConnection;
using testing::TempDir;
using testing::TestApiServer;

constexpr char kPod[] = R"({"kind":"Pod","apiVersion":"v1","metadata":{"name":"p"}})";
constexpr char kUnauthorized[] =
    R"({"kind":"Status","apiVersion":"v1","metadata":{},"status":"Failure","message":"Unauthorized","reason":"Unauthorized","code":401})";

struct TlsServer {
  explicit TlsServer(TestApiServer::Handler handler)
      : server(std::move(handler), TestApiServer::Tls{cert, ""}) {}
  ClusterConfig Config() const {
    ClusterConfig c;
    c.server = server.url();
    c.ca_pem = ca.cert_pem;
    c.description = "test";
    return c;
  }
  CertAndKey ca = MakeCa("ca");
  CertAndKey cert = IssueCert(ca, "apiserver", {"127.0.0.1"}, {});
  TestApiServer server;
};

std::unique_ptr<Client> MakeClient(ClusterConfig config, ClientOptions o = {}) {
  Result<std::unique_ptr<Client>> c = Client::Create(std::move(config), o);
  EDL_CHECK(c.ok()) << c.status().message();
  return std::move(*c);
}

TEST(ClientRequest, RereadsTheTokenFileAfterA401AndRetriesOnce) {
  std::atomic<bool> rotated{false};
  TlsServer tls([&](const SeenRequest& r, ServerConnection& c) {
    std::string want = rotated ? "Bearer token-2" : "Bearer token-1";
    if (r.Header("authorization") == want) {
      c.Reply(200, kPod);
    } else {
      c.Reply(401, kUnauthorized);
    }
  });
  TempDir dir;
  ClusterConfig config = tls.Config();
  config.token_file = dir.Write("token", "token-1\n");
  auto client = MakeClient(config);
  ASSERT_TRUE(client->Get(Pods(), "n", "p").ok());

  dir.Write("token", "token-2\n");  // the kubelet rotated it
  rotated = true;
  Result<Json> pod = client->Get(Pods(), "n", "p");
  ASSERT_TRUE(pod.ok()) << pod.status().message();
  std::vector<SeenRequest> seen = tls.server.requests();
  ASSERT_EQ(seen.size(), 3u);
  EXPECT_EQ(seen[1].Header("authorization"), "Bearer token-1");  // 401
  EXPECT_EQ(seen[2].Header("authorization"), "Bearer token-2");
}

TEST(ClientRequest, AStaticTokenThatGets401IsNotRetried) {
  TlsServer tls([&](const SeenRequest& r, ServerConnection& c) { c.Reply(401, kUnauthorized); });
  ClusterConfig config = tls.Config();
  config.token = "revoked";
  Result<Json> pod = MakeClient(config)->Get(Pods(), "n", "p");
  ASSERT_FALSE(pod.ok());
  EXPECT_EQ(pod.status().code(), StatusCode::kUnauthenticated);
  EXPECT_EQ(pod.status().message(),
            "kube: GET /api/v1/namespaces/n/pods/p: 401 Unauthorized: Unauthorized");
  EXPECT_EQ(tls.server.requests().size(), 1u);
}

TEST(ClientRequest, HonoursRetryAfterOn429) {
  std::atomic<int> calls{0};
  std::vector<std::chrono::steady_clock::time_point> at;
  std::mutex mu;
  TestApiServer server([&](const SeenRequest& r, ServerConnection& c) {
    {
      std::lock_guard<std::mutex> lock(mu);
      at.push_back(std::chrono::steady_clock::now());
    }
    if (calls++ == 0) {
      c.Reply(
          429,
          R"({"kind":"Status","status":"Failure","message":"Too many requests, please try again later.","reason":"TooManyRequests","code":429})",
          {{"Retry-After", "1"}});
    } else {
      c.Reply(200, kPod);
    }
  });
  ClusterConfig config;
  config.server = server.url();
  Result<Json> pod = MakeClient(config)->Get(Pods(), "n", "p");
  ASSERT_TRUE(pod.ok()) << pod.status().message();
  ASSERT_EQ(server.requests().size(), 2u);
  std::lock_guard<std::mutex> lock(mu);
  // The re-send waited at least the server's Retry-After (a lower bound the
  // client guarantees, not a timing measurement).
  EXPECT_GE(at[1] - at[0], std::chrono::milliseconds(1000));
}

TEST(ClientRequest, GivesUpAfterThreeThrottledRetries) {
  TestApiServer server([&](const SeenRequest& r, ServerConnection& c) {
    c.Reply(429, R"({"kind":"Status","reason":"TooManyRequests","message":"slow down","code":429})",
            {{"Retry-After", "30"}});
  });
  ClusterConfig config;
  config.server = server.url();
  ClientOptions options;
  options.max_retry_after = std::chrono::milliseconds(10);  // caps the 30 s
  Result<Json> pod = MakeClient(config, options)->Get(Pods(), "n", "p");
  ASSERT_FALSE(pod.ok());
  EXPECT_EQ(pod.status().code(), StatusCode::kResourceExhausted);
  EXPECT_EQ(KubeReason(pod.status()), "TooManyRequests");
  EXPECT_EQ(server.requests().size(), 4u);
}

TEST(ClientRequest, ResendsA5xxWithRetryAfterButLeavesOneWithoutItToTheCaller) {
  std::atomic<int> calls{0};
  TestApiServer patient([&](const SeenRequest& r, ServerConnection& c) {
    if (calls++ == 0) {
      c.Reply(503, R"({"kind":"Status","reason":"ServiceUnavailable","code":503})",
              {{"Retry-After", "1"}});
    } else {
      c.Reply(200, kPod);
    }
  });
  ClusterConfig config;
  config.server = patient.url();
  ClientOptions options;
  options.max_retry_after = std::chrono::milliseconds(10);
  Result<Json> pod = MakeClient(config, options)->Get(Pods(), "n", "p");
  ASSERT_TRUE(pod.ok()) << pod.status().message();
  EXPECT_EQ(patient.requests().size(), 2u);

  TestApiServer failing([&](const SeenRequest& r, ServerConnection& c) {
    c.Reply(500, R"({"kind":"Status","reason":"InternalError","message":"boom","code":500})");
  });
  config.server = failing.url();
  Result<Json> failed = MakeClient(config, options)->Get(Pods(), "n", "p");
  ASSERT_FALSE(failed.ok());
  EXPECT_EQ(failing.requests().size(), 1u);
}

TEST(ClientRequest, ReportsApiErrorsWithMethodPathAndReason) {
  TestApiServer server([&](const SeenRequest& r, ServerConnection& c) {
    c.Reply(
        409,
        R"({"kind":"Status","apiVersion":"v1","metadata":{},"status":"Failure","message":"pods \"ps-0\" already exists","reason":"AlreadyExists","details":{"name":"ps-0","kind":"pods"},"code":409})");
  });
  ClusterConfig config;
  config.server = server.url();
  Result<Json> created =
      MakeClient(config)->Create(Pods(), "edl", Json{{"metadata", {{"name", "ps-0"}}}});
  ASSERT_FALSE(created.ok());
  EXPECT_EQ(created.status().code(), StatusCode::kAlreadyExists);
  EXPECT_EQ(created.status().message(),
            "kube: POST /api/v1/namespaces/edl/pods: 409 AlreadyExists: pods "
            "\"ps-0\" "
            "already exists");
  std::vector<SeenRequest> seen = server.requests();
  ASSERT_EQ(seen.size(), 1u);
  EXPECT_EQ(seen[0].Header("content-type"), "application/json");
  EXPECT_EQ(Json::parse(seen[0].body)["metadata"]["name"], "ps-0");
}

TEST(ClientRequest, ListFollowsContinueAndMergesItems) {
  TestApiServer server([&](const SeenRequest& r, ServerConnection& c) {
    if (r.Query("continue").empty()) {
      c.Reply(
          200,
          R"({"kind":"PodList","apiVersion":"v1","metadata":{"resourceVersion":"100","continue":"next-1","remainingItemCount":1},"items":[{"metadata":{"name":"a"}}]})");
    } else {
      c.Reply(
          200,
          R"({"kind":"PodList","apiVersion":"v1","metadata":{"resourceVersion":"100"},"items":[{"metadata":{"name":"b"}}]})");
    }
  });
  ClusterConfig config;
  config.server = server.url();
  ListOptions o;
  o.label_selector = "edl-job=j1,edl-role in (worker,ps)";
  o.resource_version = "0";
  o.limit = 1;
  Result<Json> list = MakeClient(config)->List(Pods(), "edl", o);
  ASSERT_TRUE(list.ok()) << list.status().message();
  ASSERT_EQ((*list)["items"].size(), 2u);
  EXPECT_EQ((*list)["items"][1]["metadata"]["name"], "b");
  EXPECT_EQ((*list)["metadata"]["resourceVersion"], "100");
  EXPECT_FALSE((*list)["metadata"].contains("continue"));
  std::vector<SeenRequest> seen = server.requests();
  ASSERT_EQ(seen.size(), 2u);
  EXPECT_EQ(seen[0].Path(), "/api/v1/namespaces/edl/pods");
  EXPECT_EQ(seen[0].Query("labelSelector"), "edl-job=j1,edl-role in (worker,ps)");
  EXPECT_EQ(seen[0].target.find(' '), std::string::npos);  // escaped
  EXPECT_EQ(seen[0].Query("limit"), "1");
  EXPECT_EQ(seen[0].Query("resourceVersion"), "0");
  EXPECT_EQ(seen[1].Query("continue"), "next-1");
  EXPECT_EQ(seen[1].Query("resourceVersion"), "");  // not allowed with continue
  EXPECT_EQ(seen[1].Query("labelSelector"), "edl-job=j1,edl-role in (worker,ps)");
}

TEST(ClientRequest, ReusesKeepAliveConnections) {
  TestApiServer server([&](const SeenRequest& r, ServerConnection& c) { c.Reply(200, kPod); });
  ClusterConfig config;
  config.server = server.url();
  auto client = MakeClient(config);
  for (int i = 0; i < 3; ++i) ASSERT_TRUE(client->Get(Pods(), "n", "p").ok());
  EXPECT_EQ(server.connections_accepted(), 1);
}

TEST(ClientRequest, HonoursConnectionClose) {
  TestApiServer server([&](const SeenRequest& r, ServerConnection& c) {
    c.Reply(200, kPod, {{"Connection", "close"}});
    c.Close();
  });
  ClusterConfig config;
  config.server = server.url();
  auto client = MakeClient(config);
  for (int i = 0; i < 3; ++i) ASSERT_TRUE(client->Get(Pods(), "n", "p").ok());
  EXPECT_EQ(server.connections_accepted(), 3);
}

TEST(ClientRequest, SurvivesAServerThatDropsIdleConnections) {
  TestApiServer server([&](const SeenRequest& r, ServerConnection& c) {
    c.Reply(200, kPod);  // promises keep-alive, then closes anyway
    c.Close();
  });
  ClusterConfig config;
  config.server = server.url();
  auto client = MakeClient(config);
  for (int i = 0; i < 3; ++i) {
    Result<Json> pod = client->Get(Pods(), "n", "p");
    ASSERT_TRUE(pod.ok()) << pod.status().message();
  }
  EXPECT_EQ(server.requests().size(), 3u);
}

TEST(ClientRequest, ReadsCloseDelimitedAndChunkedBodies) {
  TestApiServer server([&](const SeenRequest& r, ServerConnection& c) {
    if (r.Path().ends_with("/eof")) {
      c.Write("HTTP/1.1 200 OK\r\nContent-Type: application/json\r\n\r\n");
      c.Write(R"({"kind":"Pod","metadata":{"name":"eof"}})");
      c.Close();
    } else {
      c.StartChunked(200);
      c.Chunk(R"({"kind":"Pod",)");
      c.Chunk(R"("metadata":{"name":"chunked"}})");
      c.EndChunked();
    }
  });
  ClusterConfig config;
  config.server = server.url();
  auto client = MakeClient(config);
  Result<Json> eof = client->Get(Pods(), "n", "eof");
  ASSERT_TRUE(eof.ok()) << eof.status().message();
  EXPECT_EQ((*eof)["metadata"]["name"], "eof");
  Result<Json> chunked = client->Get(Pods(), "n", "chunked");
  ASSERT_TRUE(chunked.ok()) << chunked.status().message();
  EXPECT_EQ((*chunked)["metadata"]["name"], "chunked");
}

TEST(ClientRequest, ATruncatedBodyIsAnErrorNotAPod) {
  TestApiServer server([&](const SeenRequest& r, ServerConnection& c) {
    c.Write(
        "HTTP/1.1 200 OK\r\nContent-Type: application/json\r\nContent-Length: "
        "100\r\n\r\n{\"kind\"");
    c.Close();
  });
  ClusterConfig config;
  config.server = server.url();
  Result<Json> pod = MakeClient(config)->Get(Pods(), "n", "p");
  ASSERT_FALSE(pod.ok());
  EXPECT_EQ(pod.status().code(), StatusCode::kUnavailable);
}

TEST(ClientRequest, TimesOutAServerThatNeverAnswers) {
  TestApiServer server(
      [&](const SeenRequest& r, ServerConnection& c) { c.Hang(std::chrono::seconds(30)); });
  ClusterConfig config;
  config.server = server.url();
  ClientOptions options;
  options.request_timeout = std::chrono::milliseconds(200);
  Result<Json> pod = MakeClient(config, options)->Get(Pods(), "n", "p");
  ASSERT_FALSE(pod.ok());
  EXPECT_EQ(pod.status().code(), StatusCode::kDeadlineExceeded);
  server.Stop();
}

TEST(ClientRequest, SendsDeleteOptionsAndPatchMediaTypes) {
  TestApiServer server([&](const SeenRequest& r, ServerConnection& c) { c.Reply(200, kPod); });
  ClusterConfig config;
  config.server = server.url();
  auto client = MakeClient(config);
  DeleteOptions d;
  d.grace_period_seconds = 0;
  d.precondition_uid = "uid-7";
  ASSERT_TRUE(client->Delete(Pods(), "edl", "w-1", d).ok());
  ASSERT_TRUE(
      client->Patch(Pods(), "edl", "w-1", Json{{"metadata", {{"labels", {{"a", "b"}}}}}}).ok());
  ASSERT_TRUE(client->Patch(Pods(), "edl", "w-1", Json::array(), PatchType::kJson, "status").ok());
  ASSERT_TRUE(client->Patch(Pods(), "edl", "w-1", Json::object(), PatchType::kStrategicMerge).ok());
  ASSERT_TRUE(client->Get(PriorityClasses(), "ignored", "high").ok());
  std::vector<SeenRequest> seen = server.requests();
  ASSERT_EQ(seen.size(), 5u);
  EXPECT_EQ(seen[0].method, "DELETE");
  Json options = Json::parse(seen[0].body);
  EXPECT_EQ(options["kind"], "DeleteOptions");
  EXPECT_EQ(options["gracePeriodSeconds"], 0);
  EXPECT_EQ(options["propagationPolicy"], "Background");
  EXPECT_EQ(options["preconditions"]["uid"], "uid-7");
  EXPECT_EQ(seen[1].method, "PATCH");
  EXPECT_EQ(seen[1].Header("content-type"), "application/merge-patch+json");
  EXPECT_EQ(seen[2].target, "/api/v1/namespaces/edl/pods/w-1/status");
  EXPECT_EQ(seen[2].Header("content-type"), "application/json-patch+json");
  EXPECT_EQ(seen[3].Header("content-type"), "application/strategic-merge-patch+json");
  EXPECT_EQ(seen[4].target, "/apis/scheduling.k8s.io/v1/priorityclasses/high");
}

TEST(ClientRequest, PrefixesPathsWithTheServerUrlPath) {
  TestApiServer server([&](const SeenRequest& r, ServerConnection& c) { c.Reply(200, kPod); });
  ClusterConfig config;
  config.server = server.url() + "/k8s/clusters/c-1/";
  ASSERT_TRUE(MakeClient(config)->Get(Pods(), "n", "p").ok());
  ASSERT_EQ(server.requests().size(), 1u);
  EXPECT_EQ(server.requests()[0].target, "/k8s/clusters/c-1/api/v1/namespaces/n/pods/p");
}

TEST(ClientRequest, GetRawReturnsTheBodyAndMapsErrors) {
  TestApiServer server([&](const SeenRequest& r, ServerConnection& c) {
    if (r.Path().ends_with("/log")) {
      c.Reply(200, "line 1\nline 2\n", {}, "text/plain");
    } else {
      c.Reply(
          404,
          R"({"kind":"Status","reason":"NotFound","message":"pods \"x\" not found","code":404})");
    }
  });
  ClusterConfig config;
  config.server = server.url();
  auto client = MakeClient(config);
  Result<std::string> log = client->GetRaw("/api/v1/namespaces/n/pods/p/log?tailLines=2");
  ASSERT_TRUE(log.ok()) << log.status().message();
  EXPECT_EQ(*log, "line 1\nline 2\n");
  Result<std::string> missing = client->GetRaw("/api/v1/namespaces/n/pods/x?y=1");
  ASSERT_FALSE(missing.ok());
  EXPECT_EQ(missing.status().code(), StatusCode::kNotFound);
  EXPECT_EQ(missing.status().message(),
            "kube: GET /api/v1/namespaces/n/pods/x: 404 NotFound: pods \"x\" "
            "not found");
}

TEST(ClientRequest, StreamsABodyChunkByChunkUntilTheSinkStops) {
  TestApiServer server([&](const SeenRequest& r, ServerConnection& c) {
    c.StartChunked(200, "text/plain");
    for (int i = 0; i < 5; ++i) c.Chunk("line " + std::to_string(i) + "\n");
    if (r.Query("follow") == "true") {
      c.Hang(std::chrono::seconds(30));  // a follow stream stays open
    } else {
      c.EndChunked();
    }
  });
  ClusterConfig config;
  config.server = server.url();
  auto client = MakeClient(config);
  std::string all;
  Status s = client->Stream("/api/v1/namespaces/n/pods/p/log", [&](std::string_view b) {
    all += b;
    return true;
  });
  ASSERT_TRUE(s.ok()) << s.message();
  EXPECT_EQ(all, "line 0\nline 1\nline 2\nline 3\nline 4\n");

  std::string followed;
  s = client->Stream("/api/v1/namespaces/n/pods/p/log?follow=true", [&](std::string_view b) {
    followed += b;
    return followed.find("line 4\n") == std::string::npos;
  });
  ASSERT_TRUE(s.ok()) << s.message();
  EXPECT_EQ(followed, all);
  server.Stop();
}

// Writes an exec plugin script that counts its runs in `dir`/runs and prints
// token "exec-<run>".
std::string WritePlugin(const TempDir& dir) {
  std::string path = dir.Write("plugin.sh", R"(#!/bin/sh
n=$(cat "$RUNS" 2>/dev/null || echo 0)
n=$((n + 1))
echo $n > "$RUNS"
case "$KUBERNETES_EXEC_INFO" in
  *ExecCredential*) ;;
  *) echo "no exec info" >&2; exit 3 ;;
esac
printf '{"apiVersion":"client.authentication.k8s.io/v1","kind":"ExecCredential","status":{"token":"exec-%s"}}' $n
)");
  ::chmod(path.c_str(), 0755);
  return path;
}

int Runs(const TempDir& dir) {
  std::ifstream in(dir.path() + "/runs");
  int n = 0;
  in >> n;
  return n;
}

TEST(ClientRequest, CachesTheExecCredentialUntilA401) {
  TempDir dir;
  std::atomic<bool> rotated{false};
  TlsServer tls([&](const SeenRequest& r, ServerConnection& c) {
    std::string want = rotated ? "Bearer exec-2" : "Bearer exec-1";
    c.Reply(r.Header("authorization") == want ? 200 : 401,
            r.Header("authorization") == want ? kPod : kUnauthorized);
  });
  ClusterConfig config = tls.Config();
  config.exec = ExecPlugin{"client.authentication.k8s.io/v1",
                           WritePlugin(dir),
                           {},
                           {{"RUNS", dir.path() + "/runs"}},
                           ""};
  auto client = MakeClient(config);
  ASSERT_TRUE(client->Get(Pods(), "n", "p").ok());
  ASSERT_TRUE(client->Get(Pods(), "n", "p").ok());
  EXPECT_EQ(Runs(dir), 1);
  rotated = true;
  Result<Json> pod = client->Get(Pods(), "n", "p");
  ASSERT_TRUE(pod.ok()) << pod.status().message();
  EXPECT_EQ(Runs(dir), 2);
}

TEST(ExecCredential, FailuresNameThePluginAndShowTheInstallHint) {
  ExecPlugin missing{"client.authentication.k8s.io/v1",
                     "/nonexistent/gke-gcloud-auth-plugin",
                     {},
                     {},
                     "Install gke-gcloud-auth-plugin with gcloud."};
  Result<ExecCredential> c = RunExecPlugin(missing);
  ASSERT_FALSE(c.ok());
  EXPECT_NE(c.status().message().find("\"/nonexistent/gke-gcloud-auth-plugin\": cannot run"),
            std::string::npos)
      << c.status().message();
  EXPECT_NE(c.status().message().find("Install gke-gcloud-auth-plugin with gcloud."),
            std::string::npos);

  ExecPlugin failing{"client.authentication.k8s.io/v1",
                     "/bin/sh",
                     {"-c", "echo token expired, run gcloud auth login >&2; exit 1"},
                     {},
                     ""};
  c = RunExecPlugin(failing);
  ASSERT_FALSE(c.ok());
  EXPECT_NE(c.status().message().find("exited with status 1: token expired, run gcloud auth login"),
            std::string::npos)
      << c.status().message();
}

TEST(ExecCredential, ParsesTokensCertificatesAndExpiry) {
  ExecPlugin p{"client.authentication.k8s.io/v1", "plug", {}, {}, ""};
  Result<ExecCredential> c = ParseExecCredential(
      p,
      R"({"kind":"ExecCredential","status":{"token":"t","expirationTimestamp":"2026-11-21T06:00:00Z"}})");
  ASSERT_TRUE(c.ok()) << c.status().message();
  EXPECT_EQ(c->token, "t");
  ASSERT_TRUE(c->expiry.has_value());
  EXPECT_EQ(std::chrono::system_clock::to_time_t(*c->expiry), 1795240800);
  c = ParseExecCredential(p, R"({"status":{"clientCertificateData":"C","clientKeyData":"K"}})");
  ASSERT_TRUE(c.ok()) << c.status().message();
  EXPECT_EQ(c->client_cert_pem, "C");
  for (const char* bad :
       {"", "not json", "[]", R"({"status":{}})", R"({"kind":"Pod","status":{"token":"t"}})",
        R"({"status":{"token":5}})", R"({"status":{"clientCertificateData":"C"}})",
        R"({"status":{"token":"t","expirationTimestamp":"tomorrow"}})"}) {
    EXPECT_FALSE(ParseExecCredential(p, bad).ok()) << bad;
  }
  EXPECT_EQ(ParseRfc3339("2026-11-21T07:00:00+01:00"), ParseRfc3339("2026-11-21T06:00:00Z"));
  EXPECT_TRUE(ParseRfc3339("2026-11-21T06:00:00.123456Z").has_value());
}

}  // namespace
}  // namespace edl::kube
