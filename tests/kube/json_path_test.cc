#include "kube/json_path.h"

#include <gtest/gtest.h>

namespace edl::kube {
namespace {

TEST(StringAt, ReadsANestedStringAndTreatsEverythingElseAsAbsent) {
  const nlohmann::json pod = {{"metadata", {{"name", "p"}, {"labels", 3}}},
                              {"status", "not an object"}};
  EXPECT_EQ(StringAt(pod, {"metadata", "name"}), "p");
  EXPECT_EQ(StringAt(pod, {"metadata", "labels"}), "");       // not a string
  EXPECT_EQ(StringAt(pod, {"metadata", "labels", "x"}), "");  // not an object on the way
  EXPECT_EQ(StringAt(pod, {"status", "phase"}), "");          // a string on the way
  EXPECT_EQ(StringAt(pod, {"spec"}), "");                     // missing
  EXPECT_EQ(StringAt(nlohmann::json::array(), {"a"}), "");
  EXPECT_EQ(FindAt(pod, {"metadata"}), &pod["metadata"]);
  EXPECT_EQ(FindAt(pod, {"nope"}), nullptr);
}

}  // namespace
}  // namespace edl::kube
