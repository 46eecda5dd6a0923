// WatchDecoder: bytes of a watch body, in arbitrary chunks, to events.
#include <gtest/gtest.h>

#include "kube/watch.h"

namespace edl::kube {
namespace {

constexpr char kAdded[] =
    R"({"type":"ADDED","object":{"kind":"Pod","metadata":{"name":"w-0","resourceVersion":"11"}}})"
    "\n";

WatchEvent NextOk(WatchDecoder& d) {
  Result<std::optional<WatchEvent>> e = d.Next();
  EXPECT_TRUE(e.ok()) << e.status().message();
  EXPECT_TRUE(e.ok() && e->has_value());
  return e.ok() && e->has_value() ? **e : WatchEvent{WatchEvent::Type::kError, {}};
}

bool NothingYet(WatchDecoder& d) {
  Result<std::optional<WatchEvent>> e = d.Next();
  return e.ok() && !e->has_value();
}

TEST(WatchDecoder, SplitsAnEventThatSpansTwoChunks) {
  WatchDecoder d;
  std::string line = kAdded;
  d.Feed(line.substr(0, 17));
  EXPECT_TRUE(NothingYet(d));
  EXPECT_EQ(d.buffered(), 17u);
  d.Feed(line.substr(17));
  WatchEvent e = NextOk(d);
  EXPECT_EQ(e.type, WatchEvent::Type::kAdded);
  EXPECT_EQ(e.object["metadata"]["name"], "w-0");
  EXPECT_FALSE(e.tombstone);
  EXPECT_TRUE(NothingYet(d));
  EXPECT_EQ(d.buffered(), 0u);
}

TEST(WatchDecoder, DecodesSeveralEventsInOneChunk) {
  WatchDecoder d;
  d.Feed(std::string(kAdded) +
         R"({"type":"MODIFIED","object":{"metadata":{"resourceVersion":"12"}}})"
         "\n"
         R"({"type":"DELETED","object":{"metadata":{"resourceVersion":"13"}}})"
         "\n"
         R"({"type":"MODI)");
  EXPECT_EQ(NextOk(d).type, WatchEvent::Type::kAdded);
  EXPECT_EQ(NextOk(d).type, WatchEvent::Type::kModified);
  WatchEvent deleted = NextOk(d);
  EXPECT_EQ(deleted.type, WatchEvent::Type::kDeleted);
  EXPECT_EQ(deleted.object["metadata"]["resourceVersion"], "13");
  EXPECT_TRUE(NothingYet(d));  // the partial fourth line waits
  EXPECT_EQ(d.buffered(), 13u);
}

TEST(WatchDecoder, FeedsByteByByte) {
  WatchDecoder d;
  std::string two = std::string(kAdded) + kAdded;
  int events = 0;
  for (char c : two) {
    d.Feed(std::string_view(&c, 1));
    Result<std::optional<WatchEvent>> e = d.Next();
    ASSERT_TRUE(e.ok()) << e.status().message();
    if (e->has_value()) ++events;
  }
  EXPECT_EQ(events, 2);
}

TEST(WatchDecoder, KeepsAMultiByteCharacterSplitAcrossChunks) {
  WatchDecoder d;
  // "Grüße 東京" with the 3-byte 東 cut after its first byte.
  std::string line =
      "{\"type\":\"ADDED\",\"object\":{\"metadata\":{\"annotations\":{\"a\":"
      "\"Gr\xC3\xBC\xC3\x9F"
      "e \xE6\x9D\xB1\xE4\xBA\xAC\"}}}}\n";
  size_t cut = line.find("\xE6") + 1;
  d.Feed(line.substr(0, cut));
  EXPECT_TRUE(NothingYet(d));
  d.Feed(line.substr(cut));
  WatchEvent e = NextOk(d);
  EXPECT_EQ(e.object["metadata"]["annotations"]["a"],
            "Gr\xC3\xBC\xC3\x9F"
            "e \xE6\x9D\xB1\xE4\xBA\xAC");
}

TEST(WatchDecoder, DecodesABookmark) {
  WatchDecoder d;
  d.Feed(
      R"({"type":"BOOKMARK","object":{"kind":"Pod","apiVersion":"v1","metadata":{"resourceVersion":"12500","creationTimestamp":null},"spec":{"containers":null},"status":{}}})"
      "\n");
  WatchEvent e = NextOk(d);
  EXPECT_EQ(e.type, WatchEvent::Type::kBookmark);
  EXPECT_EQ(e.object["metadata"]["resourceVersion"], "12500");
}

TEST(WatchDecoder, DecodesAnInBandExpiredError) {
  WatchDecoder d;
  d.Feed(
      R"json({"type":"ERROR","object":{"kind":"Status","apiVersion":"v1","metadata":{},"status":"Failure","message":"too old resource version: 12345 (12999)","reason":"Expired","code":410}})json"
      "\r\n");
  WatchEvent e = NextOk(d);
  EXPECT_EQ(e.type, WatchEvent::Type::kError);
  ApiError error = DecodeApiError(0, e.object.dump());
  EXPECT_EQ(error.http_code, 410);
  EXPECT_EQ(error.reason, "Expired");
  EXPECT_EQ(error.message, "too old resource version: 12345 (12999)");
}

TEST(WatchDecoder, NamesAGarbageLineAndGoesOn) {
  WatchDecoder d;
  d.Feed(std::string(kAdded) + "<html>502 Bad Gateway</html>\n" + kAdded);
  EXPECT_EQ(NextOk(d).type, WatchEvent::Type::kAdded);
  Result<std::optional<WatchEvent>> bad = d.Next();
  ASSERT_FALSE(bad.ok());
  EXPECT_EQ(bad.status().code(), StatusCode::kInvalidArgument);
  EXPECT_EQ(bad.status().message(), "watch event line 2: not JSON: <html>502 Bad Gateway</html>");
  EXPECT_EQ(NextOk(d).type, WatchEvent::Type::kAdded);
}

TEST(WatchDecoder, RejectsJsonThatIsNotAnEvent) {
  const char* cases[][2] = {
      {"[1,2]", "not a JSON object"},
      {R"({"object":{}})", "no string \"type\""},
      {R"({"type":7,"object":{}})", "no string \"type\""},
      {R"({"type":"RENAMED","object":{}})", "unknown type \"RENAMED\""},
      {R"({"type":"ADDED"})", "no \"object\" object"},
      {R"({"type":"ADDED","object":"pod"})", "no \"object\" object"},
      {"{\"type\":\"ADDED\",\"object\":{\"a\":\"\xC3\"}}", "not JSON"},  // bad UTF-8
      {R"({"type":"ADDED","object":{)", "not JSON"},
  };
  for (const auto& [line, what] : cases) {
    WatchDecoder d;
    d.Feed(std::string(line) + "\n");
    Result<std::optional<WatchEvent>> e = d.Next();
    ASSERT_FALSE(e.ok()) << line;
    EXPECT_NE(e.status().message().find(std::string("line 1: ") + what), std::string::npos)
        << e.status().message();
  }
}

TEST(WatchDecoder, SkipsBlankLines) {
  WatchDecoder d;
  d.Feed(std::string("\n\r\n  \n") + kAdded);
  EXPECT_EQ(NextOk(d).type, WatchEvent::Type::kAdded);
}

TEST(WatchDecoder, DecodesALastLineWithoutNewlineAtEof) {
  WatchDecoder d;
  std::string line = kAdded;
  line.pop_back();
  d.Feed(line);
  EXPECT_TRUE(NothingYet(d));
  d.Finish();
  EXPECT_EQ(NextOk(d).type, WatchEvent::Type::kAdded);
  EXPECT_TRUE(NothingYet(d));
}

TEST(WatchDecoder, ATruncatedLastLineAtEofIsAnError) {
  WatchDecoder d;
  d.Feed(R"({"type":"ADDED","obj)");
  d.Finish();
  Result<std::optional<WatchEvent>> e = d.Next();
  ASSERT_FALSE(e.ok());
  EXPECT_NE(e.status().message().find("line 1: not JSON"), std::string::npos);
}

}  // namespace
}  // namespace edl::kube
