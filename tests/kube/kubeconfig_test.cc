// LoadKubeconfig / LoadInClusterConfig over real files in a temp dir.
#include <gtest/gtest.h>

#include <cstdlib>
#include <optional>

#include "kube/base64.h"
#include "kube/config.h"
#include "tests/kube/test_api_server.h"

namespace edl::kube {
namespace {

using testing::TempDir;

constexpr char kCaPem[] = "-----BEGIN CERTIFICATE-----\nMIIBfake\n-----END CERTIFICATE-----\n";

std::string TwoContexts() {
  return R"(apiVersion: v1
kind: Config
current-context: prod
contexts:
- name: prod
  context: {cluster: c1, user: u1, namespace: edl}
- name: dev
  context: {cluster: c2, user: u2}
clusters:
- name: c1
  cluster:
    server: https://10.0.0.1:6443
    certificate-authority-data: )" +
         Base64Encode(kCaPem) + R"(
- name: c2
  cluster:
    server: https://dev.example:443/prefix
    insecure-skip-tls-verify: true
    tls-server-name: kubernetes.default.svc
users:
- name: u1
  user: {token: tok-1}
- name: u2
  user: {token: tok-2}
)";
}

TEST(Kubeconfig, UsesTheCurrentContext) {
  TempDir dir;
  std::string path = dir.Write("config", TwoContexts());
  Result<ClusterConfig> c = LoadKubeconfig(path, "");
  ASSERT_TRUE(c.ok()) << c.status().message();
  EXPECT_EQ(c->server, "https://10.0.0.1:6443");
  EXPECT_EQ(c->ca_pem, kCaPem);
  EXPECT_EQ(c->token, "tok-1");
  EXPECT_EQ(c->namespace_name, "edl");
  EXPECT_FALSE(c->insecure_skip_tls_verify);
  EXPECT_EQ(c->description, "kubeconfig " + path + " context prod");
}

TEST(Kubeconfig, ContextFlagOverridesCurrentContext) {
  TempDir dir;
  Result<ClusterConfig> c = LoadKubeconfig(dir.Write("config", TwoContexts()), "dev");
  ASSERT_TRUE(c.ok()) << c.status().message();
  EXPECT_EQ(c->server, "https://dev.example:443/prefix");
  EXPECT_TRUE(c->insecure_skip_tls_verify);
  EXPECT_EQ(c->tls_server_name, "kubernetes.default.svc");
  EXPECT_EQ(c->token, "tok-2");
  EXPECT_EQ(c->namespace_name, "default");  // context without namespace
}

