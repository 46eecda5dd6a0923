// The socket-free request handling (net/http_handling.h): routing and auth on
// parsed requests, raw-byte parsing, and a replay of the fuzz corpus.
#include "net/http_handling.h"

#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>
#include <sstream>

#include "tests/testing/paths.h"

namespace edl::net {
namespace {

constexpr char kSecret[] = "fuzz-secret";

HttpRouter TestRouter() {
  HttpRouter router(kSecret);
  router.AddRpc("/test.Echo/Echo",
                [](std::string_view body) { return Result<std::string>(std::string(body)); });
  router.AddRpc("/test.Fail/Fail", [](std::string_view) {
    return Result<std::string>(FailedPrecondition("not yet"));
  });
  router.AddGet(
      "/status",
      [] {
        return HttpResponse{200, "text/plain", "up"};
      },
      false);
  router.AddGet(
      "/metrics",
      [] {
        return HttpResponse{200, "text/plain", "m 1\n"};
      },
      true);
  return router;
}

HttpRequest Request(std::string method, std::string target,
                    std::string authorization = std::string("Bearer ") + kSecret) {
  HttpRequest request;
  request.method = std::move(method);
  request.target = std::move(target);
  request.authorization = std::move(authorization);
  return request;
}

TEST(HttpRouter, AnswersAnRpcWithItsHandlersBody) {
  HttpRequest request = Request("POST", "/test.Echo/Echo");
  request.body = Bytes::Copy("payload");
  HttpReply reply = TestRouter().Handle(request);
  EXPECT_EQ(reply.status, 200);
  EXPECT_EQ(reply.payload.Flatten(), "payload");
  EXPECT_EQ(reply.edl_status, "");
}

TEST(HttpRouter, MapsAHandlerErrorToHttpStatusAndEdlStatus) {
  HttpReply reply = TestRouter().Handle(Request("POST", "/test.Fail/Fail"));
  EXPECT_EQ(reply.status, 412);
  EXPECT_EQ(reply.edl_status, "FailedPrecondition");
  EXPECT_EQ(reply.body, "not yet");
}

TEST(HttpRouter, RefusesRequestsWithoutTheRightSecretBeforeRouting) {
  HttpRouter router = TestRouter();
  for (const char* auth : {"", "Bearer", "Bearer wrong", "Bearer fuzz-secretX",
                           "bearer fuzz-secret", "Bearer fuzz-secre"}) {
    HttpReply reply = router.Handle(Request("POST", "/test.Echo/Echo", auth));
    EXPECT_EQ(reply.status, 401) << auth;
    EXPECT_EQ(reply.edl_status, "Unauthenticated");
    // Unknown paths do not reveal themselves to strangers either.
    EXPECT_EQ(router.Handle(Request("POST", "/nope", auth)).status, 401);
  }
}

TEST(HttpRouter, AnswersUnknownPaths404AndWrongMethods405) {
  HttpRouter router = TestRouter();
  EXPECT_EQ(router.Handle(Request("POST", "/nope")).status, 404);
  EXPECT_EQ(router.Handle(Request("GET", "/test.Echo/Echo")).status, 405);
  EXPECT_EQ(router.Handle(Request("POST", "/status")).status, 405);
  EXPECT_EQ(router.Handle(Request("DELETE", "/status")).status, 405);
}

TEST(HttpRouter, ServesPublicGetsWithoutTheSecretAndIgnoresTheQuery) {
  HttpRouter router = TestRouter();
  HttpReply metrics = router.Handle(Request("GET", "/metrics?x=1", ""));
  EXPECT_EQ(metrics.status, 200);
  EXPECT_EQ(metrics.body, "m 1\n");
  EXPECT_EQ(router.Handle(Request("GET", "/status", "")).status, 401);
  EXPECT_EQ(router.Handle(Request("GET", "/status")).body, "up");
}

TEST(ParseHttpRequest, ParsesOneRequestAndReportsTheBytesUsed) {
  std::string bytes =
      "POST /a/b HTTP/1.1\r\nAuthorization: Bearer x\r\nContent-Length: 3\r\n"
      "\r\nabcGET";
  ParsedHttpRequest parsed = ParseHttpRequest(bytes, 100);
  ASSERT_EQ(parsed.kind, ParsedHttpRequest::Kind::kRequest);
  EXPECT_EQ(parsed.consumed, bytes.size() - 3);
  EXPECT_EQ(parsed.request.method, "POST");
  EXPECT_EQ(parsed.request.target, "/a/b");
  EXPECT_EQ(parsed.request.authorization, "Bearer x");
  EXPECT_EQ(parsed.request.body.view(), "abc");
  EXPECT_TRUE(parsed.request.keep_alive);
}

TEST(ParseHttpRequest, TellsIncompleteMalformedAndOversizedApart) {
  EXPECT_EQ(ParseHttpRequest("POST /a HTTP/1.1\r\nContent-Len", 100).kind,
            ParsedHttpRequest::Kind::kIncomplete);
  EXPECT_EQ(ParseHttpRequest("", 100).kind, ParsedHttpRequest::Kind::kIncomplete);
  ParsedHttpRequest bad = ParseHttpRequest("HELLO\r\n\r\n", 100);
  ASSERT_EQ(bad.kind, ParsedHttpRequest::Kind::kError);
  EXPECT_EQ(bad.error_reply.status, 400);
  EXPECT_TRUE(bad.error_reply.close);
  ParsedHttpRequest big = ParseHttpRequest("POST /a HTTP/1.1\r\nContent-Length: 101\r\n\r\n", 100);
  ASSERT_EQ(big.kind, ParsedHttpRequest::Kind::kError);
  EXPECT_EQ(big.error_reply.status, 413);
  EXPECT_EQ(big.error_reply.body, "request body exceeds the server's limit of 100 bytes");
}

TEST(ServeHttpBytes, AnswersPipelinedRequestsInOrderAndStopsAtClose) {
  std::string auth = std::string("Authorization: Bearer ") + kSecret + "\r\n";
  std::string bytes = "POST /test.Echo/Echo HTTP/1.1\r\n" + auth +
                      "Content-Length: 5\r\n\r\nfirst" + "POST /test.Echo/Echo HTTP/1.1\r\n" +
                      auth + "Connection: close\r\nContent-Length: 6\r\n\r\nsecond" +
                      "POST /test.Echo/Echo HTTP/1.1\r\n" + auth + "Content-Length: 5\r\n\r\nthird";
  std::string out = ServeHttpBytes(TestRouter(), bytes, 1000);
  size_t first = out.find("first");
  size_t second = out.find("second");
  EXPECT_NE(first, std::string::npos) << out;
  EXPECT_NE(second, std::string::npos) << out;
  EXPECT_LT(first, second);
  EXPECT_EQ(out.find("third"), std::string::npos) << out;
}

TEST(ServeHttpBytes, SurvivesEveryInputInTheFuzzCorpus) {
  std::filesystem::path dir =
      std::filesystem::path(edl::testing::SourceDir()) / "fuzz/corpus/net_http";
  ASSERT_TRUE(std::filesystem::is_directory(dir)) << dir;
  HttpRouter router = TestRouter();
  int files = 0;
  for (const auto& entry : std::filesystem::directory_iterator(dir)) {
    std::ifstream in(entry.path(), std::ios::binary);
    std::stringstream bytes;
    bytes << in.rdbuf();
    std::string out = ServeHttpBytes(router, bytes.str(), 1 << 20);
    EXPECT_TRUE(out.empty() || out.rfind("HTTP/1.", 0) == 0)
        << entry.path() << " got " << out.substr(0, 100);
    ++files;
  }
  EXPECT_GE(files, 10);
}

}  // namespace
}  // namespace edl::net
