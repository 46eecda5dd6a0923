// ApiServerTest: the fixture of the API server's wire tests
// (api_server*_test.cc): a LoopbackApiServer with bookmarks every second,
// requests to it, and the pods those tests post and run.
#pragma once

#include <gtest/gtest.h>

#include <memory>
#include <string>

#include "tests/fakekube/loopback_api_server.h"
#include "tests/fakekube/store_fixtures.h"

namespace edl::fakekube::testing {

class ApiServerTest : public ::testing::Test {
 protected:
  void SetUp() override { StartServer(ApiServer::Options{}); }

  // Replaces the server, and its store, with one started with these options.
  void StartServer(ApiServer::Options options, Store::Options store_options = {}) {
    api_.reset();
    options.bookmark_interval = std::chrono::seconds(1);
    api_ = std::make_unique<LoopbackApiServer>(options, store_options);
    ASSERT_TRUE(api_->Start().ok());
  }

  Store& store() { return api_->store(); }
  ApiServer& server() { return api_->server(); }
  ClientOptions client() const { return api_->client(); }
  HttpResult Send(const std::string& method, const std::string& target,
                  const std::string& body = "", const std::string& type = "application/json") {
    return api_->Send(method, target, body, type);
  }

  // A pod labelled app=edl with one container "main" (image edl:1.0).
  static Json Pod(const std::string& name) {
    return {{"apiVersion", "v1"},
            {"kind", "Pod"},
            {"metadata", {{"name", name}, {"labels", {{"app", "edl"}}}}},
            {"spec", {{"containers", {{{"name", "main"}, {"image", "edl:1.0"}}}}}}};
  }
  // POSTs Pod(name); the created object.
  Json CreatePod(const std::string& name) {
    auto r = Send("POST", "/api/v1/namespaces/default/pods", Pod(name).dump());
    EXPECT_EQ(r.status, 201) << r.body;
    return r.json();
  }
  // Marks the pod's container running, as the kubelet does.
  void StartContainer(const std::string& name) { MarkRunning(store(), name); }

  std::unique_ptr<LoopbackApiServer> api_;
};

}  // namespace edl::fakekube::testing
