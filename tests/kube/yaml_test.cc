#include "kube/yaml.h"

#include <gtest/gtest.h>
#include <yaml-cpp/yaml.h>

namespace edl::kube {
namespace {

TEST(ToYaml, WritesOneDocumentPerObjectThatReadsBackAsTheSameValues) {
  nlohmann::json pod = {{"apiVersion", "v1"},
                        {"kind", "Pod"},
                        {"metadata", {{"name", "j-master"}, {"labels", {{"edl-index", "1"}}}}},
                        {"spec",
                         {{"terminationGracePeriodSeconds", 30},
                          {"containers", {{{"name", "main"}, {"args", {"--a=1", "true", ""}}}}}}}};
  nlohmann::json config = {{"kind", "ConfigMap"}, {"data", {{"job.json", "{\n  \"x\": 1\n}\n"}}}};
  const std::string text = ToYaml({pod, config});
  std::vector<YAML::Node> docs = YAML::LoadAll(text);
  ASSERT_EQ(docs.size(), 2u) << text;
  EXPECT_EQ(docs[0]["metadata"]["name"].as<std::string>(), "j-master");
  // Strings stay strings even when they look like numbers or booleans.
  EXPECT_EQ(docs[0]["metadata"]["labels"]["edl-index"].Tag(), "!");
  EXPECT_EQ(docs[0]["spec"]["containers"][0]["args"][1].Tag(), "!");
  EXPECT_EQ(docs[0]["spec"]["containers"][0]["args"][2].as<std::string>(), "");
  EXPECT_EQ(docs[0]["spec"]["terminationGracePeriodSeconds"].as<int>(), 30);
  // A multi-line value comes back byte for byte.
  EXPECT_EQ(docs[1]["data"]["job.json"].as<std::string>(), "{\n  \"x\": 1\n}\n");
}

}  // namespace
}  // namespace edl::kube
