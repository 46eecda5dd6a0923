// Objects and writes the fake API server's Store tests share
// (store*_test.cc, and the API server and kubectl tests).
#pragma once

#include <gtest/gtest.h>

#include <string>
#include <utility>

#include "tests/fakekube/server/store.h"

namespace edl::fakekube::testing {

// A pod labelled app=edl with one container "main" (image edl:1.0).
inline Json Pod(const std::string& name) {
  return {{"metadata", {{"name", name}, {"labels", {{"app", "edl"}}}}},
          {"spec", {{"containers", {{{"name", "main"}, {"image", "edl:1.0"}}}}}}};
}

// A ConfigMap with one key.
inline Json ConfigMap(const std::string& name) {
  return {{"metadata", {{"name", name}}}, {"data", {{"k", "v"}}}};
}

// Creates the object; a test failure and null if the store refuses it.
inline Json MustCreate(Store& store, const std::string& resource, Json object,
                       const std::string& ns = "default") {
  auto created = store.Create(resource, ns, std::move(object));
  EXPECT_TRUE(created.ok()) << created.error.message;
  return created.ok() ? *created.value : Json();
}

// Puts a pod on a node, as the scheduler's binding does.
inline void Schedule(Store& store, const std::string& name) {
  auto bound =
      store.Update("pods", "default", name, [](Json& pod) { pod["spec"]["nodeName"] = "node-1"; });
  ASSERT_TRUE(bound.ok());
}

// Puts a pod on a node with its container "main" running, as the kubelet
// reports it.
inline void MarkRunning(Store& store, const std::string& name) {
  auto running = store.Update("pods", "default", name, [](Json& pod) {
    pod["spec"]["nodeName"] = "node-1";
    pod["status"]["phase"] = "Running";
    pod["status"]["containerStatuses"] = {
        {{"name", "main"}, {"state", {{"running", {{"startedAt", "2026-01-01T00:00:00Z"}}}}}}};
  });
  ASSERT_TRUE(running.ok());
}

}  // namespace edl::fakekube::testing
