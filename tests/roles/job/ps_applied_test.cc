// The master's view of a PS's named pushes (roles/job/ps_process.h,
// kPsAppliedPushesPath): the answer is parsed strictly, naming the field.
#include <gtest/gtest.h>

#include "roles/job/ps_process.h"

namespace edl::roles::job {
namespace {

TEST(PsApplied, ParsesWhatThePsAnswers) {
  auto r = ParseAppliedPushes(
      R"({"boot":"00ff","version":12,"taken":[[40,2]],"settled":[[10,12],[20,20]]})");
  ASSERT_TRUE(r.ok()) << r.status().message();
  EXPECT_EQ(r->boot, "00ff");
  EXPECT_EQ(r->version, 12);
  EXPECT_EQ(r->state.taken, (std::vector<std::pair<int64_t, int64_t>>{{40, 2}}));
  EXPECT_EQ(r->state.settled, (std::vector<std::pair<int64_t, int64_t>>{{10, 12}, {20, 20}}));
}

TEST(PsApplied, RefusesAMalformedAnswerNamingTheField) {
  const std::vector<std::pair<std::string, std::string>> cases = {
      {"not json", "not a JSON object"},
      {R"({"version":1,"taken":[],"settled":[]})", "\"boot\""},
      {R"({"boot":"","version":1,"taken":[],"settled":[]})", "\"boot\""},
      {R"({"boot":"a","version":"1","taken":[],"settled":[]})", "\"version\""},
      {R"({"boot":"a","version":1,"settled":[]})", "\"taken\" must be an array"},
      {R"({"boot":"a","version":1,"taken":[[1]],"settled":[]})", "\"taken\"[0]"},
      {R"({"boot":"a","version":1,"taken":[],"settled":[[1,2],"x"]})", "\"settled\"[1]"},
      {R"({"boot":"a","version":1,"taken":[[0,2]],"settled":[]})", "task 0"},
      {R"({"boot":"a","version":1,"taken":[],"settled":[[5,9],[7,8]]})", "settled range [7, 8]"},
  };
  for (const auto& [text, want] : cases) {
    auto r = ParseAppliedPushes(text);
    ASSERT_FALSE(r.ok()) << text;
    EXPECT_EQ(r.status().code(), StatusCode::kInvalidArgument) << text;
    EXPECT_NE(r.status().message().find(want), std::string::npos)
        << text << " -> " << r.status().message();
  }
}

TEST(PsCheckpointHealth, ParsesWhatThePsAnswersAndRefusesTheMalformed) {
  auto h = ParseCheckpointHealth(
      R"({"version":900,"last_good_version":500,"failures":2,"failed_version":875,"error":"full"})");
  ASSERT_TRUE(h.ok()) << h.status().message();
  EXPECT_EQ(h->version, 900);
  EXPECT_EQ(h->last_good_version, 500);
  EXPECT_EQ(h->failures, 2);
  EXPECT_EQ(h->failed_version, 875);
  EXPECT_EQ(h->error, "full");
  const std::vector<std::pair<std::string, std::string>> cases = {
      {"[]", "not a JSON object"},
      {R"({"last_good_version":1,"failures":0,"failed_version":-1,"error":""})", "\"version\""},
      {R"({"version":1,"last_good_version":1.5,"failures":0,"failed_version":-1,"error":""})",
       "\"last_good_version\""},
      {R"({"version":1,"last_good_version":1,"failures":-1,"failed_version":-1,"error":""})",
       "negative"},
      {R"({"version":1,"last_good_version":1,"failures":0,"failed_version":-1,"error":3})",
       "\"error\""},
  };
  for (const auto& [text, want] : cases) {
    auto r = ParseCheckpointHealth(text);
    ASSERT_FALSE(r.ok()) << text;
    EXPECT_NE(r.status().message().find(want), std::string::npos)
        << text << " -> " << r.status().message();
  }
}

}  // namespace
}  // namespace edl::roles::job
