// RBAC (see rbac_authorizer.h), after plugin/pkg/auth/authorizer/rbac and
// apiserver's endpoints/handlers/responsewriters.forbiddenMessage.
#include "tests/fakekube/server/rbac_authorizer.h"

namespace edl::fakekube {
namespace {

constexpr char kRbacGroup[] = "rbac.authorization.k8s.io";

std::string Quote(const std::string& s) { return Json(s).dump(); }

// Whether the JSON array `list` holds "*" or `value`.
bool Lists(const Json& list, const std::string& value) {
  if (!list.is_array()) return false;
  for (const Json& item : list) {
    if (item.is_string() && (item == "*" || item == value)) return true;
  }
  return false;
}

bool ResourceMatches(const Json& resources, const RequestAttributes& r) {
  if (!resources.is_array()) return false;
  const std::string combined =
      r.subresource.empty() ? r.resource : r.resource + "/" + r.subresource;
  for (const Json& item : resources) {
    if (!item.is_string()) continue;
    const std::string rule = item.get<std::string>();
    if (rule == "*" || rule == combined) return true;
    if (!r.subresource.empty() && rule == "*/" + r.subresource) return true;
  }
  return false;
}

bool RuleAllows(const Json& rule, const RequestAttributes& r) {
  if (!rule.is_object()) return false;
  if (!Lists(rule.value("verbs", Json()), r.verb)) return false;
  if (!Lists(rule.value("apiGroups", Json()), r.api_group)) return false;
  if (!ResourceMatches(rule.value("resources", Json()), r)) return false;
  const Json names = rule.value("resourceNames", Json::array());
  if (!names.is_array() || names.empty()) return true;
  for (const Json& name : names) {
    if (name == r.name) return true;
  }
  return false;
}

bool SubjectIs(const Json& subject, const std::string& binding_ns, const UserInfo& user) {
  if (!subject.is_object()) return false;
  const std::string kind = subject.value("kind", "");
  const std::string name = subject.value("name", "");
  if (kind == "User") return name == user.name;
  if (kind == "Group") return user.InGroup(name);
  if (kind == "ServiceAccount") {
    const std::string ns = subject.value("namespace", "");
    return ServiceAccountUser(ns.empty() ? binding_ns : ns, name) == user.name;
  }
  return false;
}

bool NonResourcePathAllowed(const RequestAttributes& r) {
  if (r.verb != "get" && r.verb != "head") return false;
  for (const char* exact :
       {"/api", "/apis", "/openapi", "/version", "/version/", "/healthz", "/livez", "/readyz"}) {
    if (r.path == exact) return true;
  }
  for (const char* prefix : {"/api/", "/apis/", "/openapi/"}) {
    if (r.path.rfind(prefix, 0) == 0) return true;
  }
  return false;
}

bool RoleBindingsAllow(const Store& store, const UserInfo& user, const RequestAttributes& r) {
  auto bindings = store.List("rolebindings", r.ns, "", "");
  if (!bindings.ok()) return false;
  for (const Json& binding : bindings.value->items) {
    const Json ref = binding.value("roleRef", Json::object());
    if (!ref.is_object() || ref.value("kind", "") != "Role" ||
        ref.value("apiGroup", "") != kRbacGroup) {
      continue;
    }
    bool bound = false;
    for (const Json& subject : binding.value("subjects", Json::array())) {
      bound = bound || SubjectIs(subject, r.ns, user);
    }
    if (!bound) continue;
    auto role = store.Get("roles", r.ns, ref.value("name", ""));
    if (!role.ok()) continue;
    for (const Json& rule : role.value->value("rules", Json::array())) {
      if (RuleAllows(rule, r)) return true;
    }
  }
  return false;
}

}  // namespace

std::optional<ApiError> AuthorizeRbac(const Store& store, const UserInfo& user,
                                      const RequestAttributes& request) {
  if (user.admin()) return std::nullopt;
  if (!request.resource_request) {
    if (NonResourcePathAllowed(request)) return std::nullopt;
    return ForbiddenRequest(user, request);
  }
  if (!request.ns.empty() && RoleBindingsAllow(store, user, request)) return std::nullopt;
  return ForbiddenRequest(user, request);
}

ApiError ForbiddenRequest(const UserInfo& user, const RequestAttributes& r) {
  ApiError e;
  e.code = 403;
  e.reason = "Forbidden";
  if (!r.resource_request) {
    e.message =
        "forbidden: User " + Quote(user.name) + " cannot " + r.verb + " path " + Quote(r.path);
    return e;
  }
  const std::string resource =
      r.subresource.empty() ? r.resource : r.resource + "/" + r.subresource;
  std::string reason = "User " + Quote(user.name) + " cannot " + r.verb + " resource " +
                       Quote(resource) + " in API group " + Quote(r.api_group);
  reason += r.ns.empty() ? " at the cluster scope" : " in the namespace " + Quote(r.ns);
  const std::string subject =
      r.name.empty() ? r.QualifiedResource() : r.QualifiedResource() + " " + Quote(r.name);
  e.message = subject + " is forbidden: " + reason;
  if (!r.api_group.empty()) e.details["group"] = r.api_group;
  e.details["kind"] = r.resource;
  if (!r.name.empty()) e.details["name"] = r.name;
  return e;
}

}  // namespace edl::fakekube
