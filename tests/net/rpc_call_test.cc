// RpcServer + RpcChannel over real loopback sockets: calls that succeed,
// errors that travel back with their code and message, authentication,
// and replies held by a gate (the master's journal) without a thread each.
#include <gtest/gtest.h>

#include <atomic>
#include <condition_variable>
#include <future>
#include <mutex>
#include <thread>
#include <vector>

#include "net/rpc.h"
#include "tests/net/net_test_util.h"

namespace edl::net {
namespace {

using std::chrono::seconds;
using testing::kSecret;

constexpr Millis kDeadline{10000};

// A started server with an echo RPC that counts its calls.
class RpcCallTest : public ::testing::Test {
 protected:
  void SetUp() override {
    ServerOptions options;
    options.secret = kSecret;
    options.num_threads = 2;
    server_ = std::make_unique<RpcServer>(options);
    server_->HandleRpc("/test.Echo/Echo", [this](std::string_view body) {
      ++echo_calls_;
      return Result<std::string>(std::string(body));
    });
    ASSERT_TRUE(server_->Start().ok());
  }

  std::unique_ptr<RpcChannel> Channel(std::string secret = kSecret) {
    return std::make_unique<RpcChannel>("127.0.0.1", server_->port(), secret);
  }

  std::unique_ptr<RpcServer> server_;
  std::atomic<int> echo_calls_{0};
};

TEST_F(RpcCallTest, EchoesTheRequestBody) {
  auto channel = Channel();
  Result<std::string> reply = channel->Call("/test.Echo/Echo", "hello", kDeadline);
  ASSERT_TRUE(reply.ok()) << reply.status().message();
  EXPECT_EQ(*reply, "hello");
  EXPECT_EQ(echo_calls_.load(), 1);
}

TEST_F(RpcCallTest, EchoesAnEmptyBodyAndBinaryBytes) {
  auto channel = Channel();
  Result<std::string> empty = channel->Call("/test.Echo/Echo", "", kDeadline);
  ASSERT_TRUE(empty.ok()) << empty.status().message();
  EXPECT_EQ(*empty, "");
  std::string binary("\0\r\n\r\n\xff\x01", 7);
  Result<std::string> reply = channel->Call("/test.Echo/Echo", binary, kDeadline);
  ASSERT_TRUE(reply.ok()) << reply.status().message();
  EXPECT_EQ(*reply, binary);
}

TEST_F(RpcCallTest, CarriesA64MegabyteBodyBothWays) {
  std::string body(size_t{64} << 20, '\0');
  for (size_t i = 0; i < body.size(); i += 4093) body[i] = static_cast<char>(i);
  auto channel = Channel();
  Result<std::string> reply = channel->Call("/test.Echo/Echo", body, Millis(60000));
  ASSERT_TRUE(reply.ok()) << reply.status().message();
  EXPECT_TRUE(*reply == body);
}

TEST_F(RpcCallTest, AGatherPayloadArrivesWholeInAnAlignedBlockBothWays) {
  // The handler answers the body's two halves swapped, borrowed from the
  // request block (kept alive by its owner) around an owned separator.
  server_->Stop();
  ServerOptions options;
  options.secret = kSecret;
  server_ = std::make_unique<RpcServer>(options);
  server_->HandleRpcBody("/test.Swap/Swap", [](const Bytes& body) -> Result<Payload> {
    EXPECT_EQ(reinterpret_cast<uintptr_t>(body.data()) % 64, 0u);
    const size_t half = body.size() / 2;
    Payload answer;
    answer.Borrow(body.data() + half, body.size() - half, body.owner());
    answer.Append("|");
    answer.Borrow(body.data(), half, body.owner());
    return answer;
  });
  ASSERT_TRUE(server_->Start().ok());

  auto big = std::make_shared<std::string>(size_t{3} << 20, '\0');
  for (size_t i = 0; i < big->size(); i += 7) (*big)[i] = static_cast<char>(i);
  Payload request;
  request.Append("head:");
  request.Borrow(big->data(), big->size(), big);
  request.Append(":tail");
  const std::string whole = request.Flatten();
  ASSERT_EQ(whole.size(), request.size());

  Result<Bytes> answer = Channel()->Send("/test.Swap/Swap", request, kDeadline);
  ASSERT_TRUE(answer.ok()) << answer.status().message();
  EXPECT_EQ(reinterpret_cast<uintptr_t>(answer->data()) % 64, 0u);
  const size_t half = whole.size() / 2;
  EXPECT_TRUE(answer->view() == whole.substr(half) + "|" + whole.substr(0, half));
}

TEST_F(RpcCallTest, SequentialCallsReuseOneConnection) {
  auto channel = Channel();
  for (int i = 0; i < 200; ++i) {
    std::string body = "call " + std::to_string(i);
    Result<std::string> reply = channel->Call("/test.Echo/Echo", body, kDeadline);
    ASSERT_TRUE(reply.ok()) << reply.status().message();
    ASSERT_EQ(*reply, body);
  }
  EXPECT_EQ(server_->connections_accepted(), 1u);
}

TEST_F(RpcCallTest, ConcurrentCallersOnOneChannelEachGetTheirOwnAnswer) {
  auto channel = Channel();
  std::atomic<int> wrong{0};
  std::vector<std::thread> threads;
  for (int t = 0; t < 4; ++t) {
    threads.emplace_back([&, t] {
      for (int i = 0; i < 50; ++i) {
        std::string body = std::to_string(t) + "/" + std::to_string(i);
        Result<std::string> reply = channel->Call("/test.Echo/Echo", body, kDeadline);
        if (!reply.ok() || *reply != body) ++wrong;
      }
    });
  }
  for (auto& thread : threads) thread.join();
  EXPECT_EQ(wrong.load(), 0);
  EXPECT_EQ(echo_calls_.load(), 200);
  EXPECT_EQ(server_->connections_accepted(), 1u);
}

TEST_F(RpcCallTest, ChannelsInManyThreadsAreServedConcurrently) {
  std::atomic<int> wrong{0};
  std::vector<std::thread> threads;
  for (int t = 0; t < 6; ++t) {
    threads.emplace_back([&, t] {
      auto channel = Channel();
      for (int i = 0; i < 30; ++i) {
        std::string body(1000 + t * 100 + i, static_cast<char>('a' + t));
        Result<std::string> reply = channel->Call("/test.Echo/Echo", body, kDeadline);
        if (!reply.ok() || *reply != body) ++wrong;
      }
    });
  }
  for (auto& thread : threads) thread.join();
  EXPECT_EQ(wrong.load(), 0);
  EXPECT_EQ(server_->connections_accepted(), 6u);
}

TEST_F(RpcCallTest, AWrongSecretIsUnauthenticatedAndNeverReachesTheHandler) {
  auto channel = Channel("not-the-secret");
  Result<std::string> reply = channel->Call("/test.Echo/Echo", "x", kDeadline);
  ASSERT_FALSE(reply.ok());
  EXPECT_EQ(reply.status().code(), StatusCode::kUnauthenticated);
  EXPECT_EQ(echo_calls_.load(), 0);
}

TEST_F(RpcCallTest, AMissingSecretIsAnswered401AndNeverReachesTheHandler) {
  testing::RawConnection raw(server_->port());
  ASSERT_TRUE(raw.connected());
  ASSERT_TRUE(
      raw.Send("POST /test.Echo/Echo HTTP/1.1\r\nHost: x\r\nContent-Length: 2\r\n"
               "Connection: close\r\n\r\nhi"));
  std::string response = raw.ReadUntilClosed();
  EXPECT_EQ(response.rfind("HTTP/1.1 401", 0), 0u) << response;
  EXPECT_NE(response.find("Edl-Status: Unauthenticated"), std::string::npos);
  EXPECT_EQ(echo_calls_.load(), 0);
}

TEST_F(RpcCallTest, ARelayedRequestAuthenticatesWithTheRelayHeaderAlone) {
  // As the Kubernetes API server's service proxy relays it: its own
  // Authorization consumed, the job secret in X-Edl-Authorization.
  auto relayed = [&](const std::string& secret) {
    testing::RawConnection raw(server_->port());
    EXPECT_TRUE(raw.Send(std::string("POST /test.Echo/Echo HTTP/1.1\r\nHost: x\r\n") +
                         kRelayedAuthorizationHeader + ": Bearer " + secret +
                         "\r\nContent-Length: 2\r\nConnection: close\r\n\r\nhi"));
    return raw.ReadUntilClosed();
  };
  const std::string ok = relayed(kSecret);
  EXPECT_EQ(ok.rfind("HTTP/1.1 200", 0), 0u) << ok;
  EXPECT_EQ(echo_calls_.load(), 1);
  const std::string wrong = relayed("not-the-secret");
  EXPECT_EQ(wrong.rfind("HTTP/1.1 401", 0), 0u) << wrong;
  EXPECT_EQ(echo_calls_.load(), 1);
}

TEST_F(RpcCallTest, AnUnknownPathIsNotFound) {
  auto channel = Channel();
  Result<std::string> reply = channel->Call("/test.Echo/Nope", "x", kDeadline);
  ASSERT_FALSE(reply.ok());
  EXPECT_EQ(reply.status().code(), StatusCode::kNotFound);
  EXPECT_NE(reply.status().message().find("/test.Echo/Nope"), std::string::npos);
}

TEST_F(RpcCallTest, AGetOfAnRpcPathIsMethodNotAllowed) {
  testing::RawConnection raw(server_->port());
  ASSERT_TRUE(raw.Send(std::string("GET /test.Echo/Echo HTTP/1.1\r\nHost: x\r\n"
                                   "Authorization: Bearer ") +
                       kSecret + "\r\nConnection: close\r\n\r\n"));
  std::string response = raw.ReadUntilClosed();
  EXPECT_EQ(response.rfind("HTTP/1.1 405", 0), 0u) << response;
  auto channel = Channel();
  Result<std::string> reply = channel->Get("/test.Echo/Echo", kDeadline);
  EXPECT_EQ(reply.status().code(), StatusCode::kUnimplemented);
}

TEST(RpcErrors, EveryHandlerStatusArrivesWithItsCodeAndMessage) {
  ServerOptions options;
  options.secret = kSecret;
  RpcServer server(options);
  server.HandleRpc("/test.Fail/Fail", [](std::string_view body) {
    int code = std::stoi(std::string(body));
    auto status_code = static_cast<StatusCode>(code);
    return Result<std::string>(
        Status(status_code, std::string("failed with ") + StatusCodeName(status_code)));
  });
  ASSERT_TRUE(server.Start().ok());
  RpcChannel channel("127.0.0.1", server.port(), kSecret);
  for (int code = 1; code <= static_cast<int>(StatusCode::kFailedPrecondition); ++code) {
    auto expected = static_cast<StatusCode>(code);
    Result<std::string> reply = channel.Call("/test.Fail/Fail", std::to_string(code), kDeadline);
    ASSERT_FALSE(reply.ok());
    EXPECT_EQ(reply.status().code(), expected) << StatusCodeName(expected);
    EXPECT_EQ(reply.status().message(), std::string("failed with ") + StatusCodeName(expected));
  }
  EXPECT_EQ(server.connections_accepted(), 1u);
}

TEST(RpcErrors, AHandlerThatThrowsIsAnInternalErrorAndTheServerLivesOn) {
  ServerOptions options;
  options.secret = kSecret;
  RpcServer server(options);
  server.HandleRpc("/test.Throw/Throw", [](std::string_view) -> Result<std::string> {
    throw std::runtime_error("boom");
  });
  server.HandleRpc("/test.Ok/Ok", [](std::string_view) { return Result<std::string>("ok"); });
  ASSERT_TRUE(server.Start().ok());
  RpcChannel channel("127.0.0.1", server.port(), kSecret);
  Result<std::string> thrown = channel.Call("/test.Throw/Throw", "", kDeadline);
  EXPECT_EQ(thrown.status().code(), StatusCode::kInternal);
  EXPECT_NE(thrown.status().message().find("boom"), std::string::npos);
  Result<std::string> ok = channel.Call("/test.Ok/Ok", "", kDeadline);
  ASSERT_TRUE(ok.ok()) << ok.status().message();
}

TEST(RpcGet, ServesGetHandlersWithTheSecretAndPublicOnesWithout) {
  ServerOptions options;
  options.secret = kSecret;
  RpcServer server(options);
  server.HandleGet("/status", [] {
    return HttpResponse{200, "application/json", "{\"epoch\":3}"};
  });
  server.HandleGet(
      "/metrics",
      [] {
        return HttpResponse{200, "text/plain", "edl_up 1\n"};
      },
      /*public_access=*/true);
  server.HandleGet("/broken", [] { return HttpResponse{503, "text/plain", "master is starting"}; });
  ASSERT_TRUE(server.Start().ok());

  RpcChannel good("127.0.0.1", server.port(), kSecret);
  Result<std::string> status = good.Get("/status", kDeadline);
  ASSERT_TRUE(status.ok()) << status.status().message();
  EXPECT_EQ(*status, "{\"epoch\":3}");
  Result<std::string> status_with_query = good.Get("/status?x=1", kDeadline);
  ASSERT_TRUE(status_with_query.ok());
  Result<std::string> broken = good.Get("/broken", kDeadline);
  EXPECT_EQ(broken.status().code(), StatusCode::kUnavailable);
  EXPECT_EQ(broken.status().message(), "master is starting");

  RpcChannel bad("127.0.0.1", server.port(), "wrong");
  EXPECT_EQ(bad.Get("/status", kDeadline).status().code(), StatusCode::kUnauthenticated);
  Result<std::string> metrics = bad.Get("/metrics", kDeadline);
  ASSERT_TRUE(metrics.ok()) << metrics.status().message();
  EXPECT_EQ(*metrics, "edl_up 1\n");

  testing::RawConnection raw(server.port());
  ASSERT_TRUE(raw.Send("GET /metrics HTTP/1.1\r\nHost: x\r\nConnection: close\r\n\r\n"));
  std::string response = raw.ReadUntilClosed();
  EXPECT_EQ(response.rfind("HTTP/1.1 200", 0), 0u) << response;
  EXPECT_NE(response.find("Content-Type: text/plain"), std::string::npos);
}

// A gate that keeps every release until the test lets them go.
struct HeldReplies {
  std::mutex mu;
  std::condition_variable cv;
  std::vector<std::function<void(Status)>> releases;