TEST(Kubeconfig, FirstFileThatSetsAValueWins) {
  TempDir dir;
  std::string a = dir.Write("a", R"(
current-context: from-a
clusters:
- name: shared
  cluster: {server: https://a.example}
users:
- name: u
  user: {token: token-a}
)");
  std::string b = dir.Write("b", R"(
current-context: from-b
contexts:
- name: from-a
  context: {cluster: shared, user: u, namespace: ns-b}
- name: from-b
  context: {cluster: shared, user: u}
clusters:
- name: shared
  cluster: {server: https://b.example}
users:
- name: u
  user: {token: token-b}
)");
  Result<ClusterConfig> c = LoadKubeconfig(a + ":" + b, "");
  ASSERT_TRUE(c.ok()) << c.status().message();
  EXPECT_EQ(c->server, "https://a.example");  // cluster "shared" from a
  EXPECT_EQ(c->token, "token-a");
  EXPECT_EQ(c->namespace_name, "ns-b");  // the context only b has
  EXPECT_EQ(c->description, "kubeconfig " + a + ":" + b + " context from-a");
}

TEST(Kubeconfig, SkipsMissingFilesInAListButNotASingleMissingFile) {
  TempDir dir;
  std::string real = dir.Write("config", TwoContexts());
  Result<ClusterConfig> c = LoadKubeconfig(dir.path() + "/nope:" + real, "");
  ASSERT_TRUE(c.ok()) << c.status().message();
  Result<ClusterConfig> missing = LoadKubeconfig(dir.path() + "/nope", "");
  ASSERT_FALSE(missing.ok());
  EXPECT_NE(missing.status().message().find(dir.path() + "/nope"), std::string::npos)
      << missing.status().message();
}

TEST(Kubeconfig, ResolvesRelativePathsAgainstTheFilesDirectory) {
  TempDir dir;
  dir.Write("sub/ca.crt", kCaPem);
  dir.Write("sub/token", "file-token\n");
  dir.Write("sub/client.crt", "CERT PEM");
  dir.Write("sub/client.key", "KEY PEM");
  std::string path = dir.Write("sub/config", R"(
current-context: c
contexts: [{name: c, context: {cluster: k, user: u}}]
clusters: [{name: k, cluster: {server: "https://127.0.0.1:1", certificate-authority: ca.crt}}]
users: [{name: u, user: {tokenFile: token, client-certificate: client.crt, client-key: client.key}}]
)");
  Result<ClusterConfig> c = LoadKubeconfig(path, "");
  ASSERT_TRUE(c.ok()) << c.status().message();
  EXPECT_EQ(c->ca_pem, kCaPem);
  EXPECT_EQ(c->token_file, dir.path() + "/sub/token");
  EXPECT_EQ(c->token, "file-token");
  EXPECT_EQ(c->client_cert_pem, "CERT PEM");
  EXPECT_EQ(c->client_key_pem, "KEY PEM");
}

TEST(Kubeconfig, DataFieldsBeatFilePaths) {
  TempDir dir;
  std::string path = dir.Write("config", R"(
current-context: c
contexts: [{name: c, context: {cluster: k, user: u}}]
clusters: [{name: k, cluster: {server: "https://h", certificate-authority: /does/not/exist,
            certificate-authority-data: )" + Base64Encode(kCaPem) +
                                             R"(}}]
users: [{name: u, user: {client-certificate-data: )" +
                                             Base64Encode("C") + R"(, client-key-data: )" +
                                             Base64Encode("K") + R"(}}]
)");
  Result<ClusterConfig> c = LoadKubeconfig(path, "");
  ASSERT_TRUE(c.ok()) << c.status().message();
  EXPECT_EQ(c->ca_pem, kCaPem);
  EXPECT_EQ(c->client_cert_pem, "C");
  EXPECT_EQ(c->client_key_pem, "K");
  EXPECT_TRUE(c->token.empty());
}

TEST(Kubeconfig, TokenBeatsTokenFile) {
  TempDir dir;
  std::string path = dir.Write("config", R"(
current-context: c
contexts: [{name: c, context: {cluster: k, user: u}}]
clusters: [{name: k, cluster: {server: "https://h"}}]
users: [{name: u, user: {token: inline, tokenFile: /does/not/exist}}]
)");
  Result<ClusterConfig> c = LoadKubeconfig(path, "");
  ASSERT_TRUE(c.ok()) << c.status().message();
  EXPECT_EQ(c->token, "inline");
  EXPECT_TRUE(c->token_file.empty());
}

TEST(Kubeconfig, ReadsAnExecPlugin) {
  TempDir dir;
  std::string path = dir.Write("config", R"(
current-context: c
contexts: [{name: c, context: {cluster: k, user: u}}]
clusters: [{name: k, cluster: {server: "https://h"}}]
users:
- name: u
  user:
    exec:
      apiVersion: client.authentication.k8s.io/v1
      command: gke-gcloud-auth-plugin
      args: [--verbose, "1"]
      env: [{name: A, value: b}]
      installHint: Install it with gcloud components install.
      interactiveMode: Never
)");
  Result<ClusterConfig> c = LoadKubeconfig(path, "");
  ASSERT_TRUE(c.ok()) << c.status().message();
  ASSERT_TRUE(c->exec.has_value());
  EXPECT_EQ(c->exec->command, "gke-gcloud-auth-plugin");
  EXPECT_EQ(c->exec->args, (std::vector<std::string>{"--verbose", "1"}));
  ASSERT_EQ(c->exec->env.size(), 1u);
  EXPECT_EQ(c->exec->env[0], (std::pair<std::string, std::string>{"A", "b"}));
  EXPECT_EQ(c->exec->install_hint, "Install it with gcloud components install.");
}

// Loads `yaml` and returns the error message (empty if it loaded).
std::string ErrorOf(const TempDir& dir, const std::string& yaml, const std::string& context = "") {
  Result<ClusterConfig> c = LoadKubeconfig(dir.Write("bad", yaml), context);
  return c.ok() ? "" : c.status().message();
}

TEST(Kubeconfig, MalformedYamlNamesTheFileAndLine) {
  TempDir dir;
  std::string m = ErrorOf(dir, "clusters:\n- name: [unclosed\n");
  EXPECT_NE(m.find("kubeconfig " + dir.path() + "/bad: not valid YAML: line"), std::string::npos)
      << m;
}

TEST(Kubeconfig, MissingContextIsNamed) {
  TempDir dir;
  std::string m = ErrorOf(dir, TwoContexts(), "staging");
  EXPECT_NE(m.find("context \"staging\" not found (contexts: dev, prod)"), std::string::npos) << m;
  std::string none = ErrorOf(dir, "clusters: []\n");
  EXPECT_NE(none.find("current-context is not set"), std::string::npos) << none;
}

TEST(Kubeconfig, MissingClusterNamesTheContextField) {
  TempDir dir;
  std::string m = ErrorOf(dir, R"(
current-context: c
contexts: [{name: c, context: {cluster: gone, user: u}}]
)");
  EXPECT_NE(m.find(dir.path() + "/bad: contexts[0].context.cluster: cluster \"gone\" not found"),
            std::string::npos)
      << m;
}

TEST(Kubeconfig, BadFieldsAreNamedWithTheirPath) {
  TempDir dir;
  const std::string head = R"(
current-context: c
contexts: [{name: c, context: {cluster: k, user: u}}]
)";
  std::string not_b64 = ErrorOf(dir, head + R"(
clusters: [{name: k, cluster: {server: "https://h"}}]
users: [{name: u, user: {client-certificate-data: Zm9v, client-key-data: "!!notbase64"}}]
)");
  EXPECT_NE(
      not_b64.find("kubeconfig " + dir.path() + "/bad: users[0].user.client-key-data: not base64"),
      std::string::npos)
      << not_b64;
  std::string no_server = ErrorOf(dir, head + "clusters: [{name: k, cluster: {}}]\n");
  EXPECT_NE(no_server.find("clusters[0].cluster.server: missing"), std::string::npos) << no_server;
  std::string bad_bool = ErrorOf(dir, head + R"(
clusters: [{name: k, cluster: {server: "https://h", insecure-skip-tls-verify: perhaps}}]
)");
  EXPECT_NE(bad_bool.find("clusters[0].cluster.insecure-skip-tls-verify: must "
                          "be true or false"),
            std::string::npos)
      << bad_bool;
  std::string both = ErrorOf(dir, head + R"(
clusters: [{name: k, cluster: {server: "https://h", insecure-skip-tls-verify: true,
            certificate-authority-data: )" +
                                      Base64Encode(kCaPem) + "}}]\n");
  EXPECT_NE(both.find("insecure-skip-tls-verify: cannot be true together"), std::string::npos)
      << both;
  std::string missing_ca = ErrorOf(dir, head + R"(
clusters: [{name: k, cluster: {server: "https://h", certificate-authority: nope.crt}}]
)");
  EXPECT_NE(missing_ca.find("clusters[0].cluster.certificate-authority: cannot read " + dir.path() +
                            "/nope.crt"),
            std::string::npos)
      << missing_ca;
  std::string not_a_list = ErrorOf(dir, head + "clusters: {k: 1}\n");
  EXPECT_NE(not_a_list.find("clusters: must be a list"), std::string::npos) << not_a_list;
  std::string scalar_root = ErrorOf(dir, "just a string\n");
  EXPECT_NE(scalar_root.find("must be a YAML mapping"), std::string::npos) << scalar_root;
  std::string bad_exec = ErrorOf(dir, head + R"(
clusters: [{name: k, cluster: {server: "https://h"}}]
users: [{name: u, user: {exec: {args: [x]}}}]
)");
  EXPECT_NE(bad_exec.find("users[0].user.exec.command: missing"), std::string::npos) << bad_exec;
}

// Sets an environment variable for one test and restores it afterwards.
class ScopedEnv {
 public:
  ScopedEnv(const char* name, const std::string& value) : name_(name) {
    const char* old = getenv(name);
    if (old != nullptr) old_ = old;
    setenv(name, value.c_str(), 1);
  }
  ~ScopedEnv() {
    if (old_) {
      setenv(name_, old_->c_str(), 1);
    } else {
      unsetenv(name_);
    }
  }

 private:
  const char* name_;
  std::optional<std::string> old_;
};

TEST(LoadConfig, FlagBeatsKubeconfigEnvWhichBeatsHome) {
  TempDir dir;
  auto one = [&](const std::string& name, const std::string& server) {
    return dir.Write(name,
                     "current-context: c\ncontexts: [{name: c, context: {cluster: k}}]\n"
                     "clusters: [{name: k, cluster: {server: \"" +
                         server + "\"}}]\n");
  };
  std::string flag = one("flag", "https://flag");
  std::string env = one("env", "https://env");
  one("home/.kube/config", "https://home");
  ScopedEnv home("HOME", dir.path() + "/home");
  ScopedEnv host("KUBERNETES_SERVICE_HOST", "");
  {
    ScopedEnv kubeconfig("KUBECONFIG", env);
    Result<ClusterConfig> c = LoadConfig(flag, "");
    ASSERT_TRUE(c.ok()) << c.status().message();
    EXPECT_EQ(c->server, "https://flag");
    c = LoadConfig("", "");
    ASSERT_TRUE(c.ok()) << c.status().message();
    EXPECT_EQ(c->server, "https://env");
  }
  ScopedEnv kubeconfig("KUBECONFIG", "");
  Result<ClusterConfig> c = LoadConfig("", "");
  ASSERT_TRUE(c.ok()) << c.status().message();
  EXPECT_EQ(c->server, "https://home");
  ScopedEnv nowhere("HOME", dir.path() + "/nowhere");
  Result<ClusterConfig> none = LoadConfig("", "");
  ASSERT_FALSE(none.ok());
  EXPECT_NE(none.status().message().find("pass --kubeconfig"), std::string::npos)
      << none.status().message();
}

TEST(InClusterConfig, ReadsEnvAndServiceAccountFiles) {
  TempDir dir;
  InClusterEnv env;
  env.service_host = "10.96.0.1";
  env.service_port = "443";
  env.token_path = dir.Write("token", "jwt-1\n");
  env.ca_path = dir.Write("ca.crt", kCaPem);
  env.namespace_path = dir.Write("namespace", "edl-ns\n");
  EXPECT_TRUE(InClusterPossible(env));
  Result<ClusterConfig> c = LoadInClusterConfig(env);
  ASSERT_TRUE(c.ok()) << c.status().message();
  EXPECT_EQ(c->server, "https://10.96.0.1:443");
  EXPECT_EQ(c->token, "jwt-1");
  EXPECT_EQ(c->token_file, env.token_path);
  EXPECT_EQ(c->ca_pem, kCaPem);
  EXPECT_EQ(c->namespace_name, "edl-ns");
  EXPECT_EQ(c->description, "in-cluster");
}

TEST(InClusterConfig, PodNamespaceEnvBeatsTheFile) {
  TempDir dir;
  InClusterEnv env;
  env.service_host = "10.96.0.1";
  env.service_port = "443";
  env.pod_namespace = "from-env";
  env.token_path = dir.Write("token", "t");
  env.ca_path = dir.path() + "/missing-ca";  // only logged
  env.namespace_path = dir.Write("namespace", "from-file");
  Result<ClusterConfig> c = LoadInClusterConfig(env);
  ASSERT_TRUE(c.ok()) << c.status().message();
  EXPECT_EQ(c->namespace_name, "from-env");
  EXPECT_TRUE(c->ca_pem.empty());
}

TEST(InClusterConfig, DefaultsToTheDefaultNamespace) {
  TempDir dir;
  InClusterEnv env;
  env.service_host = "10.96.0.1";
  env.service_port = "443";
  env.token_path = dir.Write("token", "t");
  env.ca_path = dir.Write("ca.crt", kCaPem);
  env.namespace_path = dir.path() + "/none";
  Result<ClusterConfig> c = LoadInClusterConfig(env);
  ASSERT_TRUE(c.ok()) << c.status().message();
  EXPECT_EQ(c->namespace_name, "default");
}

TEST(InClusterConfig, MissingEnvMeansNotInCluster) {
  TempDir dir;
  InClusterEnv env;
  env.service_host = "10.96.0.1";  // no port
  env.token_path = dir.Write("token", "t");
  EXPECT_FALSE(InClusterPossible(env));
  Result<ClusterConfig> c = LoadInClusterConfig(env);
  ASSERT_FALSE(c.ok());
  EXPECT_EQ(c.status().code(), StatusCode::kFailedPrecondition);
  EXPECT_NE(c.status().message().find("not in cluster"), std::string::npos);
}

TEST(InClusterConfig, NotPossibleWithoutATokenFileOrWithADirectory) {
  TempDir dir;
  InClusterEnv env;
  env.service_host = "10.96.0.1";
  env.service_port = "443";
  env.token_path = dir.path() + "/none";
  EXPECT_FALSE(InClusterPossible(env));
  EXPECT_FALSE(LoadInClusterConfig(env).ok());
  env.token_path = dir.path();
  EXPECT_FALSE(InClusterPossible(env));
}

TEST(InClusterConfig, Ipv6HostGetsBrackets) {
  TempDir dir;
  InClusterEnv env;
  env.service_host = "fd00::1";
  env.service_port = "6443";
  env.token_path = dir.Write("token", "t");
  env.ca_path = dir.Write("ca.crt", kCaPem);
  Result<ClusterConfig> c = LoadInClusterConfig(env);
  ASSERT_TRUE(c.ok()) << c.status().message();
  EXPECT_EQ(c->server, "https://[fd00::1]:6443");
}

TEST(Base64, DecodesWhatItEncodesAndRejectsGarbage) {
  for (std::string s : {"", "a", "ab", "abc", "abcd", "\xff\x00\x10 bytes"}) {
    EXPECT_EQ(Base64Decode(Base64Encode(s)), s);
  }
  EXPECT_EQ(Base64Decode("Zm9v\nYmFy\n"), "foobar");
  EXPECT_EQ(Base64Decode("Zm8"), "fo");  // unpadded
  EXPECT_FALSE(Base64Decode("Zm9v!").has_value());
  EXPECT_FALSE(Base64Decode("Z").has_value());
  EXPECT_FALSE(Base64Decode("Zm==Zm9v").has_value());
}

}  // namespace
}  // namespace edl::kube
