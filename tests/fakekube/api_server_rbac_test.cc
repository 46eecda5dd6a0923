// Identities, RBAC and the audit log of the fake API server over HTTPS: a
// pod's service-account token authenticates as its account (a forged one
// not at all), users with static tokens, Roles and RoleBindings enforced
// with kube-apiserver's 403 messages, and every request recorded as
// Kubernetes names it. And scripts/k8s/rbac.yaml loaded into it holds the
// master to exactly its Role.
#include <gtest/gtest.h>

#include "tests/fakekube/api_server_fixture.h"
#include "tests/fakekube/rbac_grants.h"
#include "tests/fakekube/server/identity.h"
#include "tests/fakekube/server/pod_volumes.h"

namespace edl::fakekube {
namespace {

using testing::ApiServerTest;
using testing::HttpResult;
using testing::Request;

constexpr char kKey[] = "service-account-key";
constexpr char kMaster[] = "system:serviceaccount:edl:edl-master";
constexpr char kPods[] = "/api/v1/namespaces/edl/pods";

class ApiServerRbacTest : public ApiServerTest {
 protected:
  void SetUp() override { StartRbacServer(true); }

  void StartRbacServer(bool rbac) {
    ApiServer::Options options;
    options.service_account_key = kKey;
    options.user_tokens = {{"jane-token", "jane"}};
    options.rbac = rbac;
    StartServer(options);
  }

  // A request with `token` as the bearer token.
  HttpResult SendAs(const std::string& token, const std::string& method, const std::string& target,
                    const std::string& body = "", const std::string& type = "application/json") {
    testing::ClientOptions options = client();
    options.authorization = "Bearer " + token;
    return Request(options, method, target, body, type);
  }
  HttpResult SendAsMaster(const std::string& method, const std::string& target,
                          const std::string& body = "",
                          const std::string& type = "application/json") {
    return SendAs(ServiceAccountToken(kKey, "edl", "edl-master"), method, target, body, type);
  }

