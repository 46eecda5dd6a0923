// Client over real TLS sockets: verification against the CA (IP SAN), wrong
// CA and wrong name refused, tls_server_name, SNI/ALPN, client certificates,
// and no credentials over plain http.
#include <gtest/gtest.h>

#include "kube/client.h"
#include "tests/kube/test_api_server.h"
#include "tests/kube/test_pki.h"

namespace edl::kube {
namespace {

using testing::CertAndKey;
using testing::IssueCert;
using testing::MakeCa;
using testing::SeenRequest;
using testing::ServerConnection;
using testing::TestApiServer;

void AnswerPod(const SeenRequest& r, ServerConnection& c) {
  c.Reply(200, R"({"kind":"Pod","apiVersion":"v1","metadata":{"name":"p","uid":"u1"}})");
}

struct Pki {
  CertAndKey ca = MakeCa("test-ca");
  CertAndKey server = IssueCert(ca, "kube-apiserver", {"127.0.0.1"}, {"localhost"});
};

std::unique_ptr<Client> MakeClient(ClusterConfig config) {
  config.description = "test config";
  Result<std::unique_ptr<Client>> c = Client::Create(std::move(config));
  EDL_CHECK(c.ok()) << c.status().message();
  return std::move(*c);
}

TEST(ClientTls, VerifiesTheServerAgainstTheCaBundle) {
  Pki pki;
  TestApiServer server(AnswerPod, TestApiServer::Tls{pki.server, ""});
  ClusterConfig config;
  config.server = server.url();
  config.ca_pem = pki.ca.cert_pem;
  config.token = "tok-123";
  auto client = MakeClient(config);
  Result<Json> pod = client->Get(Pods(), "edl", "p");
  ASSERT_TRUE(pod.ok()) << pod.status().message();
  EXPECT_EQ((*pod)["metadata"]["uid"], "u1");
  std::vector<SeenRequest> seen = server.requests();
  ASSERT_EQ(seen.size(), 1u);
  EXPECT_EQ(seen[0].method, "GET");
  EXPECT_EQ(seen[0].target, "/api/v1/namespaces/edl/pods/p");
  EXPECT_EQ(seen[0].Header("authorization"), "Bearer tok-123");
  EXPECT_EQ(seen[0].Header("accept"), "application/json");
  EXPECT_EQ(seen[0].sni, "");  // never an IP literal in SNI (RFC 6066)
  EXPECT_EQ(seen[0].alpn_offered, "http/1.1");
  // Later requests reuse the TLS connection.
  ASSERT_TRUE(client->Get(Pods(), "edl", "p").ok());
  ASSERT_TRUE(client->Get(Pods(), "edl", "p").ok());
  EXPECT_EQ(server.connections_accepted(), 1);
}

TEST(ClientTls, RefusesAServerCertificateFromAnotherCa) {
  Pki pki;
  CertAndKey other_ca = MakeCa("someone-else");
  TestApiServer server(AnswerPod, TestApiServer::Tls{pki.server, ""});
  ClusterConfig config;
  config.server = server.url();
  config.ca_pem = other_ca.cert_pem;
  config.token = "secret-token";
  auto client = MakeClient(config);
  Result<Json> pod = client->Get(Pods(), "edl", "p");
  ASSERT_FALSE(pod.ok());
  EXPECT_EQ(pod.status().code(), StatusCode::kUnavailable);
  EXPECT_NE(pod.status().message().find("kube: GET /api/v1/namespaces/edl/pods/p: "),
            std::string::npos)
      << pod.status().message();
  EXPECT_NE(pod.status().message().find("certificate"), std::string::npos)
      << pod.status().message();
  EXPECT_TRUE(server.requests().empty());  // the token never left
  EXPECT_TRUE(testing::WaitFor([&] { return server.failed_handshakes() >= 1; }));
}

TEST(ClientTls, RefusesACertificateForAnotherNameUnlessTlsServerNameSaysSo) {
  Pki pki;
  CertAndKey dns_only = IssueCert(pki.ca, "apiserver", {}, {"kubernetes.default.svc"});
  TestApiServer server(AnswerPod, TestApiServer::Tls{dns_only, ""});
  ClusterConfig config;
  config.server = server.url();
  config.ca_pem = pki.ca.cert_pem;
  Result<Json> refused = MakeClient(config)->Get(Pods(), "edl", "p");
  ASSERT_FALSE(refused.ok());
  EXPECT_EQ(refused.status().code(), StatusCode::kUnavailable);

  config.tls_server_name = "kubernetes.default.svc";
  Result<Json> pod = MakeClient(config)->Get(Pods(), "edl", "p");
  ASSERT_TRUE(pod.ok()) << pod.status().message();
  std::vector<SeenRequest> seen = server.requests();
  ASSERT_EQ(seen.size(), 1u);
  EXPECT_EQ(seen[0].sni, "kubernetes.default.svc");
  EXPECT_EQ(seen[0].Header("host"), "127.0.0.1:" + std::to_string(server.port()));
}

TEST(ClientTls, InsecureSkipTlsVerifyAcceptsAnyCertificate) {
  Pki pki;
  CertAndKey other_ca = MakeCa("unknown");
  CertAndKey wrong = IssueCert(other_ca, "x", {"10.9.9.9"}, {});
  TestApiServer server(AnswerPod, TestApiServer::Tls{wrong, ""});
  ClusterConfig config;
  config.server = server.url();
  config.insecure_skip_tls_verify = true;
  Result<Json> pod = MakeClient(config)->Get(Pods(), "edl", "p");
  EXPECT_TRUE(pod.ok()) << pod.status().message();
}

TEST(ClientTls, PresentsTheClientCertificate) {
  Pki pki;
  CertAndKey user = IssueCert(pki.ca, "edl-user", {}, {}, /*client=*/true);
  TestApiServer server(AnswerPod, TestApiServer::Tls{pki.server, pki.ca.cert_pem});
  ClusterConfig config;
  config.server = server.url();
  config.ca_pem = pki.ca.cert_pem;
  Result<Json> anonymous = MakeClient(config)->Get(Pods(), "edl", "p");
  EXPECT_FALSE(anonymous.ok());

  config.client_cert_pem = user.cert_pem;
  config.client_key_pem = user.key_pem;
  Result<Json> pod = MakeClient(config)->Get(Pods(), "edl", "p");
  ASSERT_TRUE(pod.ok()) << pod.status().message();
  std::vector<SeenRequest> seen = server.requests();
  ASSERT_EQ(seen.size(), 1u);
  EXPECT_EQ(seen[0].client_cert_cn, "edl-user");
}

TEST(ClientTls, SendsNoCredentialsOverPlainHttp) {
  TestApiServer server(AnswerPod);
  ClusterConfig config;
  config.server = server.url();
  config.token = "must-not-leak";
  Result<Json> pod = MakeClient(config)->Get(Pods(), "edl", "p");
  ASSERT_TRUE(pod.ok()) << pod.status().message();
  std::vector<SeenRequest> seen = server.requests();
  ASSERT_EQ(seen.size(), 1u);
  EXPECT_EQ(seen[0].Header("authorization"), "");
}

TEST(ClientTls, RejectsBadPemAndBadServerUrlsAtCreate) {
  ClusterConfig config;
  config.description = "kubeconfig /k context c";
  config.server = "https://127.0.0.1:6443";
  config.ca_pem = "not a pem";
  Result<std::unique_ptr<Client>> bad_ca = Client::Create(config);
  ASSERT_FALSE(bad_ca.ok());
  EXPECT_NE(bad_ca.status().message().find("kubeconfig /k context c"), std::string::npos)
      << bad_ca.status().message();
  config.ca_pem = "";
  config.client_cert_pem = "-----BEGIN CERTIFICATE-----\nAAAA\n-----END CERTIFICATE-----\n";
  config.client_key_pem = "junk";
  EXPECT_FALSE(Client::Create(config).ok());
  for (const char* url :
       {"ftp://h", "https://", "https://fd00::1:443", "https://h:99999", "https://[::1"}) {
    ClusterConfig c;
    c.server = url;
    Result<std::unique_ptr<Client>> made = Client::Create(c);
    EXPECT_FALSE(made.ok()) << url;
  }
  ClusterConfig prefixed;
  prefixed.server = "http://[::1]:8080/some/prefix/";
  EXPECT_TRUE(Client::Create(prefixed).ok());
}

}  // namespace
}  // namespace edl::kube
