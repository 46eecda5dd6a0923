// Label and field selectors with the real grammar, malformed input included.
#include <gtest/gtest.h>

#include "tests/fakekube/server/field_selector.h"
#include "tests/fakekube/server/resources.h"
#include "tests/fakekube/server/store.h"

namespace edl::fakekube {
namespace {

bool Selects(const std::string& selector, const Json& labels) {
  auto parsed = ParseLabelSelector(selector);
  EXPECT_TRUE(parsed.ok()) << selector << ": " << parsed.status().message();
  return parsed.ok() && Matches(**parsed, labels);
}

TEST(LabelSelector, SupportsEveryOperatorOfTheRealGrammar) {
  const Json labels = {{"job", "j1"}, {"role", "worker"}, {"index", "3"}};
  EXPECT_TRUE(Selects("", labels));
  EXPECT_TRUE(Selects("job=j1", labels));
  EXPECT_TRUE(Selects("job==j1,role=worker", labels));
  EXPECT_FALSE(Selects("job=j1,role=ps", labels));
  EXPECT_TRUE(Selects("role!=ps", labels));
  EXPECT_TRUE(Selects("missing!=x", labels));
  EXPECT_TRUE(Selects("role in (ps, worker)", labels));
  EXPECT_FALSE(Selects("role notin (ps,worker)", labels));
  EXPECT_TRUE(Selects("missing notin (a)", labels));
  EXPECT_TRUE(Selects("job", labels));
  EXPECT_TRUE(Selects("!missing", labels));
  EXPECT_FALSE(Selects("!job", labels));
  EXPECT_TRUE(Selects("index>2,index<4", labels));
  EXPECT_TRUE(Selects(" job = j1 ", labels));
  EXPECT_FALSE(Selects("job=j1", Json::object()));
}

TEST(LabelSelector, RefusesMalformedSelectorsNamingTheTerm) {
  for (const char* bad : {"job=j1,", "role in (a,b", "role in a,b)", "=x", "job=a b",
                          "role in (a|b)", "index>x", "!", "role ~ x"}) {
    auto parsed = ParseLabelSelector(bad);
    EXPECT_FALSE(parsed.ok()) << bad;
    if (!parsed.ok()) {
      EXPECT_NE(parsed.status().message().find("unable to parse"), std::string::npos);
    }
  }
}

TEST(FieldSelector, MatchesTheSupportedPodFields) {
  const ResourceInfo& pods = *FindResource("pods");
  Json pod = {{"metadata", {{"name", "a,b"}, {"namespace", "edl"}}},
              {"spec", {{"nodeName", "node-1"}}},
              {"status", {{"phase", "Running"}}}};
  auto selector = ParseFieldSelector(pods, "metadata.name=a\\,b,status.phase!=Failed");
  ASSERT_TRUE(selector.ok());
  EXPECT_TRUE(MatchesFields(*selector.value, pod));
  auto unscheduled = ParseFieldSelector(pods, "spec.nodeName=");
  ASSERT_TRUE(unscheduled.ok());
  EXPECT_FALSE(MatchesFields(*unscheduled.value, pod));
  EXPECT_TRUE(MatchesFields(*unscheduled.value, Json{{"metadata", {{"name", "x"}}}}));
}

TEST(FieldSelector, RefusesUnsupportedLabelsAndMissingOperators) {
  const ResourceInfo& pods = *FindResource("pods");
  auto unsupported = ParseFieldSelector(pods, "spec.containers=x");
  ASSERT_FALSE(unsupported.ok());
  EXPECT_EQ(unsupported.error.code, 400);
  EXPECT_EQ(unsupported.error.message, "field label not supported: spec.containers");
  EXPECT_FALSE(ParseFieldSelector(pods, "metadata.name").ok());
  EXPECT_FALSE(ParseFieldSelector(*FindResource("configmaps"), "status.phase=x").ok());
  EXPECT_TRUE(ParseFieldSelector(*FindResource("events"), "involvedObject.name=x").ok());
}

}  // namespace
}  // namespace edl::fakekube
