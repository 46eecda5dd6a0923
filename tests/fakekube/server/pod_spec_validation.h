// Validation of a PodSpec, a Pod's or a pod template's, as kube-apiserver's
// ValidatePodSpec does it for the fields edl and its tests write: the
// fields the API's OpenAPI schema marks required (containers and their
// name; env[].name, fieldRef.fieldPath, ports[].containerPort,
// volumeMounts[].name and mountPath, volumes[].name, keys and paths of
// projected items, the claimName, path, name or secretName of a volume
// source) and the formats checked on them. Pure; thread-safe.
#pragma once

#include <string>
#include <vector>

#include "tests/fakekube/server/api_errors.h"

namespace edl::fakekube {

// Appends to `errors` what is wrong with `spec`, a PodSpec found at `path`
// ("spec" in a Pod, "spec.template.spec" in a Job). spec.restartPolicy may
// be absent (the registry defaults it to Always); its allowed values for
// a pod template are the caller's to check.
void ValidatePodSpec(const Json& spec, const std::string& path, std::vector<FieldError>& errors);

}  // namespace edl::fakekube
