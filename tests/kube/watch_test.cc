// WatchStream and Reflector over real sockets: events split across chunks,
// non-chunked watch bodies, half-open connections, cancellation, re-watch
// from the last resourceVersion, relist after an in-band 410 with tombstones.
#include "kube/watch.h"

#include <gtest/gtest.h>

#include <atomic>
#include <mutex>
#include <thread>

#include "tests/kube/test_api_server.h"
#include "tests/kube/test_pki.h"

namespace edl::kube {
namespace {

using testing::CertAndKey;
using testing::IssueCert;
using testing::MakeCa;
using testing::SeenRequest;
using testing::ServerConnection;
using testing::TestApiServer;

std::string PodJson(const std::string& name, const std::string& uid, const std::string& rv) {
  return Json{{"kind", "Pod"},
              {"apiVersion", "v1"},
              {"metadata", {{"name", name}, {"uid", uid}, {"resourceVersion", rv}}}}
      .dump();
}

std::string Event(const std::string& type, const std::string& object) {
  return R"({"type":")" + type + R"(","object":)" + object + "}\n";
}

std::string Bookmark(const std::string& rv) {
  return Event("BOOKMARK",
               R"({"kind":"Pod","apiVersion":"v1","metadata":{"resourceVersion":")" + rv +
                   R"(","creationTimestamp":null},"spec":{"containers":null},"status":{}})");
}

constexpr char kExpired[] =
    R"json({"type":"ERROR","object":{"kind":"Status","apiVersion":"v1","metadata":{},"status":"Failure","message":"too old resource version: 10 (40)","reason":"Expired","code":410}})json"
    "\n";

std::string PodList(const std::string& rv, const std::vector<std::string>& items) {
  std::string out = R"({"kind":"PodList","apiVersion":"v1","metadata":{"resourceVersion":")" + rv +
                    R"("},"items":[)";
  for (size_t i = 0; i < items.size(); ++i) out += (i ? "," : "") + items[i];
  return out + "]}";
}

std::unique_ptr<Client> MakeClient(const std::string& url, ClusterConfig config = {},
                                   ClientOptions options = {}) {
  config.server = url;
  Result<std::unique_ptr<Client>> c = Client::Create(config, options);
  EDL_CHECK(c.ok()) << c.status().message();
  return std::move(*c);
}

std::vector<WatchEvent> Drain(WatchStream& w) {
  std::vector<WatchEvent> out;
  while (true) {
    Result<std::optional<WatchEvent>> e = w.Next(std::chrono::seconds(10));
    EXPECT_TRUE(e.ok()) << e.status().message();
    if (!e.ok() || !e->has_value()) return out;
    out.push_back(**e);
  }
}

TEST(WatchStream, DecodesEventsSplitAcrossChunksOverTls) {
  CertAndKey ca = MakeCa("ca");
  CertAndKey cert = IssueCert(ca, "apiserver", {"127.0.0.1"}, {});
  std::string body =
      Event("ADDED", PodJson("w-0", "u0", "11")) +
      Event("MODIFIED",
            R"({"metadata":{"name":"w-0","annotations":{"a":"東京"},"resourceVersion":"12"}})") +
      Bookmark("13") + Event("DELETED", PodJson("w-0", "u0", "14"));
  TestApiServer server(
      [&](const SeenRequest& r, ServerConnection& c) {
        c.StartChunked(200);
        // Odd pieces: mid-event, several events at once, mid-UTF-8.
        size_t cuts[] = {5, 40, 41, body.find("東") + 1, body.size() - 3, body.size()};
        size_t at = 0;
        for (size_t cut : cuts) {
          c.Chunk(std::string_view(body).substr(at, cut - at));
          at = cut;
        }
        c.EndChunked();
      },
      TestApiServer::Tls{cert, ""});
  ClusterConfig config;
  config.ca_pem = ca.cert_pem;
  config.token = "t";
  auto client = MakeClient(server.url(), config);
  ListOptions o;
  o.label_selector = "edl-job=j1";
  o.resource_version = "10";
  Result<std::unique_ptr<WatchStream>> w = client->Watch(Pods(), "edl", o);
  ASSERT_TRUE(w.ok()) << w.status().message();
  std::vector<WatchEvent> events = Drain(**w);
  ASSERT_EQ(events.size(), 4u);
  EXPECT_EQ(events[0].type, WatchEvent::Type::kAdded);
  EXPECT_EQ(events[1].object["metadata"]["annotations"]["a"], "東京");
  EXPECT_EQ(events[2].type, WatchEvent::Type::kBookmark);
  EXPECT_EQ(events[3].type, WatchEvent::Type::kDeleted);
  SeenRequest seen = server.requests().at(0);
  EXPECT_EQ(seen.Path(), "/api/v1/namespaces/edl/pods");
  EXPECT_EQ(seen.Query("watch"), "1");
  EXPECT_EQ(seen.Query("resourceVersion"), "10");
  EXPECT_EQ(seen.Query("allowWatchBookmarks"), "true");
  EXPECT_EQ(seen.Query("timeoutSeconds"), "300");
  EXPECT_EQ(seen.Query("labelSelector"), "edl-job=j1");
  EXPECT_EQ(seen.Header("authorization"), "Bearer t");
}

