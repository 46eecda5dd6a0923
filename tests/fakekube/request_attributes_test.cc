// How the fake API server names a request for authorization and its audit
// log: the verbs, groups, resources and subresources kube-apiserver's
// RequestInfoFactory gives the same method and path.
#include "tests/fakekube/server/request_attributes.h"

#include <gtest/gtest.h>

namespace edl::fakekube {
namespace {

RequestAttributes Resolve(const std::string& method, const std::string& target) {
  return ResolveRequest(method, ParseTarget(target));
}

TEST(RequestAttributes, MethodsBecomeKubernetesVerbs) {
  const std::string pods = "/api/v1/namespaces/edl/pods";
  EXPECT_EQ(Resolve("GET", pods).verb, "list");
  EXPECT_EQ(Resolve("GET", pods + "?watch=1&resourceVersion=5").verb, "watch");
  EXPECT_EQ(Resolve("GET", pods + "?watch=false").verb, "list");
  EXPECT_EQ(Resolve("GET", pods + "/w-0").verb, "get");
  EXPECT_EQ(Resolve("POST", pods).verb, "create");
  EXPECT_EQ(Resolve("PUT", pods + "/w-0").verb, "update");
  EXPECT_EQ(Resolve("PATCH", pods + "/w-0").verb, "patch");
  EXPECT_EQ(Resolve("DELETE", pods + "/w-0").verb, "delete");
  EXPECT_EQ(Resolve("DELETE", pods + "?labelSelector=a%3Db").verb, "deletecollection");
  EXPECT_EQ(Resolve("GET", "/api/v1/watch/namespaces/edl/pods").verb, "watch");
}

TEST(RequestAttributes, AResourcePathNamesGroupResourceSubresourceNamespaceAndName) {
  RequestAttributes log = Resolve("GET", "/api/v1/namespaces/edl/pods/w-0/log?follow=true");
  EXPECT_TRUE(log.resource_request);
  EXPECT_EQ(log.api_group, "");
  EXPECT_EQ(log.resource, "pods");
  EXPECT_EQ(log.subresource, "log");
  EXPECT_EQ(log.ns, "edl");
  EXPECT_EQ(log.name, "w-0");
  EXPECT_EQ(log.QualifiedResource(), "pods");

  RequestAttributes job = Resolve("DELETE", "/apis/batch/v1/namespaces/edl/jobs/j-master");
  EXPECT_EQ(job.api_group, "batch");
  EXPECT_EQ(job.resource, "jobs");
  EXPECT_EQ(job.QualifiedResource(), "jobs.batch");

  RequestAttributes proxy =
      Resolve("POST", "/api/v1/namespaces/edl/services/j-master:50001/proxy/edl.Control/Scale");
  EXPECT_EQ(proxy.verb, "create");
  EXPECT_EQ(proxy.resource, "services");
  EXPECT_EQ(proxy.name, "j-master:50001");
  EXPECT_EQ(proxy.subresource, "proxy");

  RequestAttributes nodes = Resolve("GET", "/api/v1/nodes");
  EXPECT_EQ(nodes.ns, "");
  EXPECT_EQ(nodes.resource, "nodes");
  RequestAttributes ns = Resolve("GET", "/api/v1/namespaces/edl");
  EXPECT_EQ(ns.resource, "namespaces");
  EXPECT_EQ(ns.name, "edl");
}

TEST(RequestAttributes, AListByMetadataNameNamesTheObject) {
  EXPECT_EQ(Resolve("GET", "/api/v1/namespaces/edl/pods?fieldSelector=metadata.name%3Dw-0").name,
            "w-0");
  EXPECT_EQ(Resolve("GET",
                    "/api/v1/namespaces/edl/pods?watch=1&fieldSelector=status.phase%3D"
                    "Running,metadata.name%3D%3Dw-1")
                .name,
            "w-1");
}

TEST(RequestAttributes, DiscoveryAndOtherPathsAreNonResourceRequests) {
  for (const char* path : {"/api", "/api/v1", "/apis", "/apis/batch/v1", "/version",
                           "/openapi/v3/api/v1", "/debug/fakekube/state"}) {
    RequestAttributes a = Resolve("GET", path);
    EXPECT_FALSE(a.resource_request) << path;
    EXPECT_EQ(a.verb, "get") << path;
    EXPECT_EQ(a.path, path);
  }
  EXPECT_EQ(Resolve("POST", "/debug/fakekube/restart").verb, "post");
}

}  // namespace
}  // namespace edl::fakekube
