// Validation of a batch/v1 Job as kube-apiserver's ValidateJob does it, for
// the fields edl and its tests write, and the fields the API's OpenAPI
// schema marks required: its pod template (a PodSpec that restarts Never
// or OnFailure), the counts, and spec.podFailurePolicy (rules, each with an
// action and exactly one of onExitCodes {operator, values} and
// onPodConditions [{type, status}]). Unlike kube-apiserver, which first
// fills an onPodConditions entry's missing status with "True", the fake
// refuses it: the schema requires it, and typed clients fail to read a Job
// back without it. Pure; thread-safe.
#pragma once

#include <vector>

#include "tests/fakekube/server/api_errors.h"

namespace edl::fakekube {

// Appends to `errors` what is wrong with `job`.
void ValidateJob(const Json& job, std::vector<FieldError>& errors);

}  // namespace edl::fakekube
