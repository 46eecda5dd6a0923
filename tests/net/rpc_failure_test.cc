// RpcServer + RpcChannel when things go wrong: deadlines, servers that are
// down or restarted, bad bytes on the wire, oversized bodies, Stop() with
// connections open.
#include <arpa/inet.h>
#include <gtest/gtest.h>
#include <netinet/in.h>
#include <sys/socket.h>
#include <unistd.h>

#include <condition_variable>
#include <mutex>
#include <thread>

#include "base/check.h"
#include "net/rpc.h"
#include "tests/net/net_test_util.h"

namespace edl::net {
namespace {

using testing::kSecret;
using Clock = std::chrono::steady_clock;
using namespace std::string_literals;

constexpr Millis kDeadline{10000};

ServerOptions Options(int port = 0) {
  ServerOptions options;
  options.secret = kSecret;
  options.port = port;
  return options;
}

void AddEcho(RpcServer& server) {
  server.HandleRpc("/test.Echo/Echo",
                   [](std::string_view body) { return Result<std::string>(std::string(body)); });
}

// A port nothing listens on (it was just bound and released).
int UnusedPort() {
  RpcServer server(Options());
  EDL_CHECK(server.Start().ok());
  return server.port();
}

// A gate a handler waits on until the test opens it.
class Gate {
 public:
  void Wait() {
    std::unique_lock<std::mutex> lock(mu_);
    ++waiting_;
    cv_.wait(lock, [this] { return open_; });
  }
  void Open() {
    std::lock_guard<std::mutex> lock(mu_);
    open_ = true;
    cv_.notify_all();
  }
  int waiting() {
    std::lock_guard<std::mutex> lock(mu_);
    return waiting_;
  }

