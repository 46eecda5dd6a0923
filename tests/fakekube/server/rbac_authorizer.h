// RBAC as kube-apiserver's authorizer (--authorization-mode=RBAC) applies
// it, over the Roles and RoleBindings in a Store:
//
// * the admin (group system:masters) may do anything;
// * everyone authenticated may GET the discovery, OpenAPI, version and
//   health paths (the system:discovery and system:public-info-viewer
//   ClusterRoles); no other non-resource path (the test hooks included);
// * a namespaced request is allowed when a RoleBinding of its namespace
//   binds the user (subject User by name, Group by group, ServiceAccount by
//   namespace, the binding's own if the subject names none, and name) to a
//   Role of that namespace with a rule that matches its verb, API group,
//   resource ("pods", "pods/log", "*", "*/log") and, where the rule lists
//   resourceNames, its name. ClusterRoles and ClusterRoleBindings are not
//   served: cluster-scope requests, and bindings to a ClusterRole, allow
//   nothing.
//
// A refusal is Kubernetes' 403: `pods "x" is forbidden: User
// "system:serviceaccount:edl:edl-master" cannot patch resource "pods" in API
// group "" in the namespace "edl"`. Reads the store only; thread-safe as it is.
#pragma once

#include <optional>

#include "tests/fakekube/server/identity.h"
#include "tests/fakekube/server/request_attributes.h"
#include "tests/fakekube/server/store.h"

namespace edl::fakekube {

// nullopt when `user` may do `request`, else the 403.
std::optional<ApiError> AuthorizeRbac(const Store& store, const UserInfo& user,
                                      const RequestAttributes& request);

// The 403 kube-apiserver answers when `user` may not do `request`.
ApiError ForbiddenRequest(const UserInfo& user, const RequestAttributes& request);

}  // namespace edl::fakekube
