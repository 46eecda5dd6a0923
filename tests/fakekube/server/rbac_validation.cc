// Role and RoleBinding validation (see rbac_validation.h).
#include "tests/fakekube/server/rbac_validation.h"

#include "tests/fakekube/server/json_fields.h"

namespace edl::fakekube {
namespace {

constexpr char kRbacGroup[] = "rbac.authorization.k8s.io";

FieldError NotSupported(const std::string& field, const std::string& value,
                        const std::string& supported) {
  return FieldError{"FieldValueNotSupported", field, "supported values: " + supported,
                    Json(value).dump()};
}

bool Empty(const Json& object, const char* key) { return ArrayAt(object, key).empty(); }

}  // namespace

void ValidateRole(const Json& role, std::vector<FieldError>& errors) {
  const Json rules = ArrayAt(role, "rules");
  for (size_t i = 0; i < rules.size(); ++i) {
    const Json& rule = rules[i];
    const std::string path = "rules[" + std::to_string(i) + "]";
    if (Empty(rule, "verbs")) {
      errors.push_back(RequiredField(path + ".verbs", "verbs must contain at least one value"));
    }
    if (!Empty(rule, "nonResourceURLs")) {
      errors.push_back(InvalidField(path + ".nonResourceURLs",
                                    ArrayAt(rule, "nonResourceURLs").dump(),
                                    "namespaced rules cannot apply to non-resource URLs"));
      continue;
    }
    if (Empty(rule, "apiGroups")) {
      errors.push_back(
          RequiredField(path + ".apiGroups", "resource rules must supply at least one api group"));
    }
    if (Empty(rule, "resources")) {
      errors.push_back(
          RequiredField(path + ".resources", "resource rules must supply at least one resource"));
    }
  }
}

void ValidateRoleBinding(const Json& binding, std::vector<FieldError>& errors) {
  const Json ref = ObjectAt(binding, "roleRef");
  const std::string group = StringAt(ref, "apiGroup");
  if (!group.empty() && group != kRbacGroup) {
    errors.push_back(NotSupported("roleRef.apiGroup", group, "\"rbac.authorization.k8s.io\""));
  }
  const std::string kind = StringAt(ref, "kind");
  if (kind != "Role" && kind != "ClusterRole") {
    errors.push_back(NotSupported("roleRef.kind", kind, "\"Role\", \"ClusterRole\""));
  }
  if (StringAt(ref, "name").empty()) errors.push_back(RequiredField("roleRef.name"));
  const Json subjects = ArrayAt(binding, "subjects");
  for (size_t i = 0; i < subjects.size(); ++i) {
    const Json& subject = subjects[i];
    const std::string path = "subjects[" + std::to_string(i) + "]";
    if (StringAt(subject, "name").empty()) errors.push_back(RequiredField(path + ".name"));
    const std::string subject_kind = StringAt(subject, "kind");
    const std::string subject_group = StringAt(subject, "apiGroup");
    if (subject_kind == "ServiceAccount") {
      if (!subject_group.empty()) {
        errors.push_back(NotSupported(path + ".apiGroup", subject_group, "\"\""));
      }
    } else if (subject_kind == "User" || subject_kind == "Group") {
      if (subject_group != kRbacGroup) {
        errors.push_back(
            NotSupported(path + ".apiGroup", subject_group, "\"rbac.authorization.k8s.io\""));
      }
    } else {
      errors.push_back(
          NotSupported(path + ".kind", subject_kind, "\"ServiceAccount\", \"User\", \"Group\""));
    }
  }
}

}  // namespace edl::fakekube