 private:
  std::mutex mu_;
  std::condition_variable cv_;
  bool open_ = false;
  int waiting_ = 0;
};

TEST(RpcFailure, ASlowHandlerMakesTheCallExceedItsDeadline) {
  Gate gate;
  RpcServer server(Options());
  server.HandleRpc("/test.Slow/Slow", [&](std::string_view) {
    gate.Wait();
    return Result<std::string>("late");
  });
  AddEcho(server);
  ASSERT_TRUE(server.Start().ok());
  RpcChannel channel("127.0.0.1", server.port(), kSecret);
  auto start = Clock::now();
  Result<std::string> reply = channel.Call("/test.Slow/Slow", "", Millis(200));
  auto elapsed = Clock::now() - start;
  gate.Open();
  ASSERT_FALSE(reply.ok());
  EXPECT_EQ(reply.status().code(), StatusCode::kDeadlineExceeded);
  EXPECT_NE(reply.status().message().find("200 ms"), std::string::npos) << reply.status().message();
  EXPECT_GE(elapsed, Millis(200));
  EXPECT_LT(elapsed, Millis(5000));
  EXPECT_EQ(gate.waiting(), 1);
  // The channel reconnects for the next call.
  Result<std::string> next = channel.Call("/test.Echo/Echo", "again", kDeadline);
  ASSERT_TRUE(next.ok()) << next.status().message();
  EXPECT_EQ(*next, "again");
}

TEST(RpcFailure, ACallToAServerThatIsDownIsUnavailableQuickly) {
  int port = UnusedPort();
  RpcChannel channel("127.0.0.1", port, kSecret);
  auto start = Clock::now();
  Result<std::string> reply = channel.Call("/test.Echo/Echo", "x", kDeadline);
  EXPECT_LT(Clock::now() - start, Millis(2000));
  ASSERT_FALSE(reply.ok());
  EXPECT_EQ(reply.status().code(), StatusCode::kUnavailable);
  EXPECT_NE(reply.status().message().find("127.0.0.1:" + std::to_string(port)), std::string::npos)
      << reply.status().message();
}

TEST(RpcFailure, BackoffAfterAFailedConnectNeverOutlastsTheCallsDeadline) {
  int port = UnusedPort();
  ChannelOptions options;
  options.initial_backoff = Millis(60000);
  options.max_backoff = Millis(60000);
  RpcChannel channel("127.0.0.1", port, kSecret, options);
  ASSERT_FALSE(channel.Call("/test.Echo/Echo", "x", kDeadline).ok());
  auto start = Clock::now();
  Result<std::string> reply = channel.Call("/test.Echo/Echo", "x", Millis(100));
  EXPECT_LT(Clock::now() - start, Millis(5000));
  EXPECT_EQ(reply.status().code(), StatusCode::kUnavailable);
}

TEST(RpcFailure, AChannelConnectsOnceTheServerComesUpAfterABackoff) {
  int port = UnusedPort();
  RpcChannel channel("127.0.0.1", port, kSecret);
  ASSERT_EQ(channel.Call("/test.Echo/Echo", "x", kDeadline).status().code(),
            StatusCode::kUnavailable);
  RpcServer server(Options(port));
  AddEcho(server);
  ASSERT_TRUE(server.Start().ok());
  Result<std::string> reply = channel.Call("/test.Echo/Echo", "up", kDeadline);
  ASSERT_TRUE(reply.ok()) << reply.status().message();
  EXPECT_EQ(*reply, "up");
}

TEST(RpcFailure, AServerRestartedOnTheSamePortServesTheChannelsNextCall) {
  auto first = std::make_unique<RpcServer>(Options());
  AddEcho(*first);
  ASSERT_TRUE(first->Start().ok());
  int port = first->port();
  RpcChannel channel("127.0.0.1", port, kSecret);
  ASSERT_TRUE(channel.Call("/test.Echo/Echo", "1", kDeadline).ok());
  first.reset();  // Stop()s, closing the channel's connection

  RpcServer second(Options(port));
  AddEcho(second);
  ASSERT_TRUE(second.Start().ok()) << "rebinding port " << port;
  Result<std::string> reply = channel.Call("/test.Echo/Echo", "2", kDeadline);
  ASSERT_TRUE(reply.ok()) << reply.status().message();
  EXPECT_EQ(*reply, "2");
  EXPECT_EQ(second.connections_accepted(), 1u);
}

TEST(RpcFailure, StartingOnABusyPortIsUnavailableNamingTheAddress) {
  RpcServer first(Options());
  ASSERT_TRUE(first.Start().ok());
  RpcServer second(Options(first.port()));
  Status status = second.Start();
  EXPECT_EQ(status.code(), StatusCode::kUnavailable);
  EXPECT_EQ(status.message(),
            "127.0.0.1:" + std::to_string(first.port()) + ": cannot bind: Address already in use");
  second.Stop();  // harmless on a server that never started
}

TEST(RpcFailure, MalformedBytesGet400AndTheServerKeepsServing) {
  RpcServer server(Options());
  AddEcho(server);
  ASSERT_TRUE(server.Start().ok());
  const std::string inputs[] = {
      "GARBAGE\r\n\r\n",
      "POST /test.Echo/Echo HTTP/1.1\r\nHo\0st: x\r\n\r\n"s,
      "POST /test.Echo/Echo HTTP/1.1\r\nContent-Length: zz\r\n\r\n",
      "POST /test.Echo/Echo HTTP/1.1\r\nTransfer-Encoding: chunked\r\n\r\n"
      "nothex\r\n",
      "POST /test.Echo/Echo HTTP/1.1\r\nContent-Length: 1\r\n"
      "Content-Length: 2\r\n\r\nab",
  };
  for (const std::string& input : inputs) {
    testing::RawConnection raw(server.port());
    ASSERT_TRUE(raw.connected());
    ASSERT_TRUE(raw.Send(input));
    std::string response = raw.ReadUntilClosed();
    EXPECT_EQ(response.rfind("HTTP/1.1 400", 0), 0u) << "input " << input << " got " << response;
  }
  RpcChannel channel("127.0.0.1", server.port(), kSecret);
  Result<std::string> reply = channel.Call("/test.Echo/Echo", "fine", kDeadline);
  ASSERT_TRUE(reply.ok()) << reply.status().message();
  EXPECT_TRUE(testing::WaitFor([&] { return server.open_connections() == 1; }));
}

TEST(RpcFailure, ABodyOverTheLimitIsRefusedAndTheNextCallWorks) {
  ServerOptions options = Options();
  options.max_body_bytes = 1024;
  RpcServer server(options);
  AddEcho(server);
  ASSERT_TRUE(server.Start().ok());
  RpcChannel channel("127.0.0.1", server.port(), kSecret);
  Result<std::string> reply = channel.Call("/test.Echo/Echo", std::string(1 << 20, 'x'), kDeadline);
  ASSERT_FALSE(reply.ok());
  EXPECT_EQ(reply.status().code(), StatusCode::kInvalidArgument);
  EXPECT_NE(reply.status().message().find("1024 bytes"), std::string::npos)
      << reply.status().message();
  Result<std::string> small = channel.Call("/test.Echo/Echo", "small", kDeadline);
  ASSERT_TRUE(small.ok()) << small.status().message();
}

TEST(RpcFailure, AnIdleConnectionIsClosedAfterTheIdleTimeout) {
  ServerOptions options = Options();
  options.idle_timeout = Millis(100);
  RpcServer server(options);
  AddEcho(server);
  ASSERT_TRUE(server.Start().ok());
  testing::RawConnection raw(server.port());
  ASSERT_TRUE(raw.Send("POST /test.Echo/Echo HTTP/1.1\r\nContent-Le"));
  EXPECT_TRUE(testing::WaitFor([&] { return server.connections_accepted() == 1; }));
  EXPECT_TRUE(testing::WaitFor([&] { return server.open_connections() == 0; }));
  EXPECT_EQ(raw.ReadUntilClosed(), "");
  // A channel whose connection the server timed out reconnects by itself.
  RpcChannel channel("127.0.0.1", server.port(), kSecret);
  ASSERT_TRUE(channel.Call("/test.Echo/Echo", "1", kDeadline).ok());
  EXPECT_TRUE(testing::WaitFor([&] { return server.open_connections() == 0; }));
  Result<std::string> reply = channel.Call("/test.Echo/Echo", "2", kDeadline);
  ASSERT_TRUE(reply.ok()) << reply.status().message();
}

TEST(RpcFailure, StopClosesOpenConnectionsAndIsIdempotent) {
  RpcServer server(Options());
  AddEcho(server);
  ASSERT_TRUE(server.Start().ok());
  RpcChannel channel("127.0.0.1", server.port(), kSecret);
  ASSERT_TRUE(channel.Call("/test.Echo/Echo", "x", kDeadline).ok());
  testing::RawConnection idle(server.port());
  testing::RawConnection half(server.port());
  ASSERT_TRUE(half.Send("POST /test.Echo/Echo HTTP/1.1\r\nContent-Length: 10\r\n\r\nab"));
  EXPECT_TRUE(testing::WaitFor([&] { return server.open_connections() == 3; }));
  server.Stop();
  EXPECT_EQ(server.open_connections(), 0u);
  EXPECT_EQ(idle.ReadUntilClosed(), "");
  EXPECT_EQ(half.ReadUntilClosed(), "");
  server.Stop();
  Result<std::string> reply = channel.Call("/test.Echo/Echo", "x", Millis(2000));
  EXPECT_EQ(reply.status().code(), StatusCode::kUnavailable);
}

TEST(RpcFailure, StopWhileACallIsInFlightFailsThatCallAsUnavailable) {
  Gate gate;
  RpcServer server(Options());
  server.HandleRpc("/test.Slow/Slow", [&](std::string_view) {
    gate.Wait();
    return Result<std::string>("late");
  });
  ASSERT_TRUE(server.Start().ok());
  RpcChannel channel("127.0.0.1", server.port(), kSecret);
  Result<std::string> reply = Status(Internal("not called"));
  std::thread caller([&] { reply = channel.Call("/test.Slow/Slow", "", kDeadline); });
  ASSERT_TRUE(testing::WaitFor([&] { return gate.waiting() == 1; }));
  std::thread stopper([&] { server.Stop(); });
  EXPECT_TRUE(testing::WaitFor([&] { return server.stopping(); }));
  gate.Open();
  stopper.join();
  caller.join();
  // The handler finished after Stop() began: its answer is dropped and the
  // caller sees the connection go, never a late success, a hang or a crash.
  ASSERT_FALSE(reply.ok()) << "got \"" << *reply << "\"";
  EXPECT_EQ(reply.status().code(), StatusCode::kUnavailable) << reply.status().message();
}

// A server that answers whatever it is sent with `reply`, once.
class LyingServer {
 public:
  explicit LyingServer(std::string reply) {
    listener_ = ::socket(AF_INET, SOCK_STREAM, 0);
    sockaddr_in addr{};
    addr.sin_family = AF_INET;
    addr.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
    EDL_CHECK(::bind(listener_, reinterpret_cast<sockaddr*>(&addr), sizeof addr) == 0);
    EDL_CHECK(::listen(listener_, 1) == 0);
    socklen_t len = sizeof addr;
    EDL_CHECK(::getsockname(listener_, reinterpret_cast<sockaddr*>(&addr), &len) == 0);
    port_ = ntohs(addr.sin_port);
    thread_ = std::thread([this, reply = std::move(reply)] {
      int fd = ::accept(listener_, nullptr, nullptr);
      if (fd < 0) return;
      char buf[4096];
      std::string got;
      while (got.find("\r\n\r\n") == std::string::npos) {
        ssize_t n = ::read(fd, buf, sizeof buf);
        if (n <= 0) break;
        got.append(buf, n);
      }
      (void)!::write(fd, reply.data(), reply.size());
      ::shutdown(fd, SHUT_WR);
      while (::read(fd, buf, sizeof buf) > 0) {
      }
      ::close(fd);
    });
  }
  ~LyingServer() {
    thread_.join();
    ::close(listener_);
  }
  int port() const { return port_; }

 private:
  int listener_ = -1;
  int port_ = 0;
  std::thread thread_;
};

TEST(RpcFailure, AnAnswerClaimingAHugeBodyIsRefusedBeforeAnythingIsAllocated) {
  for (const char* length : {"18446744073709551615", "18446744073709547520", "1125899906842624"}) {
    SCOPED_TRACE(length);
    LyingServer server(std::string("HTTP/1.1 200 OK\r\nContent-Length: ") + length + "\r\n\r\nabc");
    RpcChannel channel("127.0.0.1", server.port(), kSecret);
    Result<std::string> reply = channel.Call("/test.Echo/Echo", "x", Millis(5000));
    ASSERT_FALSE(reply.ok());
    EXPECT_EQ(reply.status().code(), StatusCode::kResourceExhausted) << reply.status().message();
    EXPECT_NE(reply.status().message().find(length), std::string::npos) << reply.status().message();
  }
}

}  // namespace
}  // namespace edl::net
