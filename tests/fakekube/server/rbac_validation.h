// What kube-apiserver's validation (pkg/apis/rbac/validation) refuses in a
// Role or RoleBinding: a rule without verbs, a resource rule without API
// groups or resources, a namespaced rule on nonResourceURLs; a roleRef that
// is not a Role or ClusterRole of rbac.authorization.k8s.io or has no name;
// a subject without a name or of another kind than ServiceAccount (core
// group), User or Group (rbac.authorization.k8s.io). Pure.
#pragma once

#include <vector>

#include "tests/fakekube/server/api_errors.h"

namespace edl::fakekube {

void ValidateRole(const Json& role, std::vector<FieldError>& errors);
void ValidateRoleBinding(const Json& binding, std::vector<FieldError>& errors);

}  // namespace edl::fakekube