  void Hold(std::function<void(Status)> release) {
    std::lock_guard<std::mutex> lock(mu);
    releases.push_back(std::move(release));
    cv.notify_all();
  }
  bool WaitFor(size_t n) {
    std::unique_lock<std::mutex> lock(mu);
    return cv.wait_for(lock, seconds(30), [&] { return releases.size() >= n; });
  }
  void ReleaseAll(const Status& s) {
    std::vector<std::function<void(Status)>> all;
    {
      std::lock_guard<std::mutex> lock(mu);
      all.swap(releases);
    }
    // From another thread, as the journal's syncer does.
    std::thread([&] {
      for (auto& r : all) r(s);
    }).join();
  }
};

TEST(RpcReplyGate, RepliesWaitForTheGateWithoutHoldingAServerThread) {
  HeldReplies held;
  ServerOptions options;
  options.secret = kSecret;
  options.num_threads = 1;  // one thread serves every held call
  options.reply_gate = [&](std::function<void(Status)> release) { held.Hold(std::move(release)); };
  RpcServer server(options);
  server.HandleRpc("/test.Echo/Echo",
                   [](std::string_view body) { return Result<std::string>(std::string(body)); });
  server.HandleGet("/status", [] { return HttpResponse{200, "text/plain", "up"}; });
  ASSERT_TRUE(server.Start().ok());
  constexpr int kCalls = 16;
  std::vector<std::future<Result<std::string>>> calls;
  for (int i = 0; i < kCalls; ++i) {
    calls.push_back(std::async(std::launch::async, [&, i] {
      RpcChannel channel("127.0.0.1", server.port(), kSecret);
      return channel.Call("/test.Echo/Echo", "call " + std::to_string(i), kDeadline);
    }));
  }
  // Every call has been handled and is held at once.
  ASSERT_TRUE(held.WaitFor(kCalls));
  for (auto& c : calls) EXPECT_EQ(c.wait_for(std::chrono::seconds(0)), std::future_status::timeout);
  held.ReleaseAll(Status::Ok());
  for (int i = 0; i < kCalls; ++i) {
    Result<std::string> reply = calls[i].get();
    ASSERT_TRUE(reply.ok()) << reply.status().message();
    EXPECT_EQ(*reply, "call " + std::to_string(i));
  }
}

TEST(RpcReplyGate, AReleaseWithAnErrorSendsTheErrorInstead) {
  HeldReplies held;
  ServerOptions options;
  options.secret = kSecret;
  options.reply_gate = [&](std::function<void(Status)> release) { held.Hold(std::move(release)); };
  RpcServer server(options);
  server.HandleRpc("/test.Echo/Echo",
                   [](std::string_view body) { return Result<std::string>(std::string(body)); });
  ASSERT_TRUE(server.Start().ok());
  auto call = std::async(std::launch::async, [&] {
    RpcChannel channel("127.0.0.1", server.port(), kSecret);
    return channel.Call("/test.Echo/Echo", "x", kDeadline);
  });
  ASSERT_TRUE(held.WaitFor(1));
  held.ReleaseAll(Unavailable("journal: disk full"));
  Result<std::string> reply = call.get();
  ASSERT_FALSE(reply.ok());
  EXPECT_EQ(reply.status().code(), StatusCode::kUnavailable);
  EXPECT_EQ(reply.status().message(), "journal: disk full");
}

TEST(RpcReplyGate, AServerStoppedWhileRepliesAreHeldAnswersNoneAndAReleaseAfterIsHarmless) {
  HeldReplies held;
  ServerOptions options;
  options.secret = kSecret;
  options.reply_gate = [&](std::function<void(Status)> release) { held.Hold(std::move(release)); };
  auto server = std::make_unique<RpcServer>(options);
  server->HandleRpc("/test.Echo/Echo",
                    [](std::string_view body) { return Result<std::string>(std::string(body)); });
  ASSERT_TRUE(server->Start().ok());
  auto call = std::async(std::launch::async, [&, port = server->port()] {
    RpcChannel channel("127.0.0.1", port, kSecret);
    return channel.Call("/test.Echo/Echo", "x", kDeadline);
  });
  ASSERT_TRUE(held.WaitFor(1));
  server.reset();
  EXPECT_FALSE(call.get().ok());  // never a late success
  held.ReleaseAll(Status::Ok());
}

}  // namespace
}  // namespace edl::net
