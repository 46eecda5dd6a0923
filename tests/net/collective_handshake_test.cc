// The ring handshake's wire format (net/collective/handshake.h): hellos and
// answers round-trip, and malformed ones are refused with a reason.
#include <gtest/gtest.h>

#include <cstring>
#include <string>

#include "net/collective/handshake.h"

namespace edl::net {
namespace {

TEST(RingHandshake, RoundTripsAHello) {
  RingHello hello{42, 3, 4, 5, "secret", "boot/host", "/edl-ring-1-ab"};
  auto decoded = DecodeRingHello(EncodeRingHello(hello));
  ASSERT_TRUE(decoded.ok()) << decoded.status().message();
  EXPECT_EQ(decoded->ring_version, 42u);
  EXPECT_EQ(decoded->from_rank, 3u);
  EXPECT_EQ(decoded->to_rank, 4u);
  EXPECT_EQ(decoded->world_size, 5u);
  EXPECT_EQ(decoded->secret, "secret");
  EXPECT_EQ(decoded->host, "boot/host");
  EXPECT_EQ(decoded->segment, "/edl-ring-1-ab");
}

TEST(RingHandshake, RoundTripsAHelloThatOffersNoSharedMemory) {
  auto decoded = DecodeRingHello(EncodeRingHello({1, 0, 1, 2, "abc", "", ""}));
  ASSERT_TRUE(decoded.ok()) << decoded.status().message();
  EXPECT_EQ(decoded->secret, "abc");
  EXPECT_TRUE(decoded->host.empty());
  EXPECT_TRUE(decoded->segment.empty());
}

// Sets the little-endian u32 at `offset` of `bytes` to 0xffffffff.
std::string WithHugeField(std::string bytes, size_t offset) {
  for (size_t i = 0; i < 4; ++i) bytes[offset + i] = '\xff';
  return bytes;
}

TEST(RingHandshake, RejectsMalformedHellos) {
  std::string good = EncodeRingHello({1, 0, 1, 2, "abc", "b/h", "/seg"});
  ASSERT_EQ(good.size(), kRingHelloHeaderBytes + 3 + 3 + 4);
  EXPECT_FALSE(DecodeRingHello("").ok());
  EXPECT_FALSE(DecodeRingHello(good.substr(0, 39)).ok());  // truncated
  EXPECT_FALSE(DecodeRingHello(good.substr(0, good.size() - 1)).ok());
  EXPECT_FALSE(DecodeRingHello(good + "x").ok());  // trailing
  std::string bad_magic = good;
  bad_magic[0] = 'X';
  EXPECT_FALSE(DecodeRingHello(bad_magic).ok());
  std::string bad_wire = good;
  bad_wire[4] = 9;
  EXPECT_FALSE(DecodeRingHello(bad_wire).ok());
  std::string old_wire = good;
  old_wire[4] = 1;  // a version-1 peer is refused, not misread
  EXPECT_FALSE(DecodeRingHello(old_wire).ok());
  const std::pair<size_t, const char*> fields[] = {
      {28, "secret"}, {32, "host identity"}, {36, "segment name"}};
  for (const auto& [offset, name] : fields) {
    auto decoded = DecodeRingHello(WithHugeField(good.substr(0, 40), offset));
    ASSERT_FALSE(decoded.ok()) << name;
    EXPECT_EQ(decoded.status().code(), StatusCode::kInvalidArgument);
    EXPECT_NE(decoded.status().message().find(name), std::string::npos)
        << decoded.status().message();
  }
  // The tail must have exactly the lengths the header announced.
  RingHello hello;
  auto tail_len = DecodeRingHelloHeader(good.substr(0, 40), hello);
  ASSERT_TRUE(tail_len.ok());
  EXPECT_EQ(*tail_len, 10u);
  EXPECT_FALSE(DecodeRingHelloTail("abcb/h/se", hello).ok());
  EXPECT_TRUE(DecodeRingHelloTail("abcb/h/seg", hello).ok());
  EXPECT_EQ(hello.host, "b/h");
}

TEST(RingHandshake, RoundTripsAnswersAndRejectsMalformedOnes) {
  auto ok = DecodeRingAnswer(EncodeRingAnswer(Status::Ok()));
  ASSERT_TRUE(ok.ok());
  EXPECT_EQ(ok->code, StatusCode::kOk);
  EXPECT_FALSE(ok->shared_memory);
  auto shared = DecodeRingAnswer(EncodeRingAnswer(Status::Ok(), true));
  ASSERT_TRUE(shared.ok());
  EXPECT_TRUE(shared->shared_memory);
  auto refused = DecodeRingAnswer(EncodeRingAnswer(Unauthenticated("no")));
  ASSERT_TRUE(refused.ok());
  EXPECT_EQ(refused->ToStatus().code(), StatusCode::kUnauthenticated);
  EXPECT_EQ(refused->message, "no");

  std::string good = EncodeRingAnswer(Unauthenticated("no"));
  ASSERT_EQ(good.size(), kRingAnswerHeaderBytes + 2);
  EXPECT_FALSE(DecodeRingAnswer(good.substr(0, 15)).ok());
  EXPECT_FALSE(DecodeRingAnswer(good + "!").ok());
  std::string bad_code = good;
  bad_code[4] = 99;
  EXPECT_FALSE(DecodeRingAnswer(bad_code).ok());
  std::string bad_flags = good;
  bad_flags[8] = 2;
  EXPECT_FALSE(DecodeRingAnswer(bad_flags).ok());
  std::string bad_magic = good;
  bad_magic[3] = 'Z';
  EXPECT_FALSE(DecodeRingAnswer(bad_magic).ok());
  std::string huge = good.substr(0, 16);
  huge[14] = '\x7f';
  EXPECT_FALSE(DecodeRingAnswer(huge).ok());
}

}  // namespace
}  // namespace edl::net