  void Create(const std::string& collection, const Json& object) {
    auto r = Send("POST", collection, object.dump());
    ASSERT_EQ(r.status, 201) << r.body;
  }
  // Role `name` in namespace edl with `rules`, bound to `subject`.
  void Grant(const std::string& name, const Json& rules, const Json& subject) {
    Create("/apis/rbac.authorization.k8s.io/v1/namespaces/edl/roles",
           {{"apiVersion", "rbac.authorization.k8s.io/v1"},
            {"kind", "Role"},
            {"metadata", {{"name", name}}},
            {"rules", rules}});
    Create("/apis/rbac.authorization.k8s.io/v1/namespaces/edl/rolebindings",
           {{"apiVersion", "rbac.authorization.k8s.io/v1"},
            {"kind", "RoleBinding"},
            {"metadata", {{"name", name}}},
            {"subjects", Json::array({subject})},
            {"roleRef",
             {{"apiGroup", "rbac.authorization.k8s.io"}, {"kind", "Role"}, {"name", name}}}});
  }
  static Json MasterSubject() {
    return {{"kind", "ServiceAccount"}, {"name", "edl-master"}, {"namespace", "edl"}};
  }
  void CreatePodInEdl(const std::string& name) { Create(kPods, Pod(name)); }
};

TEST_F(ApiServerRbacTest, AServiceAccountTokenAuthenticatesAsItsAccountAndAForgedOneNot) {
  // Authenticated (but not authorized: no RoleBinding yet).
  EXPECT_EQ(SendAsMaster("GET", kPods).status, 403);
  std::string forged = ServiceAccountToken(kKey, "edl", "edl-master");
  forged.replace(forged.find("edl-master"), 10, "edl-admins");
  EXPECT_EQ(SendAs(forged, "GET", kPods).status, 401);
  EXPECT_EQ(SendAs(ServiceAccountToken("another key", "edl", "edl-master"), "GET", kPods).status,
            401);
  EXPECT_EQ(SendAs("nope", "GET", kPods).status, 401);
  auto audit = Send("GET", "/debug/fakekube/audit?user=" + std::string(kMaster)).json();
  ASSERT_EQ(audit["items"].size(), 1u) << audit.dump();
  const Json& event = audit["items"][0];
  EXPECT_EQ(event["user"]["groups"],
            Json({"system:serviceaccounts", "system:serviceaccounts:edl", "system:authenticated"}));
  EXPECT_EQ(event["responseStatus"]["code"], 403);
}

TEST_F(ApiServerRbacTest, AServiceAccountMayDoWhatItsRoleGrantsAndNothingElse) {
  Grant("edl-master",
        {{{"apiGroups", {""}},
          {"resources", {"pods"}},
          {"verbs", {"get", "list", "watch", "create", "delete"}}}},
        MasterSubject());
  EXPECT_EQ(SendAsMaster("GET", kPods).status, 200);
  ASSERT_EQ(SendAsMaster("POST", kPods, Pod("w-0").dump()).status, 201);

  auto patch = SendAsMaster("PATCH", std::string(kPods) + "/w-0", R"({"metadata":{}})",
                            "application/merge-patch+json");
  EXPECT_EQ(patch.status, 403);
  EXPECT_EQ(patch.json()["reason"], "Forbidden");
  EXPECT_EQ(patch.json()["message"],
            "pods \"w-0\" is forbidden: User \"system:serviceaccount:edl:edl-master\" cannot "
            "patch resource \"pods\" in API group \"\" in the namespace \"edl\"");
  EXPECT_EQ(patch.json()["details"], Json({{"name", "w-0"}, {"kind", "pods"}}));
  EXPECT_EQ(SendAsMaster("GET", std::string(kPods) + "/w-0/log").json()["message"],
            "pods \"w-0\" is forbidden: User \"system:serviceaccount:edl:edl-master\" cannot get "
            "resource \"pods/log\" in API group \"\" in the namespace \"edl\"");
  EXPECT_EQ(SendAsMaster("GET", "/api/v1/namespaces/default/pods").json()["message"],
            "pods is forbidden: User \"system:serviceaccount:edl:edl-master\" cannot list "
            "resource \"pods\" in API group \"\" in the namespace \"default\"");
  EXPECT_EQ(SendAsMaster("GET", "/api/v1/nodes").json()["message"],
            "nodes is forbidden: User \"system:serviceaccount:edl:edl-master\" cannot list "
            "resource \"nodes\" in API group \"\" at the cluster scope");
  auto jobs = SendAsMaster("GET", "/apis/batch/v1/namespaces/edl/jobs");
  EXPECT_EQ(jobs.json()["message"],
            "jobs.batch is forbidden: User \"system:serviceaccount:edl:edl-master\" cannot list "
            "resource \"jobs\" in API group \"batch\" in the namespace \"edl\"");
  EXPECT_EQ(jobs.json()["details"], Json({{"group", "batch"}, {"kind", "jobs"}}));
  // Discovery is everyone's; the test hooks are the admin's.
  EXPECT_EQ(SendAsMaster("GET", "/api/v1").status, 200);
  EXPECT_EQ(SendAsMaster("GET", "/apis/batch/v1").status, 200);
  EXPECT_EQ(SendAsMaster("GET", "/debug/fakekube/state").json()["message"],
            "forbidden: User \"system:serviceaccount:edl:edl-master\" cannot get path "
            "\"/debug/fakekube/state\"");
  // The admin is not held to any Role.
  EXPECT_EQ(Send("PATCH", std::string(kPods) + "/w-0", R"({"metadata":{}})",
                 "application/merge-patch+json")
                .status,
            200);
  EXPECT_EQ(SendAsMaster("DELETE", std::string(kPods) + "/w-0").status, 200);
}

TEST_F(ApiServerRbacTest, ResourceNamesNarrowARuleAndSubresourceWildcardsWidenIt) {
  CreatePodInEdl("w-0");
  Grant("state",
        {{{"apiGroups", {""}},
          {"resources", {"configmaps"}},
          {"resourceNames", {"j-master-state"}},
          {"verbs", {"get"}}},
         {{"apiGroups", {""}}, {"resources", {"*/log"}}, {"verbs", {"get"}}}},
        {{"kind", "Group"},
         {"name", "system:serviceaccounts:edl"},
         {"apiGroup", "rbac.authorization.k8s.io"}});
  // Allowed, and not there.
  EXPECT_EQ(SendAsMaster("GET", "/api/v1/namespaces/edl/configmaps/j-master-state").status, 404);
  EXPECT_EQ(SendAsMaster("GET", "/api/v1/namespaces/edl/configmaps/j-config").status, 403);
  EXPECT_EQ(SendAsMaster("GET", "/api/v1/namespaces/edl/configmaps").status, 403);
  // Allowed, and the container has not started.
  EXPECT_EQ(SendAsMaster("GET", std::string(kPods) + "/w-0/log").status, 400);
  EXPECT_EQ(SendAsMaster("GET", std::string(kPods) + "/w-0").status, 403);
}

TEST_F(ApiServerRbacTest, AUserWithAStaticTokenIsHeldToItsRoleBindings) {
  EXPECT_EQ(SendAs("jane-token", "GET", "/apis/batch/v1/namespaces/edl/jobs").status, 403);
  Grant("edl-user", {{{"apiGroups", {"batch"}}, {"resources", {"jobs"}}, {"verbs", {"list"}}}},
        {{"kind", "User"}, {"name", "jane"}, {"apiGroup", "rbac.authorization.k8s.io"}});
  EXPECT_EQ(SendAs("jane-token", "GET", "/apis/batch/v1/namespaces/edl/jobs").status, 200);
  EXPECT_EQ(SendAs("jane-token", "GET", "/apis/batch/v1/namespaces/edl/jobs").status, 200);
  EXPECT_EQ(
      SendAs("jane-token", "DELETE", "/apis/batch/v1/namespaces/edl/jobs/j").json()["message"],
      "jobs.batch \"j\" is forbidden: User \"jane\" cannot delete resource \"jobs\" in API "
      "group \"batch\" in the namespace \"edl\"");
  // The service account is not jane.
  EXPECT_EQ(SendAsMaster("GET", "/apis/batch/v1/namespaces/edl/jobs").status, 403);
}

TEST_F(ApiServerRbacTest, WithoutRbacEveryoneAuthenticatedMayDoAnything) {
  StartRbacServer(false);
  CreatePodInEdl("w-0");
  EXPECT_EQ(SendAsMaster("PATCH", std::string(kPods) + "/w-0", R"({"metadata":{}})",
                         "application/merge-patch+json")
                .status,
            200);
  EXPECT_EQ(SendAs("jane-token", "GET", "/debug/fakekube/state").status, 200);
  EXPECT_EQ(SendAs("nope", "GET", kPods).status, 401);
}

TEST_F(ApiServerRbacTest, TheAuditLogNamesEachRequestAsKubernetesDoes) {
  CreatePodInEdl("w-0");
  Send("GET", std::string(kPods) + "?labelSelector=app%3Dedl");
  Send("GET", std::string(kPods) + "?watch=1&timeoutSeconds=1");
  Send("GET", std::string(kPods) + "/w-0/log");
  Send("PUT", std::string(kPods) + "/w-0", Pod("w-0").dump());
  Send("DELETE", std::string(kPods) + "?labelSelector=app%3Dedl");
  Send("POST", "/api/v1/namespaces/edl/services/s:80/proxy/x", "");
  Send("GET", "/api/v1");
  SendAsMaster("GET", kPods);
  const Json all = Send("GET", "/debug/fakekube/audit").json();
  EXPECT_EQ(all["kind"], "EventList");
  EXPECT_EQ(all["apiVersion"], "audit.k8s.io/v1");
  const Json admin = Send("GET", "/debug/fakekube/audit?user=kubernetes-admin").json()["items"];
  ASSERT_EQ(admin.size(), 8u) << admin.dump(1);
  EXPECT_EQ(all["items"].size(), admin.size() + 1);
  struct Expected {
    const char* verb;
    const char* resource;
    const char* subresource;
    const char* name;
    int code;
  };
  const Expected expected[] = {
      {"create", "pods", "", "", 201},
      {"list", "pods", "", "", 200},
      {"watch", "pods", "", "", 200},
      {"get", "pods", "log", "w-0", 400},
      {"update", "pods", "", "w-0", 200},
      {"deletecollection", "pods", "", "", 200},
      {"create", "services", "proxy", "s:80", 404},
  };
  for (size_t i = 0; i < std::size(expected); ++i) {
    const Json& event = admin[i];
    const Expected& e = expected[i];
    EXPECT_EQ(event["verb"], e.verb) << event.dump();
    EXPECT_EQ(event["user"]["username"], "kubernetes-admin");
    EXPECT_EQ(event["objectRef"]["resource"], e.resource) << event.dump();
    EXPECT_EQ(event["objectRef"].value("subresource", ""), e.subresource) << event.dump();
    EXPECT_EQ(event["objectRef"].value("name", ""), e.name) << event.dump();
    EXPECT_EQ(event["objectRef"]["namespace"], "edl");
    EXPECT_EQ(event["responseStatus"]["code"], e.code) << event.dump();
  }
  // Discovery: a non-resource request, without objectRef.
  EXPECT_EQ(admin[7]["requestURI"], "/api/v1");
  EXPECT_FALSE(admin[7].contains("objectRef"));
}

TEST_F(ApiServerRbacTest, RolesAndRoleBindingsAreValidatedAsKubernetesDoes) {
  auto role = Send("POST", "/apis/rbac.authorization.k8s.io/v1/namespaces/edl/roles",
                   Json{{"metadata", {{"name", "r"}}},
                        {"rules", Json::array({{{"apiGroups", {""}}, {"resources", {"pods"}}}})}}
                       .dump());
  EXPECT_EQ(role.status, 422);
  EXPECT_EQ(role.json()["message"],
            "Role.rbac.authorization.k8s.io \"r\" is invalid: rules[0].verbs: Required value: "
            "verbs must contain at least one value");
  auto binding = Send(
      "POST", "/apis/rbac.authorization.k8s.io/v1/namespaces/edl/rolebindings",
      Json{
          {"metadata", {{"name", "b"}}},
          {"subjects", Json::array({{{"kind", "User"}, {"name", "jane"}}})},
          {"roleRef", {{"apiGroup", "rbac.authorization.k8s.io"}, {"kind", "Role"}, {"name", "r"}}}}
          .dump());
  EXPECT_EQ(binding.status, 422);
  EXPECT_EQ(binding.json()["message"],
            "RoleBinding.rbac.authorization.k8s.io \"b\" is invalid: subjects[0].apiGroup: "
            "Unsupported value: \"\": supported values: \"rbac.authorization.k8s.io\"");
}

TEST_F(ApiServerRbacTest, RbacYamlHoldsTheMasterToItsRoleAndTheClientToEdlUser) {
  auto objects = edl::testing::LoadRbacManifest("edl");
  ASSERT_TRUE(objects.ok()) << objects.status().message();
  for (const Json& object : *objects) {
    const std::string kind = object["kind"];
    const std::string collection = kind == "ServiceAccount"
                                       ? "/api/v1/namespaces/edl/serviceaccounts"
                                       : "/apis/rbac.authorization.k8s.io/v1/namespaces/edl/" +
                                             std::string(kind == "Role" ? "roles" : "rolebindings");
    Create(collection, object);
  }
  CreatePodInEdl("w-0");
  EXPECT_EQ(SendAsMaster("GET", kPods + std::string("?watch=1&timeoutSeconds=1")).status, 200);
  EXPECT_EQ(SendAsMaster("DELETE", std::string(kPods) + "/w-0").status, 200);
  // Granted before, no longer: nothing the master does needs them.
  EXPECT_EQ(SendAsMaster("PATCH", std::string(kPods) + "/w-0", "{}", "application/merge-patch+json")
                .status,
            403);
  EXPECT_EQ(SendAsMaster("GET", std::string(kPods) + "/w-0/log").status, 403);
  EXPECT_EQ(SendAsMaster("GET", "/api/v1/namespaces/edl/services").status, 403);
  EXPECT_EQ(SendAsMaster("GET", "/api/v1/namespaces/edl/secrets/j-secret").status, 403);
  EXPECT_EQ(SendAsMaster("DELETE", "/api/v1/namespaces/edl/configmaps/j-config").status, 403);
  // Role edl-user is bound to nobody by rbac.yaml itself.
  EXPECT_EQ(SendAs("jane-token", "GET", "/apis/batch/v1/namespaces/edl/jobs").status, 403);
}

TEST(ServiceAccountFiles, EachPodGetsTheTokenOfItsOwnServiceAccount) {
  ServiceAccountFiles files{"", "", kKey};
  const Json master = {{"metadata", {{"namespace", "edl"}}},
                       {"spec", {{"serviceAccountName", "edl-master"}}}};
  const Json worker = {{"metadata", {{"namespace", "edl"}}}, {"spec", Json::object()}};
  const Credentials credentials{"admin-token", {}, kKey};
  auto as_master = Authenticate("Bearer " + files.TokenFor(master), credentials);
  ASSERT_TRUE(as_master.has_value());
  EXPECT_EQ(as_master->name, kMaster);
  EXPECT_FALSE(as_master->admin());
  auto as_worker = Authenticate("bearer " + files.TokenFor(worker), credentials);
  ASSERT_TRUE(as_worker.has_value());
  EXPECT_EQ(as_worker->name, "system:serviceaccount:edl:default");
  // Without a key, every pod gets the one token given.
  EXPECT_EQ((ServiceAccountFiles{"shared", "", ""}.TokenFor(master)), "shared");
  EXPECT_TRUE(Authenticate("Bearer admin-token", credentials)->admin());
}

}  // namespace
}  // namespace edl::fakekube
