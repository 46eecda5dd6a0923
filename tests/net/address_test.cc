#include <gtest/gtest.h>

#include "net/rpc.h"
#include "net/status_mapping.h"

namespace edl::net {
namespace {

TEST(ParseAddress, SplitsHostAndPort) {
  std::string host;
  int port = 0;
  ASSERT_TRUE(ParseAddress("10.0.0.5:7000", "--master", &host, &port).ok());
  EXPECT_EQ(host, "10.0.0.5");
  EXPECT_EQ(port, 7000);
  ASSERT_TRUE(ParseAddress("edl-master.default.svc:80", "--master", &host, &port).ok());
  EXPECT_EQ(host, "edl-master.default.svc");
  EXPECT_EQ(port, 80);
  ASSERT_TRUE(ParseAddress("[::1]:9", "--master", &host, &port).ok());
  EXPECT_EQ(host, "::1");
  EXPECT_EQ(port, 9);
}

TEST(ParseAddress, RejectsMalformedAddressesNamingTheFlag) {
  const char* bad[] = {"",           "host",    ":7000",    "host:",   "host:abc",
                       "host:70000", "host:-1", "host:12x", "::1:7000"};
  for (const char* address : bad) {
    std::string host = "unchanged";
    int port = -5;
    Status status = ParseAddress(address, "--master", &host, &port);
    EXPECT_EQ(status.code(), StatusCode::kInvalidArgument) << address;
    EXPECT_EQ(status.message().rfind("--master: ", 0), 0u) << status.message();
    EXPECT_EQ(host, "unchanged");
    EXPECT_EQ(port, -5);
  }
  Status status = ParseAddress("host:abc", "--master", nullptr, nullptr);
  EXPECT_EQ(status.message(), "--master: port \"abc\" in \"host:abc\" must be an integer 0-65535");
}

TEST(StatusMapping, EveryCodeSurvivesTheTripThroughItsName) {
  for (int c = 0; c <= static_cast<int>(StatusCode::kFailedPrecondition); ++c) {
    auto code = static_cast<StatusCode>(c);
    EXPECT_EQ(ParseStatusCodeName(StatusCodeName(code)), code);
  }
  EXPECT_EQ(ParseStatusCodeName("invalidargument"), std::nullopt);
  EXPECT_EQ(ParseStatusCodeName(""), std::nullopt);
}

TEST(StatusMapping, HttpStatusesFollowTheDocumentedTable) {
  EXPECT_EQ(HttpStatusForCode(StatusCode::kInvalidArgument), 400);
  EXPECT_EQ(HttpStatusForCode(StatusCode::kNotFound), 404);
  EXPECT_EQ(HttpStatusForCode(StatusCode::kUnauthenticated), 401);
  EXPECT_EQ(HttpStatusForCode(StatusCode::kFailedPrecondition), 412);
  EXPECT_EQ(HttpStatusForCode(StatusCode::kUnavailable), 503);
  EXPECT_EQ(HttpStatusForCode(StatusCode::kDeadlineExceeded), 504);
  EXPECT_EQ(HttpStatusForCode(StatusCode::kIoError), 500);
  EXPECT_EQ(HttpStatusForCode(StatusCode::kInternal), 500);
  for (int http : {400, 401, 404, 412, 503, 504}) {
    EXPECT_EQ(HttpStatusForCode(CodeForHttpStatus(http)), http);
  }
  EXPECT_EQ(CodeForHttpStatus(502), StatusCode::kInternal);
  EXPECT_EQ(CodeForHttpStatus(413), StatusCode::kInvalidArgument);
}

}  // namespace
}  // namespace edl::net
