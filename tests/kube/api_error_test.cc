// DecodeApiError, ToStatus and KubeReason on well-formed and malformed bodies.
#include <gtest/gtest.h>

#include "kube/client.h"

namespace edl::kube {
namespace {

TEST(DecodeApiError, ReadsAStatusBody) {
  ApiError e = DecodeApiError(
      409,
      R"({"kind":"Status","apiVersion":"v1","metadata":{},"status":"Failure","message":"pods \"ps-0\" already exists","reason":"AlreadyExists","details":{"name":"ps-0","kind":"pods"},"code":409})");
  EXPECT_EQ(e.http_code, 409);
  EXPECT_EQ(e.reason, "AlreadyExists");
  EXPECT_EQ(e.message, "pods \"ps-0\" already exists");
  EXPECT_EQ(e.details["name"], "ps-0");
  Status s = ToStatus("POST", "/api/v1/namespaces/edl/pods", e);
  EXPECT_EQ(s.code(), StatusCode::kAlreadyExists);
  EXPECT_EQ(s.message(),
            "kube: POST /api/v1/namespaces/edl/pods: 409 AlreadyExists: pods "
            "\"ps-0\" already exists");
  EXPECT_EQ(KubeReason(s), "AlreadyExists");
}

TEST(DecodeApiError, TurnsANonJsonBodyIntoTheMessage) {
  ApiError e = DecodeApiError(502, "<html>\n<body>Bad Gateway</body>\n</html>\n");
  EXPECT_EQ(e.http_code, 502);
  EXPECT_EQ(e.reason, "InternalError");
  EXPECT_EQ(e.message, "<html> <body>Bad Gateway</body> </html>");
  EXPECT_TRUE(e.details.is_null());
  EXPECT_EQ(ToStatus("GET", "/x", e).code(), StatusCode::kUnavailable);
}

TEST(DecodeApiError, ShortensAHugeBody) {
  ApiError e = DecodeApiError(500, std::string(100000, 'x'));
  EXPECT_LT(e.message.size(), 300u);
}

TEST(DecodeApiError, FillsInAnEmptyBody) {
  ApiError e = DecodeApiError(404, "");
  EXPECT_EQ(e.reason, "NotFound");
  EXPECT_EQ(e.message,
            "the server responded with the status code 404 but did not return "
            "more information");
  EXPECT_EQ(KubeReason(ToStatus("GET", "/api/v1/namespaces/n/pods/x", e)), "NotFound");
}

TEST(DecodeApiError, IgnoresFieldsOfTheWrongType) {
  ApiError e = DecodeApiError(
      403, R"({"kind":"Status","reason":17,"message":["no"],"details":"x","code":"403"})");
  EXPECT_EQ(e.http_code, 403);
  EXPECT_EQ(e.reason, "Forbidden");
  EXPECT_NE(e.message.find("status code 403"), std::string::npos);
  EXPECT_TRUE(e.details.is_null());
  ApiError array = DecodeApiError(400, "[1,2,3]");
  EXPECT_EQ(array.reason, "BadRequest");
}

TEST(DecodeApiError, TakesTheCodeFromAnInBandStatus) {
  ApiError e = DecodeApiError(0, R"({"kind":"Status","reason":"Expired","code":410})");
  EXPECT_EQ(e.http_code, 410);
  EXPECT_EQ(ToStatus("GET", "/p", e).code(), StatusCode::kFailedPrecondition);
  ApiError http = DecodeApiError(500, R"({"code":410})");
  EXPECT_EQ(http.http_code, 500);  // the HTTP status wins when there is one
}

TEST(ToStatus, MapsCodesAndKeepsReasons) {
  struct Case {
    int code;
    const char* reason;
    StatusCode want;
  } cases[] = {
      {400, "BadRequest", StatusCode::kInvalidArgument},
      {422, "Invalid", StatusCode::kInvalidArgument},
      {401, "Unauthorized", StatusCode::kUnauthenticated},
      {403, "Forbidden", StatusCode::kPermissionDenied},
      {429, "TooManyRequests", StatusCode::kResourceExhausted},
      {404, "NotFound", StatusCode::kNotFound},
      {409, "AlreadyExists", StatusCode::kAlreadyExists},
      {410, "Expired", StatusCode::kFailedPrecondition},
      {504, "Timeout", StatusCode::kDeadlineExceeded},
      {500, "InternalError", StatusCode::kUnavailable},
      {503, "ServiceUnavailable", StatusCode::kUnavailable},
  };
  for (const Case& c : cases) {
    ApiError e{c.code, c.reason, "m", nullptr};
    Status s = ToStatus("GET", "/api/v1/pods", e);
    EXPECT_EQ(s.code(), c.want) << c.code;
    EXPECT_EQ(KubeReason(s), c.reason);
  }
  // A 409 Conflict is told apart from AlreadyExists.
  Status conflict = ToStatus("PATCH", "/p", ApiError{409, "Conflict", "m", nullptr});
  EXPECT_EQ(conflict.code(), StatusCode::kAborted);
  EXPECT_EQ(KubeReason(conflict), "Conflict");
}

TEST(KubeReason, IsEmptyForStatusesNotFromTheApiServer) {
  EXPECT_EQ(KubeReason(Status::Ok()), "");
  EXPECT_EQ(KubeReason(Unavailable("kube: GET /api/v1/pods: 127.0.0.1:1: cannot connect")), "");
  EXPECT_EQ(KubeReason(Unavailable("something else: 404 NotFound: x")), "");
  Status wrapped = ToStatus("GET", "/p", ApiError{404, "NotFound", "x", nullptr})
                       .WithPrefix("creating worker 3");
  EXPECT_EQ(KubeReason(wrapped), "NotFound");
}

}  // namespace
}  // namespace edl::kube