TEST(WatchStream, AcceptsANonChunkedExpiredAnswer) {
  TestApiServer server([&](const SeenRequest& r, ServerConnection& c) {
    c.Reply(200, std::string(kExpired).substr(0, sizeof(kExpired) - 2));  // no final \n
  });
  auto client = MakeClient(server.url());
  Result<std::unique_ptr<WatchStream>> w = client->Watch(Pods(), "edl", ListOptions{});
  ASSERT_TRUE(w.ok()) << w.status().message();
  std::vector<WatchEvent> events = Drain(**w);
  ASSERT_EQ(events.size(), 1u);
  EXPECT_EQ(events[0].type, WatchEvent::Type::kError);
  EXPECT_EQ(events[0].object["code"], 410);
}

TEST(WatchStream, ReportsAGarbageLineAndThenStaysFailed) {
  TestApiServer server([&](const SeenRequest& r, ServerConnection& c) {
    c.StartChunked(200);
    c.Chunk("not json\n");
    c.Hang(std::chrono::seconds(30));
  });
  auto client = MakeClient(server.url());
  auto w = client->Watch(Pods(), "edl", ListOptions{});
  ASSERT_TRUE(w.ok()) << w.status().message();
  Result<std::optional<WatchEvent>> e = (*w)->Next(std::chrono::seconds(10));
  ASSERT_FALSE(e.ok());
  EXPECT_NE(e.status().message().find("watch event line 1: not JSON"), std::string::npos)
      << e.status().message();
  EXPECT_FALSE((*w)->Next(std::chrono::seconds(10)).ok());
  server.Stop();
}

TEST(WatchStream, AbandonsAHalfOpenConnectionAfterTheReadDeadline) {
  TestApiServer server([&](const SeenRequest& r, ServerConnection& c) {
    c.StartChunked(200);
    c.Chunk(Event("ADDED", PodJson("a", "ua", "11")));
    c.Hang(std::chrono::seconds(30));  // then silence, like a dead peer
  });
  auto client = MakeClient(server.url());
  auto w = client->Watch(Pods(), "edl", ListOptions{});
  ASSERT_TRUE(w.ok()) << w.status().message();
  Result<std::optional<WatchEvent>> first = (*w)->Next(std::chrono::seconds(10));
  ASSERT_TRUE(first.ok() && first->has_value());
  Result<std::optional<WatchEvent>> silent = (*w)->Next(std::chrono::milliseconds(200));
  ASSERT_FALSE(silent.ok());
  EXPECT_EQ(silent.status().code(), StatusCode::kDeadlineExceeded);
  server.Stop();
}

TEST(WatchStream, OpeningTimesOutWhenTheServerSaysNothing) {
  TestApiServer server(
      [&](const SeenRequest& r, ServerConnection& c) { c.Hang(std::chrono::seconds(30)); });
  ClientOptions options;
  options.request_timeout = std::chrono::milliseconds(200);
  auto client = MakeClient(server.url(), {}, options);
  auto w = client->Watch(Pods(), "edl", ListOptions{});
  ASSERT_FALSE(w.ok());
  EXPECT_EQ(w.status().code(), StatusCode::kDeadlineExceeded);
  server.Stop();
}

TEST(WatchStream, CancelAbortsABlockedNext) {
  TestApiServer server([&](const SeenRequest& r, ServerConnection& c) {
    c.StartChunked(200);
    c.Hang(std::chrono::seconds(30));
  });
  auto client = MakeClient(server.url());
  auto w = client->Watch(Pods(), "edl", ListOptions{});
  ASSERT_TRUE(w.ok()) << w.status().message();
  WatchStream* stream = w->get();
  std::thread canceller([&] {
    // Usually lets Next() block first; a Cancel() that comes before Next()
    // must give the same answer, so the test does not depend on it.
    std::this_thread::sleep_for(std::chrono::milliseconds(50));
    stream->Cancel();
  });
  Result<std::optional<WatchEvent>> e = stream->Next(std::chrono::seconds(30));
  canceller.join();
  ASSERT_FALSE(e.ok());
  EXPECT_EQ(e.status().code(), StatusCode::kUnavailable);
  server.Stop();
}

