// RequestAttributes: what a request asks to do, in the terms of
// authorization and the audit log, read from its method and path alone as
// kube-apiserver's RequestInfoFactory reads them (so a path the fake does
// not serve is still named): a resource request
// (/api/v1/..., /apis/GROUP/VERSION/...) has a verb (get, list, watch,
// create, update, patch, delete, deletecollection), an API group, a
// resource, maybe a subresource ("log", "proxy", "status"), a namespace and
// a name; any other path (discovery, /version, /healthz, the test hooks) is
// a non-resource request whose verb is the method in lower case. Pure.
#pragma once

#include <string>

#include "tests/fakekube/server/request.h"

namespace edl::fakekube {

struct RequestAttributes {
  bool resource_request = false;
  std::string verb;
  std::string api_group;    // "" for the core group
  std::string resource;     // "pods"
  std::string subresource;  // "log"
  std::string ns;           // "" for cluster scope
  // The object's name; for list and watch, a fieldSelector's
  // metadata.name=NAME (as RBAC's resourceNames see it). "x:80" for a
  // proxy to port 80 of x.
  std::string name;
  std::string path;  // the request's path

  // "pods", "jobs.batch": the resource as Kubernetes names it in messages
  // (schema.GroupResource), without the subresource.
  std::string QualifiedResource() const;
};

RequestAttributes ResolveRequest(const std::string& method, const ParsedTarget& target);

}  // namespace edl::fakekube
