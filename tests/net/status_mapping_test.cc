#include "net/status_mapping.h"

#include <gtest/gtest.h>

namespace edl::net {
namespace {

constexpr StatusCode kLastCode = StatusCode::kAborted;

TEST(StatusMapping, EveryCodeSurvivesTheTripThroughItsName) {
  for (int c = 0; c <= static_cast<int>(kLastCode); ++c) {
    auto code = static_cast<StatusCode>(c);
    EXPECT_EQ(ParseStatusCodeName(StatusCodeName(code)), code);
  }
  EXPECT_EQ(ParseStatusCodeName("invalidargument"), std::nullopt);
  EXPECT_EQ(ParseStatusCodeName(""), std::nullopt);
}

TEST(StatusMapping, HttpStatusesFollowTheDocumentedTable) {
  EXPECT_EQ(HttpStatusForCode(StatusCode::kOk), 200);
  EXPECT_EQ(HttpStatusForCode(StatusCode::kInvalidArgument), 400);
  EXPECT_EQ(HttpStatusForCode(StatusCode::kUnauthenticated), 401);
  EXPECT_EQ(HttpStatusForCode(StatusCode::kPermissionDenied), 403);
  EXPECT_EQ(HttpStatusForCode(StatusCode::kNotFound), 404);
  EXPECT_EQ(HttpStatusForCode(StatusCode::kAlreadyExists), 409);
  EXPECT_EQ(HttpStatusForCode(StatusCode::kAborted), 409);
  EXPECT_EQ(HttpStatusForCode(StatusCode::kFailedPrecondition), 412);
  EXPECT_EQ(HttpStatusForCode(StatusCode::kResourceExhausted), 429);
  EXPECT_EQ(HttpStatusForCode(StatusCode::kUnavailable), 503);
  EXPECT_EQ(HttpStatusForCode(StatusCode::kDeadlineExceeded), 504);
  EXPECT_EQ(HttpStatusForCode(StatusCode::kIoError), 500);
  EXPECT_EQ(HttpStatusForCode(StatusCode::kInternal), 500);
}

TEST(StatusMapping, EveryCodeWithAnHttpStatusOfItsOwnMapsBackToItself) {
  for (int c = 0; c <= static_cast<int>(kLastCode); ++c) {
    auto code = static_cast<StatusCode>(c);
    const int http = HttpStatusForCode(code);
    if (http == 500 || code == StatusCode::kAlreadyExists) continue;  // shared statuses
    EXPECT_EQ(CodeForHttpStatus(http), code) << StatusCodeName(code) << " -> " << http;
  }
  // 409 stands for AlreadyExists and Aborted; without a header it reads as
  // the more general Aborted, which still maps to 409.
  EXPECT_EQ(CodeForHttpStatus(409), StatusCode::kAborted);
  EXPECT_EQ(CodeForHttpStatus(403), StatusCode::kPermissionDenied);
  EXPECT_EQ(CodeForHttpStatus(429), StatusCode::kResourceExhausted);
}

TEST(StatusMapping, StatusesOnlyTheServerProducesReadAsTheirNearestCode) {
  EXPECT_EQ(CodeForHttpStatus(405), StatusCode::kUnimplemented);
  EXPECT_EQ(CodeForHttpStatus(413), StatusCode::kInvalidArgument);
  EXPECT_EQ(CodeForHttpStatus(431), StatusCode::kInvalidArgument);
  EXPECT_EQ(CodeForHttpStatus(502), StatusCode::kInternal);
  EXPECT_EQ(CodeForHttpStatus(418), StatusCode::kInternal);
  EXPECT_EQ(CodeForHttpStatus(204), StatusCode::kOk);
}

}  // namespace
}  // namespace edl::net
