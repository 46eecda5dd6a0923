#include "base/status.h"

#include <gtest/gtest.h>

namespace edl {
namespace {

Result<int> ParsePositive(int v) {
  if (v <= 0) return InvalidArgument("--n: must be positive, got " + std::to_string(v));
  return v;
}

Status UsesAssign(int v, int* out) {
  EDL_ASSIGN_OR_RETURN(int x, ParsePositive(v));
  *out = x;
  return Status::Ok();
}

TEST(Status, OkByDefaultAndCarriesMessageOtherwise) {
  EXPECT_TRUE(Status().ok());
  Status s = NotFound("a.json: no such file");
  EXPECT_FALSE(s.ok());
  EXPECT_EQ(s.code(), StatusCode::kNotFound);
  EXPECT_EQ(s.WithPrefix("model").message(), "model: a.json: no such file");
}

TEST(Result, HoldsValueOrError) {
  EXPECT_EQ(ParsePositive(3).value(), 3);
  EXPECT_FALSE(ParsePositive(-1).ok());
  EXPECT_EQ(ParsePositive(-1).status().message(), "--n: must be positive, got -1");
}

TEST(Result, AssignOrReturnPropagatesErrors) {
  int out = 0;
  EXPECT_TRUE(UsesAssign(5, &out).ok());
  EXPECT_EQ(out, 5);
  EXPECT_EQ(UsesAssign(0, &out).code(), StatusCode::kInvalidArgument);
}

TEST(CheckDeathTest, AbortsWithFileAndLine) {
  EXPECT_DEATH(EDL_CHECK(1 == 2) << "context", "status_test.cc:.*check failed: 1 == 2 context");
}

}  // namespace
}  // namespace edl
