// Tests for --nodes parsing and Kubernetes quantities.
#include "tests/fakekube/server/cluster_spec.h"

#include <gtest/gtest.h>

#include "tests/fakekube/server/quantity.h"

namespace edl::fakekube {
namespace {

int64_t Milli(const std::string& text) {
  Result<int64_t> q = ParseMilliQuantity(text);
  EDL_CHECK(q.ok()) << q.status().message();
  return *q;
}

std::string Error(const std::string& nodes) {
  Result<std::vector<NodeSpec>> parsed = ParseNodeSpecs(nodes);
  return parsed.ok() ? "" : parsed.status().message();
}

TEST(Quantity, ParsesDecimalBinaryAndExponentForms) {
  EXPECT_EQ(Milli("500m"), 500);
  EXPECT_EQ(Milli("2"), 2000);
  EXPECT_EQ(Milli("0.5"), 500);
  EXPECT_EQ(Milli("1Gi"), (int64_t{1} << 30) * 1000);
  EXPECT_EQ(Milli("512Mi"), (int64_t{512} << 20) * 1000);
  EXPECT_EQ(Milli("1e3"), 1000 * 1000);
  EXPECT_EQ(Milli("1k"), 1000 * 1000);
  EXPECT_EQ(Milli("1.5G"), int64_t{1500000000} * 1000);
  EXPECT_EQ(Milli("100u"), 1);  // rounded up to a milli-unit
  EXPECT_EQ(Milli("+3"), 3000);
}

TEST(Quantity, RejectsMalformedText) {
  for (const char* bad :
       {"", "m", "Gi", "1.2.3", "4x", "1GiB", "1e", "1e+", "--1", "1 Gi", "0x10", "1E99"}) {
    Result<int64_t> q = ParseMilliQuantity(bad);
    EXPECT_FALSE(q.ok()) << bad;
    if (!q.ok()) {
      EXPECT_NE(q.status().message().find(bad), std::string::npos) << bad;
    }
  }
  EXPECT_FALSE(ParseMilliQuantity("99999999999999999999Ei").ok());
}

TEST(Quantity, PrintsCanonicalForms) {
  EXPECT_EQ(FormatMilliQuantity(500, false), "500m");
  EXPECT_EQ(FormatMilliQuantity(4000, false), "4");
  EXPECT_EQ(FormatMilliQuantity((int64_t{8} << 30) * 1000, true), "8Gi");
  EXPECT_EQ(FormatMilliQuantity(1000 * 1000, true), "1000");
}

TEST(ClusterSpec, ParsesNodesWithTheirResources) {
  Result<std::vector<NodeSpec>> nodes =
      ParseNodeSpecs("node-a:cpu=4,memory=8Gi,nvidia.com/gpu=1;node-b:cpu=2,memory=4Gi;");
  ASSERT_TRUE(nodes.ok()) << nodes.status().message();
  ASSERT_EQ(nodes->size(), 2u);
  EXPECT_EQ((*nodes)[0].name, "node-a");
  EXPECT_EQ((*nodes)[0].capacity.at("cpu"), 4000);
  EXPECT_EQ((*nodes)[0].capacity.at("memory"), (int64_t{8} << 30) * 1000);
  EXPECT_EQ((*nodes)[0].capacity.at("nvidia.com/gpu"), 1000);
  EXPECT_EQ((*nodes)[1].name, "node-b");
  EXPECT_EQ((*nodes)[1].capacity.count("nvidia.com/gpu"), 0u);
}

TEST(ClusterSpec, NamesTheNodeAndFieldOfAnError) {
  EXPECT_EQ(
      Error("node-a:cpu=4x").rfind("--nodes: node \"node-a\": field \"cpu\": quantity \"4x\"", 0),
      0u);
  EXPECT_NE(Error("node-a:cpu=1;node-b:memory=lots").find("node \"node-b\": field \"memory\""),
            std::string::npos);
  EXPECT_NE(Error("node-a:cpu=-1").find("must not be negative"), std::string::npos);
}

TEST(ClusterSpec, RejectsMalformedSpecs) {
  EXPECT_NE(Error("").find("no nodes given"), std::string::npos);
  EXPECT_NE(Error("node-a").find("expected NAME:RESOURCE=QUANTITY"), std::string::npos);
  EXPECT_NE(Error("node-a:").find("no resources given"), std::string::npos);
  EXPECT_NE(Error("node-a:cpu").find("field \"cpu\": expected RESOURCE=QUANTITY"),
            std::string::npos);
  EXPECT_NE(Error("Node_A:cpu=1").find("DNS-1123"), std::string::npos);
  EXPECT_NE(Error(":cpu=1").find("DNS-1123"), std::string::npos);
  EXPECT_NE(Error("node-a:CPU=1").find("not a resource name"), std::string::npos);
  EXPECT_NE(Error("node-a:cpu=1,cpu=2").find("\"cpu\" given twice"), std::string::npos);
  EXPECT_NE(Error("node-a:cpu=1;node-a:cpu=2").find("node \"node-a\" given twice"),
            std::string::npos);
  EXPECT_NE(Error("node-a:cpu=1;;node-b:cpu=1").find("expected NAME:RESOURCE"), std::string::npos);
}

TEST(ClusterSpec, RendersANodeObject) {
  nlohmann::json node = NodeObject(DefaultNodeSpecs()[0], "127.0.0.1");
  EXPECT_EQ(node["metadata"]["name"], "node-0");
  EXPECT_EQ(node["status"]["capacity"]["cpu"], "8");
  EXPECT_EQ(node["status"]["capacity"]["memory"], "32Gi");
  EXPECT_EQ(node["status"]["addresses"][0]["address"], "127.0.0.1");
}

}  // namespace
}  // namespace edl::fakekube
