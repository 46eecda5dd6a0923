// Discovery and OpenAPI documents (see discovery.h).
#include "tests/fakekube/server/discovery.h"

#include "tests/fakekube/server/resources.h"

namespace edl::fakekube {
namespace {

const Json kVerbs = {"create", "delete", "deletecollection", "get",
                     "list",   "patch",  "update",           "watch"};

Json ResourceList(const std::string& group, const std::string& version) {
  Json resources = Json::array();
  for (const ResourceInfo& r : AllResources()) {
    if (r.group != group || r.version != version) continue;
    Json entry = {{"name", r.name},
                  {"singularName", r.singular},
                  {"namespaced", r.namespaced},
                  {"kind", r.kind},
                  {"verbs", kVerbs}};
    if (!r.short_names.empty()) entry["shortNames"] = r.short_names;
    resources.push_back(entry);
    for (const std::string& sub : r.subresources) {
      Json verbs = sub == "status" ? Json{"get", "patch", "update"}
                   : sub == "log"  ? Json{"get"}
                                   : Json{"create", "delete", "get", "patch", "update"};
      std::string kind = sub == "proxy" ? r.kind + "ProxyOptions" : r.kind;
      resources.push_back({{"name", r.name + "/" + sub},
                           {"singularName", ""},
                           {"namespaced", r.namespaced},
                           {"kind", kind},
                           {"verbs", verbs}});
    }
  }
  return {{"kind", "APIResourceList"},
          {"apiVersion", "v1"},
          {"groupVersion", group.empty() ? version : group + "/" + version},
          {"resources", resources}};
}

Json GroupEntry(const std::string& group) {
  Json version = {{"groupVersion", group + "/v1"}, {"version", "v1"}};
  return {{"name", group}, {"versions", Json::array({version})}, {"preferredVersion", version}};
}

// An OpenAPI v3 document declaring, for each kind of the group, the PATCH
// operation with its fieldValidation parameter (cli-runtime's
// query_param_verifier_v3 looks for exactly that).
Json OpenApiDocument(const std::string& group) {
  Json paths = Json::object();
  for (const ResourceInfo& r : AllResources()) {
    if (r.group != group) continue;
    std::string prefix = group.empty() ? "/api/v1" : "/apis/" + group + "/v1";
    std::string path =
        prefix + (r.namespaced ? "/namespaces/{namespace}/" : "/") + r.name + "/{name}";
    std::string op = "patch" +
                     std::string(group.empty()                          ? "CoreV1"
                                 : group == "batch"                     ? "BatchV1"
                                 : group == "rbac.authorization.k8s.io" ? "RbacAuthorizationV1"
                                                                        : "SchedulingV1") +
                     (r.namespaced ? "Namespaced" : "") + r.kind;
    paths[path] = {
        {"patch",
         {{"operationId", op},
          {"x-kubernetes-action", "patch"},
          {"x-kubernetes-group-version-kind",
           {{"group", group}, {"version", "v1"}, {"kind", r.kind}}},
          {"parameters",
           Json::array(
               {{{"name", "fieldValidation"}, {"in", "query"}, {"schema", {{"type", "string"}}}},
                {{"name", "fieldManager"}, {"in", "query"}, {"schema", {{"type", "string"}}}},
                {{"name", "dryRun"}, {"in", "query"}, {"schema", {{"type", "string"}}}}})},
          {"responses", {{"200", {{"description", "OK"}}}}}}}};
  }
  return {{"openapi", "3.0.0"},
          {"info", {{"title", "Kubernetes"}, {"version", "v1.32.0"}}},
          {"paths", paths}};
}

}  // namespace

std::optional<Json> DiscoveryDocument(const std::string& path, const std::string& server_address) {
  if (path == "/version") {
    return Json{{"major", "1"},
                {"minor", "32"},
                {"gitVersion", "v1.32.0-fake"},
                {"gitCommit", "0000000000000000000000000000000000000000"},
                {"gitTreeState", "clean"},
                {"buildDate", "2025-01-01T00:00:00Z"},
                {"goVersion", "go1.23"},
                {"compiler", "gc"},
                {"platform", "linux/amd64"}};
  }
  if (path == "/api") {
    return Json{{"kind", "APIVersions"},
                {"versions", {"v1"}},
                {"serverAddressByClientCIDRs",
                 Json::array({{{"clientCIDR", "0.0.0.0/0"}, {"serverAddress", server_address}}})}};
  }
  if (path == "/apis") {
    return Json{{"kind", "APIGroupList"},
                {"apiVersion", "v1"},
                {"groups", Json::array({GroupEntry("scheduling.k8s.io"), GroupEntry("batch"),
                                        GroupEntry("rbac.authorization.k8s.io")})}};
  }
  for (const char* name : {"scheduling.k8s.io", "batch", "rbac.authorization.k8s.io"}) {
    if (path == std::string("/apis/") + name) {
      Json group = GroupEntry(name);
      group["kind"] = "APIGroup";
      group["apiVersion"] = "v1";
      return group;
    }
  }
  if (path == "/api/v1") return ResourceList("", "v1");
  if (path == "/apis/scheduling.k8s.io/v1") return ResourceList("scheduling.k8s.io", "v1");
  if (path == "/apis/batch/v1") return ResourceList("batch", "v1");
  if (path == "/apis/rbac.authorization.k8s.io/v1") {
    return ResourceList("rbac.authorization.k8s.io", "v1");
  }
  if (path == "/openapi/v3") {
    return Json{
        {"paths",
         {{"api/v1", {{"serverRelativeURL", "/openapi/v3/api/v1?hash=0123456789ABCDEF"}}},
          {"apis/scheduling.k8s.io/v1",
           {{"serverRelativeURL", "/openapi/v3/apis/scheduling.k8s.io/v1?hash=FEDCBA9876543210"}}},
          {"apis/batch/v1",
           {{"serverRelativeURL", "/openapi/v3/apis/batch/v1?hash=0F1E2D3C4B5A6978"}}},
          {"apis/rbac.authorization.k8s.io/v1",
           {{"serverRelativeURL",
             "/openapi/v3/apis/rbac.authorization.k8s.io/v1?hash=8796A5B4C3D2E1F0"}}}}}};
  }
  if (path == "/openapi/v3/api/v1") return OpenApiDocument("");
  if (path == "/openapi/v3/apis/scheduling.k8s.io/v1") return OpenApiDocument("scheduling.k8s.io");
  if (path == "/openapi/v3/apis/batch/v1") return OpenApiDocument("batch");
  if (path == "/openapi/v3/apis/rbac.authorization.k8s.io/v1") {
    return OpenApiDocument("rbac.authorization.k8s.io");
  }
  return std::nullopt;
}

}  // namespace edl::fakekube