TEST(WatchStream, ReturnsAnHttpErrorAsItsStatus) {
  TestApiServer server([&](const SeenRequest& r, ServerConnection& c) {
    c.Reply(403,
            R"({"kind":"Status","reason":"Forbidden","message":"pods is forbidden","code":403})");
  });
  auto client = MakeClient(server.url());
  auto w = client->Watch(Pods(), "edl", ListOptions{});
  ASSERT_FALSE(w.ok());
  EXPECT_EQ(KubeReason(w.status()), "Forbidden");
  EXPECT_NE(w.status().message().find("kube: GET /api/v1/namespaces/edl/pods: 403"),
            std::string::npos)
      << w.status().message();
}

// Records what a Reflector's handler saw.
struct Recorder {
  void operator()(const WatchEvent& e) {
    std::lock_guard<std::mutex> lock(mu);
    events.push_back(e);
  }
  std::vector<WatchEvent> Snapshot() {
    std::lock_guard<std::mutex> lock(mu);
    return events;
  }
  size_t Size() { return Snapshot().size(); }
  std::mutex mu;
  std::vector<WatchEvent> events;
};

std::string Describe(const WatchEvent& e) {
  return std::string(WatchEventTypeName(e.type)) + " " +
         e.object["metadata"].value("name", std::string()) + (e.tombstone ? " tombstone" : "");
}

bool IsWatch(const SeenRequest& r) { return r.Query("watch") == "1"; }

TEST(Reflector, RewatchesFromTheLastResourceVersionAfterACleanClose) {
  std::atomic<int> watches{0};
  TestApiServer server([&](const SeenRequest& r, ServerConnection& c) {
    if (!IsWatch(r)) {
      c.Reply(200, PodList("10", {PodJson("a", "ua", "5")}));
      return;
    }
    if (watches++ == 0) {
      c.StartChunked(200);
      c.Chunk(Event("ADDED", PodJson("b", "ub", "11")));
      c.Chunk(Bookmark("15"));
      c.EndChunked();  // the server's timeoutSeconds ran out
    } else {
      c.StartChunked(200);
      c.Hang(std::chrono::seconds(30));
    }
  });
  auto client = MakeClient(server.url());
  Recorder recorder;
  Reflector::Options options;
  options.resource = Pods();
  options.ns = "edl";
  options.label_selector = "edl-job=j1";
  Reflector reflector(*client, options, std::ref(recorder));
  reflector.Start();
  ASSERT_TRUE(reflector.WaitForSync(std::chrono::seconds(10)));
  ASSERT_TRUE(server.WaitForRequests(3));
  ASSERT_TRUE(testing::WaitFor([&] { return reflector.last_resource_version() == "15"; }));
  reflector.Stop();
  std::vector<SeenRequest> seen = server.requests();
  ASSERT_GE(seen.size(), 3u);
  EXPECT_FALSE(IsWatch(seen[0]));
  EXPECT_EQ(seen[0].Query("labelSelector"), "edl-job=j1");
  EXPECT_TRUE(IsWatch(seen[1]));
  EXPECT_EQ(seen[1].Query("resourceVersion"), "10");  // the LIST's RV
  EXPECT_EQ(seen[1].Query("allowWatchBookmarks"), "true");
  EXPECT_TRUE(IsWatch(seen[2]));
  EXPECT_EQ(seen[2].Query("resourceVersion"), "15");  // the bookmark's RV
  EXPECT_EQ(seen[2].Query("labelSelector"), "edl-job=j1");
  EXPECT_EQ(reflector.relists(), 1);
  std::vector<WatchEvent> events = recorder.Snapshot();
  ASSERT_EQ(events.size(), 2u);  // no BOOKMARK
  EXPECT_EQ(Describe(events[0]), "ADDED a");
  EXPECT_EQ(Describe(events[1]), "ADDED b");
}

