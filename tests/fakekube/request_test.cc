// The socket-free pieces of the fake API server: request targets, watch
// filtering, pod-log options, base64 and certificates, malformed input
// included.
#include "tests/fakekube/server/request.h"

#include <gtest/gtest.h>
#include <openssl/pem.h>
#include <openssl/x509.h>
#include <openssl/x509v3.h>

#include "tests/fakekube/server/base64.h"
#include "tests/fakekube/server/certs.h"
#include "tests/fakekube/server/pod_log.h"
#include "tests/fakekube/server/watch_filter.h"

namespace edl::fakekube {
namespace {

TEST(ParseTarget, DecodesThePathAndTheQuery) {
  ParsedTarget t = ParseTarget(
      "/api/v1/namespaces/edl/pods?labelSelector=edl-job%3Djob1%2Cedl-role%3Dworker&limit=500&"
      "watch&limit=7&x=a+b&bad=%zz%4");
  EXPECT_EQ(t.path, "/api/v1/namespaces/edl/pods");
  EXPECT_EQ(QueryString(t, "labelSelector"), "edl-job=job1,edl-role=worker");
  EXPECT_EQ(QueryInt(t, "limit"), 500);  // the first value wins
  EXPECT_TRUE(QueryBool(t, "watch"));
  EXPECT_EQ(QueryString(t, "x"), "a b");
  EXPECT_EQ(QueryString(t, "bad"), "%zz%4");  // malformed escapes stay as sent
  EXPECT_FALSE(QueryBool(t, "absent"));
  EXPECT_EQ(QueryInt(ParseTarget("/?n=12x"), "n"), std::nullopt);
  EXPECT_EQ(QueryInt(ParseTarget("/?n=-"), "n"), std::nullopt);
  EXPECT_EQ(QueryInt(ParseTarget("/?n=99999999999999999999"), "n"), std::nullopt);
}

TEST(ParseTarget, ParsesBooleansLikeApimachinery) {
  for (const char* no : {"0", "false", "False", "FALSE"}) {
    EXPECT_FALSE(QueryBool(ParseTarget(std::string("/?w=") + no), "w")) << no;
  }
  for (const char* yes : {"1", "true", "True", "", "anything"}) {
    EXPECT_TRUE(QueryBool(ParseTarget(std::string("/?w=") + yes), "w")) << yes;
  }
}

TEST(ParseResourcePath, ResolvesNamespacedClusterAndGroupPaths) {
  auto pod = ParseResourcePath(ParseTarget("/api/v1/namespaces/edl/pods/w-0/status"));
  ASSERT_TRUE(pod);
  EXPECT_EQ(pod->resource->name, "pods");
  EXPECT_EQ(pod->ns, "edl");
  EXPECT_EQ(pod->name, "w-0");
  EXPECT_EQ(pod->subresource, "status");
  auto all = ParseResourcePath(ParseTarget("/api/v1/pods"));
  ASSERT_TRUE(all);
  EXPECT_EQ(all->ns, "");
  EXPECT_EQ(all->name, "");
  auto ns = ParseResourcePath(ParseTarget("/api/v1/namespaces/edl"));
  ASSERT_TRUE(ns);
  EXPECT_EQ(ns->resource->name, "namespaces");
  EXPECT_EQ(ns->name, "edl");
  auto pc = ParseResourcePath(ParseTarget("/apis/scheduling.k8s.io/v1/priorityclasses/high"));
  ASSERT_TRUE(pc);
  EXPECT_EQ(pc->resource->name, "priorityclasses");
  EXPECT_EQ(pc->name, "high");
  auto proxy = ParseResourcePath(
      ParseTarget("/api/v1/namespaces/edl/services/job1-master:8080/proxy/a/b%20c/?q=1"));
  ASSERT_TRUE(proxy);
  EXPECT_EQ(proxy->name, "job1-master:8080");
  EXPECT_EQ(proxy->proxy_path, "/a/b%20c/");
}

TEST(ParseResourcePath, RefusesPathsThatNameNoResource) {
  for (const char* bad :
       {"/", "/api", "/api/v2/pods", "/api/v1/widgets", "/api/v1/pods/x",
        "/api/v1/namespaces/edl/nodes", "/api/v1/namespaces/edl/pods/x/exec",
        "/api/v1/namespaces/edl/configmaps/x/status", "/api/v1/namespaces/edl/pods/x/log/more",
        "/apis/scheduling.k8s.io/v1/pods", "/apis/apps/v1/deployments"}) {
    EXPECT_FALSE(ParseResourcePath(ParseTarget(bad))) << bad;
  }
}

Json PodWithLabels(const std::string& name, const std::string& app) {
  return {{"kind", "Pod"},
          {"apiVersion", "v1"},
          {"metadata", {{"name", name}, {"namespace", "edl"}, {"labels", {{"app", app}}}}}};
}

TEST(WatchFilter, TurnsSelectionChangesIntoAddedAndDeleted) {
  auto labels = ParseLabelSelector("app=edl");
  ASSERT_TRUE(labels.ok());
  WatchFilter filter(*FindResource("pods"), "edl", *labels, {});
  Json in = PodWithLabels("p", "edl");
  Json out = PodWithLabels("p", "other");
  auto type = [&](const WatchEvent& e) {
    auto line = filter.Translate(e);
    return line ? Json::parse(*line)["type"].get<std::string>() : std::string("none");
  };
  EXPECT_EQ(type({"ADDED", "pods", in, 5, Json()}), "ADDED");
  EXPECT_EQ(type({"ADDED", "pods", out, 5, Json()}), "none");
  EXPECT_EQ(type({"ADDED", "configmaps", in, 5, Json()}), "none");
  EXPECT_EQ(type({"MODIFIED", "pods", in, 6, in}), "MODIFIED");
  EXPECT_EQ(type({"MODIFIED", "pods", in, 6, out}), "ADDED");
  EXPECT_EQ(type({"MODIFIED", "pods", out, 6, out}), "none");
  EXPECT_EQ(type({"DELETED", "pods", in, 7, Json()}), "DELETED");
  auto left = filter.Translate({"MODIFIED", "pods", out, 9, in});
  ASSERT_TRUE(left);
  Json deleted = Json::parse(*left);
  EXPECT_EQ(deleted["type"], "DELETED");
  EXPECT_EQ(deleted["object"]["metadata"]["labels"]["app"], "edl");
  EXPECT_EQ(deleted["object"]["metadata"]["resourceVersion"], "9");
  Json elsewhere = in;
  elsewhere["metadata"]["namespace"] = "default";
  EXPECT_EQ(type({"ADDED", "pods", elsewhere, 5, Json()}), "none");
}

TEST(WatchFilter, RendersOneJsonLinePerEventAndSkeletonBookmarks) {
  WatchFilter filter(*FindResource("pods"), "", nullptr, {});
  std::string added = filter.AddedLine({{"metadata", {{"name", "p"}}}});
  ASSERT_EQ(added.back(), '\n');
  EXPECT_EQ(added.find('\n'), added.size() - 1);
  Json event = Json::parse(added);
  EXPECT_EQ(event["object"]["kind"], "Pod");
  Json bookmark = Json::parse(filter.BookmarkLine(42));
  EXPECT_EQ(bookmark["type"], "BOOKMARK");
  EXPECT_EQ(bookmark["object"]["metadata"]["resourceVersion"], "42");
  EXPECT_TRUE(bookmark["object"]["metadata"]["creationTimestamp"].is_null());
  EXPECT_TRUE(bookmark["object"]["spec"]["containers"].is_null());
}

TEST(PodLog, TailLinesKeepsTheLastLines) {
  EXPECT_EQ(TailLines("a\nb\nc\n", 2), "b\nc\n");
  EXPECT_EQ(TailLines("a\nb\nc", 2), "b\nc");
  EXPECT_EQ(TailLines("a\nb\n", 10), "a\nb\n");
  EXPECT_EQ(TailLines("a\nb\n", 0), "");
  EXPECT_EQ(TailLines("a\nb\n", std::nullopt), "a\nb\n");
  EXPECT_EQ(TailLines("", 3), "");
}

TEST(PodLog, ChoosesAndChecksTheContainer) {
  Store store;
  Json pod = {
      {"metadata", {{"name", "two"}}},
      {"spec",
       {{"containers", {{{"name", "a"}, {"image", "i"}}, {{"name", "b"}, {"image", "i"}}}}}}};
  ASSERT_TRUE(store.Create("pods", "default", pod).ok());
  LogOptions none;
  auto ambiguous = PodForLog(store, "default", "two", none);
  ASSERT_FALSE(ambiguous.ok());
  EXPECT_EQ(ambiguous.error.message,
            "a container name must be specified for pod two, choose one of: [a b]");
  LogOptions wrong;
  wrong.container = "c";
  EXPECT_EQ(PodForLog(store, "default", "two", wrong).error.message,
            "container c is not valid for pod two");
  ASSERT_TRUE(
      store
          .Update("pods", "default", "two",
                  [](Json& p) {
                    p["status"]["containerStatuses"] = {
                        {{"name", "b"}, {"state", {{"waiting", {{"reason", "ErrImagePull"}}}}}}};
                  })
          .ok());
  LogOptions b;
  b.container = "b";
  EXPECT_EQ(PodForLog(store, "default", "two", b).error.message,
            "container \"b\" in pod \"two\" is waiting to start: ErrImagePull");
}

TEST(Base64, RoundTripsAndRefusesMalformedText) {
  for (const std::string& s :
       std::vector<std::string>{"", "f", "fo", "foo", "foob", std::string("\0\xff\x10", 3)}) {
    auto decoded = Base64Decode(Base64Encode(s));
    ASSERT_TRUE(decoded);
    EXPECT_EQ(*decoded, s);
  }
  EXPECT_EQ(Base64Encode("foob"), "Zm9vYg==");
  for (const char* bad : {"abc", "ab=c", "a===", "Zm9v!g==", "=AAA"}) {
    EXPECT_FALSE(Base64Decode(bad)) << bad;
  }
}

TEST(Certificates, TheServerCertificateIsSignedByTheCaForLoopback) {
  auto certs = GenerateServerCertificates({"10.96.0.1", "kubernetes.default.svc"});
  ASSERT_TRUE(certs.ok()) << certs.status().message();
  auto load = [](const std::string& pem) {
    BIO* bio = BIO_new_mem_buf(pem.data(), static_cast<int>(pem.size()));
    X509* cert = PEM_read_bio_X509(bio, nullptr, nullptr, nullptr);
    BIO_free(bio);
    return cert;
  };
  X509* ca = load(certs->ca_cert_pem);
  X509* server = load(certs->server_cert_pem);
  ASSERT_TRUE(ca && server);
  EVP_PKEY* ca_key = X509_get0_pubkey(ca);
  EXPECT_EQ(X509_verify(server, ca_key), 1);
  EXPECT_EQ(X509_check_ip_asc(server, "127.0.0.1", 0), 1);
  EXPECT_EQ(X509_check_ip_asc(server, "10.96.0.1", 0), 1);
  EXPECT_EQ(X509_check_host(server, "localhost", 0, 0, nullptr), 1);
  EXPECT_EQ(X509_check_host(server, "kubernetes.default.svc", 0, 0, nullptr), 1);
  EXPECT_NE(X509_check_host(server, "example.com", 0, 0, nullptr), 1);
  EXPECT_EQ(X509_check_ca(ca), 1);
  X509_free(ca);
  X509_free(server);
  EXPECT_FALSE(WriteCertificates(*certs, "/proc/no-such-dir/certs").ok());
}

}  // namespace
}  // namespace edl::fakekube
