#include <gtest/gtest.h>

#include "net/rpc.h"

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

}  // namespace
}  // namespace edl::net