TEST(Reflector, RelistsAfterAnInBand410AndTombstonesVanishedPods) {
  std::atomic<int> lists{0};
  std::atomic<int> watches{0};
  TestApiServer server([&](const SeenRequest& r, ServerConnection& c) {
    if (!IsWatch(r)) {
      if (lists++ == 0) {
        c.Reply(200, PodList("10", {PodJson("a", "ua", "5"), PodJson("b", "ub", "6")}));
      } else {  // b vanished while we were away, a changed, c is new
        c.Reply(200, PodList("40", {PodJson("a", "ua", "31"), PodJson("c", "uc", "32")}));
      }
      return;
    }
    c.StartChunked(200);
    if (watches++ == 0) {
      c.Chunk(kExpired);  // HTTP 200 + ERROR event, then the end
      c.EndChunked();
    } else {
      c.Hang(std::chrono::seconds(30));
    }
  });
  auto client = MakeClient(server.url());
  Recorder recorder;
  Reflector::Options options;
  options.resource = Pods();
  options.ns = "edl";
  Reflector reflector(*client, options, std::ref(recorder));
  reflector.Start();
  ASSERT_TRUE(testing::WaitFor([&] { return watches.load() >= 2; }));
  ASSERT_TRUE(testing::WaitFor([&] { return recorder.Size() >= 5; }));
  EXPECT_EQ(reflector.relists(), 2);
  EXPECT_EQ(reflector.last_resource_version(), "40");
  reflector.Stop();
  std::vector<WatchEvent> events = recorder.Snapshot();
  ASSERT_EQ(events.size(), 5u);
  EXPECT_EQ(Describe(events[0]), "ADDED a");
  EXPECT_EQ(Describe(events[1]), "ADDED b");
  EXPECT_EQ(Describe(events[2]), "DELETED b tombstone");
  EXPECT_EQ(events[2].object["metadata"]["resourceVersion"],
            "6");  // last known state
  EXPECT_EQ(Describe(events[3]), "MODIFIED a");
  EXPECT_EQ(Describe(events[4]), "ADDED c");
  std::vector<SeenRequest> seen = server.requests();
  ASSERT_EQ(seen.size(), 4u);
  EXPECT_EQ(seen[1].Query("resourceVersion"), "10");
  EXPECT_FALSE(IsWatch(seen[2]));  // the relist
  EXPECT_EQ(seen[3].Query("resourceVersion"), "40");
}

TEST(Reflector, AbandonsAHalfOpenWatchAfterTheReadDeadline) {
  std::atomic<int> watches{0};
  TestApiServer server([&](const SeenRequest& r, ServerConnection& c) {
    if (!IsWatch(r)) {
      c.Reply(200, PodList("10", {}));
      return;
    }
    c.StartChunked(200);
    if (watches++ == 0) c.Chunk(Event("ADDED", PodJson("a", "ua", "12")));
    c.Hang(std::chrono::seconds(30));  // and then nothing, ever
  });
  auto client = MakeClient(server.url());
  Recorder recorder;
  Reflector::Options options;
  options.resource = Pods();
  options.ns = "edl";
  options.read_deadline = std::chrono::milliseconds(300);
  Reflector reflector(*client, options, std::ref(recorder));
  reflector.Start();
  ASSERT_TRUE(testing::WaitFor([&] { return watches.load() >= 2; }));
  reflector.Stop();
  std::vector<SeenRequest> seen = server.requests();
  ASSERT_GE(seen.size(), 3u);
  EXPECT_EQ(seen[2].Query("resourceVersion"), "12");  // re-watch, no relist
  EXPECT_EQ(reflector.relists(), 1);
  server.Stop();
}

TEST(Reflector, StopInterruptsABlockedWatchAndIsIdempotent) {
  TestApiServer server([&](const SeenRequest& r, ServerConnection& c) {
    if (!IsWatch(r)) {
      c.Reply(200, PodList("10", {}));
      return;
    }
    c.StartChunked(200);
    c.Hang(std::chrono::seconds(30));
  });
  auto client = MakeClient(server.url());
  Reflector::Options options;
  options.resource = Pods();
  Reflector reflector(*client, options, [](const WatchEvent&) {});
  reflector.Start();
  ASSERT_TRUE(server.WaitForRequests(2));
  reflector.Stop();
  reflector.Stop();
  EXPECT_EQ(server.requests().size(), 2u);
  server.Stop();
}

TEST(Reflector, RetriesAFailedListWithBackoff) {
  std::atomic<int> lists{0};
  TestApiServer server([&](const SeenRequest& r, ServerConnection& c) {
    if (!IsWatch(r)) {
      if (lists++ == 0) {
        c.Reply(500,
                R"({"kind":"Status","reason":"InternalError","message":"etcd down","code":500})");
      } else {
        c.Reply(200, PodList("10", {PodJson("a", "ua", "5")}));
      }
      return;
    }
    c.StartChunked(200);
    c.Hang(std::chrono::seconds(30));
  });
  auto client = MakeClient(server.url());
  Recorder recorder;
  Reflector::Options options;
  options.resource = Pods();
  options.ns = "edl";
  Reflector reflector(*client, options, std::ref(recorder));
  reflector.Start();
  EXPECT_TRUE(reflector.WaitForSync(std::chrono::seconds(10)));
  EXPECT_EQ(recorder.Size(), 1u);
  reflector.Stop();
  server.Stop();
}

}  // namespace
}  // namespace edl::kube
