// Permissions as the least-privilege tests compare them, one string each:
// "verb resource", the resource qualified as Kubernetes qualifies it
// ("create pods", "get pods/log", "list jobs.batch", "create
// services/proxy"). Derived from the Roles of scripts/k8s/rbac.yaml on one
// side and from the fake API server's audit log (an identity's requests,
// whatever their answer) on the other.
#pragma once

#include <nlohmann/json.hpp>
#include <set>
#include <string>
#include <vector>

#include "base/status.h"

namespace edl::testing {

using Permissions = std::set<std::string>;

// The objects of scripts/k8s/rbac.yaml as JSON, moved from namespace edl to
// `ns` (their metadata and the ServiceAccount subjects of RoleBindings).
Result<std::vector<nlohmann::json>> LoadRbacManifest(const std::string& ns);

// What Role `role` among `objects` grants; a gtest failure for a rule
// with a wildcard or resourceNames, which this comparison cannot express.
Permissions RoleGrants(const std::vector<nlohmann::json>& objects, const std::string& role);

// What audit.k8s.io/v1 Events show was asked for (resource requests only).
Permissions UsedPermissions(const std::vector<nlohmann::json>& events);

// The elements of `a` not in `b`.
Permissions Minus(const Permissions& a, const Permissions& b);

// What Role `role` of scripts/k8s/rbac.yaml grants (a gtest failure and {}
// if the file cannot be read).
Permissions RbacYamlGrants(const std::string& role);

// Grants of Role edl-user that the job-control end-to-end test
// (EdlOnKube.StoppingTheJobRemovesEveryPodOfTheJob) does not use, each
// asserted used by the test that takes its path:
// * following a job to its end reads the master pod's phase once its log
//   ends (EdlOnKube.TrainsTheCnnThroughAPodDeletionAPreemptionAndAKilledPs);
// * a submit whose master Job cannot be created takes back its Secret and
//   ConfigMap (EdlOnKube.ASubmitWhoseMasterJobIsRefusedTakesBackItsSecretAndConfigMap).
inline const Permissions kFollowingAJobToItsEnd = {"get pods"};
inline const Permissions kTakingBackASubmit = {"delete configmaps", "delete secrets"};

}  // namespace edl::testing
