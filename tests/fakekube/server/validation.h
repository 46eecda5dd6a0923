// What kube-apiserver's validation refuses in an object it is asked to
// store, on create and on update, for the kinds the fake serves: the name
// and owner references of every object, and the fields the API's OpenAPI
// schema marks required in the Pods, Services, ConfigMaps, Secrets, Jobs
// (job_validation.h), PriorityClasses, Roles and RoleBindings
// (rbac_validation.h) edl and its tests write, with the formats checked on
// them. Pure; thread-safe.
#pragma once

#include <optional>

#include "tests/fakekube/server/api_errors.h"
#include "tests/fakekube/server/resources.h"

namespace edl::fakekube {

// 422 Invalid naming every field error found in `object` (metadata.name
// already set, defaults not yet applied on create), as
// `Kind "name" is invalid: field: Required value, ...`; nullopt if valid.
std::optional<ApiError> ValidateObject(const ResourceInfo& resource, const Json& object);

}  // namespace edl::fakekube
