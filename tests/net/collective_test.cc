// Ring collectives (net/collective/collective.h) over real loopback sockets, one thread
// per rank, on both data paths (same-host shared memory and TCP): exact
// sums, fusion, broadcast, peer failure, abort, refusal of foreign rings
// and re-forming a ring on the same listeners.
#include "net/collective/collective.h"

#include <arpa/inet.h>
#include <gtest/gtest.h>
#include <netinet/in.h>
#include <sys/socket.h>
#include <sys/time.h>
#include <unistd.h>

#include <atomic>
#include <chrono>
#include <cstddef>
#include <functional>
#include <memory>
#include <optional>
#include <string>
#include <thread>
#include <utility>
#include <vector>

#include "net/collective/handshake.h"
#include "tests/net/net_test_util.h"
#include "tests/net/ring_test_util.h"

namespace edl::net {
namespace {

using std::chrono::milliseconds;
using Clock = std::chrono::steady_clock;
using testing::FormRing;
using testing::Listeners;
using testing::OnEveryRank;
using testing::Sum;
using testing::Value;

void ExpectExactSums(int n, size_t piece_bytes, bool shared_memory,
                     size_t small_allreduce_bytes = RingSpec{}.small_allreduce_bytes) {
  Listeners listeners(n, shared_memory);
  auto rings = FormRing(listeners, [&](int r) {
    RingSpec spec = listeners.Spec(r);
    spec.piece_bytes = piece_bytes;
    spec.small_allreduce_bytes = small_allreduce_bytes;
    return spec;
  });
  ASSERT_EQ(rings.size(), static_cast<size_t>(n));
  for (auto& ring : rings) ASSERT_NE(ring, nullptr);
  for (size_t count :
       {size_t{0}, size_t{1}, size_t{7}, size_t(n - 1), size_t{1000}, (size_t{1} << 20) + 3}) {
    auto data = OnEveryRank<std::vector<float>>(n, [&](int r) {
      std::vector<float> v(count);
      for (size_t i = 0; i < count; ++i) v[i] = Value(r, i);
      Status s = rings[r]->AllReduce(std::span<float>(v));
      EXPECT_TRUE(s.ok()) << s.message();
      return v;
    });
    for (int r = 0; r < n; ++r) {
      size_t wrong = 0;
      for (size_t i = 0; i < count; ++i) wrong += data[r][i] != Sum(n, i);
      EXPECT_EQ(wrong, 0u) << "n=" << n << " rank " << r << " count " << count;
    }
  }
}

// The tests that hold on both data paths: same-host shared memory (the
// parameter is true) and TCP.
class RingOnEachTransport : public ::testing::TestWithParam<bool> {};

INSTANTIATE_TEST_SUITE_P(Transports, RingOnEachTransport, ::testing::Bool(),
                         [](const ::testing::TestParamInfo<bool>& info) {
                           return info.param ? "SharedMemory" : "Tcp";
                         });

TEST_P(RingOnEachTransport, AllReduceSumsExactlyForOneToFiveRanks) {
  for (int n = 1; n <= 5; ++n) ExpectExactSums(n, size_t{1} << 19, GetParam());
}

TEST_P(RingOnEachTransport, AllReduceSumsExactlyWithTinyOddPieces) {
  for (int n : {2, 3}) ExpectExactSums(n, 4100, GetParam());  // pieces of 1025 floats
}

TEST_P(RingOnEachTransport, EitherAllReduceAlgorithmSumsExactlyAtAnySize) {
  for (int n : {2, 3, 4}) {
    ExpectExactSums(n, size_t{1} << 19, GetParam(), 0);         // ring only
    ExpectExactSums(n, size_t{1} << 19, GetParam(), SIZE_MAX);  // gather only
  }
}

TEST_P(RingOnEachTransport, SmallAllReduceSumsInRankOrderOnEveryRank) {
  // Values whose float sum depends on the order of the additions: every
  // rank must still end with the same bits, those of ((x0 + x1) + x2) + ...
  const size_t count = 1500;  // 6,000 bytes: the gather path
  ASSERT_LE(count * sizeof(float), RingSpec{}.small_allreduce_bytes);
  for (int n : {2, 3, 5}) {
    std::vector<std::vector<float>> inputs(n, std::vector<float>(count));
    for (int r = 0; r < n; ++r) {
      for (size_t i = 0; i < count; ++i) {
        inputs[r][i] =
            static_cast<float>((r * 7919 + i * 104729) % 1000003) * (r % 2 ? 1e-7f : 3.1f);
      }
    }
    Listeners listeners(n, GetParam());
    auto rings = FormRing(listeners, [&](int r) { return listeners.Spec(r); });
    auto data = OnEveryRank<std::vector<float>>(n, [&](int r) {
      std::vector<float> v = inputs[r];
      EXPECT_TRUE(rings[r]->AllReduce(std::span<float>(v)).ok());
      return v;
    });
    size_t wrong = 0, order_matters = 0;
    for (size_t i = 0; i < count; ++i) {
      float sum = inputs[0][i], reversed = inputs[n - 1][i];
      for (int r = 1; r < n; ++r) sum += inputs[r][i];
      for (int r = n - 2; r >= 0; --r) reversed += inputs[r][i];
      order_matters += sum != reversed;
      for (int r = 0; r < n; ++r) wrong += data[r][i] != sum;
    }
    EXPECT_EQ(wrong, 0u) << "n=" << n;
    if (n > 2) {
      EXPECT_GT(order_matters, 0u) << "n=" << n;  // the test can fail
    }
  }
}

TEST_P(RingOnEachTransport, AllReduceAveragesAndEveryRankAgrees) {
  const int n = 4;
  Listeners listeners(n, GetParam());
  auto rings = FormRing(listeners, [&](int r) { return listeners.Spec(r); });
  auto data = OnEveryRank<std::vector<float>>(n, [&](int r) {
    std::vector<float> v(4099, static_cast<float>(r) * 0.1f + 1.0f);
    EXPECT_TRUE(rings[r]->AllReduce(std::span<float>(v), ReduceOp::kAverage).ok());
    return v;
  });
  EXPECT_NEAR(data[0][0], 1.15f, 1e-6);
  for (int r = 1; r < n; ++r) EXPECT_EQ(data[r], data[0]);  // bitwise
}

TEST_P(RingOnEachTransport, FusedAllReduceOfManyOddSizedTensorsSumsEachTensor) {
  const int n = 3;
  Listeners listeners(n, GetParam());
  auto rings = FormRing(listeners, [&](int r) { return listeners.Spec(r); });
  std::vector<size_t> sizes;
  for (size_t k = 0; k < 300; ++k) sizes.push_back((k * 37) % 101);
  sizes.push_back(5000);  // bigger than a bucket: reduced on its own
  sizes.push_back(1);
  auto data = OnEveryRank<std::vector<std::vector<float>>>(n, [&](int r) {
    std::vector<std::vector<float>> tensors;
    std::vector<std::span<float>> spans;
    for (size_t k = 0; k < sizes.size(); ++k) {
      tensors.emplace_back(sizes[k]);
      for (size_t i = 0; i < sizes[k]; ++i) tensors[k][i] = Value(r, i + k);
    }
    for (auto& t : tensors) spans.emplace_back(t);
    Status s = rings[r]->AllReduce(spans, /*bucket_bytes=*/4096);
    EXPECT_TRUE(s.ok()) << s.message();
    return tensors;
  });
  for (int r = 0; r < n; ++r) {
    for (size_t k = 0; k < sizes.size(); ++k) {
      for (size_t i = 0; i < sizes[k]; ++i) {
        ASSERT_EQ(data[r][k][i], Sum(n, i + k)) << "tensor " << k;
      }
    }
  }
}

TEST_P(RingOnEachTransport, BroadcastsFromEveryRoot) {
  for (int n : {1, 2, 4}) {
    Listeners listeners(n, GetParam());
    auto rings = FormRing(listeners, [&](int r) {
      RingSpec spec = listeners.Spec(r);
      spec.piece_bytes = 65536;
      return spec;
    });
    for (int root = 0; root < n; ++root) {
      const size_t bytes = (size_t{1} << 20) + 5;
      auto data = OnEveryRank<std::vector<std::byte>>(n, [&](int r) {
        std::vector<std::byte> v(bytes, std::byte{0});
        if (r == root) {
          for (size_t i = 0; i < bytes; ++i) v[i] = std::byte(i * 7 + root);
        }
        Status s = rings[r]->Broadcast(v, root);
        EXPECT_TRUE(s.ok()) << s.message();
        return v;
      });
      for (int r = 0; r < n; ++r) {
        EXPECT_EQ(data[r], data[root]) << "n=" << n << " root " << root << " rank " << r;
      }
      EXPECT_EQ(data[root][bytes - 1], std::byte((bytes - 1) * 7 + root));
    }
  }
}

bool IsPeerFailure(const Status& s) {
  return s.code() == StatusCode::kDeadlineExceeded || s.code() == StatusCode::kUnavailable;
}

TEST_P(RingOnEachTransport, RankThatClosesItsSocketsFailsTheOthers) {
  const int n = 3;
  const milliseconds deadline(3000);
  Listeners listeners(n, GetParam());
  auto rings = FormRing(listeners, [&](int r) { return listeners.Spec(r, 1, deadline); });
  auto start = Clock::now();
  auto statuses = OnEveryRank<Status>(n, [&](int r) {
    if (r == 2) {
      rings[2].reset();  // closes both of its connections
      return Status::Ok();
    }
    std::vector<float> v(size_t{1} << 22, 1.0f);
    return rings[r]->AllReduce(std::span<float>(v));
  });
  for (int r = 0; r < 2; ++r) {
    EXPECT_TRUE(IsPeerFailure(statuses[r])) << statuses[r].message();
    EXPECT_NE(statuses[r].message().find("rank "), std::string::npos);
  }
  EXPECT_LT(Clock::now() - start, 20 * deadline);  // returned at all
  // The broken ring refuses further work instead of hanging.
  std::vector<float> v(10);
  EXPECT_EQ(rings[0]->AllReduce(std::span<float>(v)).code(), StatusCode::kFailedPrecondition);
}

TEST_P(RingOnEachTransport, SilentRankMakesTheOthersMissTheirDeadline) {
  const int n = 3;
  const milliseconds deadline(1500);
  Listeners listeners(n, GetParam());
  auto rings = FormRing(listeners, [&](int r) { return listeners.Spec(r, 1, deadline); });
  auto start = Clock::now();
  auto statuses = OnEveryRank<Status>(n, [&](int r) {
    if (r == 2) return Status::Ok();  // alive but never joins the collective
    std::vector<float> v(size_t{1} << 22, 1.0f);
    return rings[r]->AllReduce(std::span<float>(v));
  });
  for (int r = 0; r < 2; ++r) {
    EXPECT_TRUE(IsPeerFailure(statuses[r])) << statuses[r].message();
  }
  // Rank 0 waits for its predecessor, the silent rank 2.
  EXPECT_EQ(statuses[0].code(), StatusCode::kDeadlineExceeded) << statuses[0].message();
  EXPECT_NE(statuses[0].message().find("rank 2"), std::string::npos) << statuses[0].message();
  EXPECT_LT(Clock::now() - start, 20 * deadline);
}

TEST_P(RingOnEachTransport, AbortBeforeOrDuringACollectiveEndsIt) {
  const int n = 2;
  Listeners listeners(n, GetParam());
  auto rings =
      FormRing(listeners, [&](int r) { return listeners.Spec(r, 1, milliseconds(60000)); });
  Status status;
  std::atomic<bool> done{false};
  std::thread blocked([&] {
    std::vector<float> v(size_t{1} << 22, 1.0f);  // rank 1 never joins
    status = rings[0]->AllReduce(std::span<float>(v));
    done = true;
  });
  rings[0]->Abort();
  // Far below the 60 s transfer deadline: only Abort can end it this soon.
  EXPECT_TRUE(testing::WaitFor([&] { return done.load(); }, std::chrono::seconds(20)));
  blocked.join();
  EXPECT_EQ(status.code(), StatusCode::kAborted) << status.message();
  std::vector<float> v(3);
  EXPECT_FALSE(rings[0]->AllReduce(std::span<float>(v)).ok());
}

// Rank 1 of a two-rank ring played by hand: completes the handshake, then
// only reads, so the test knows when rank 0 is inside a collective.
class HandPlayedRank1 {
 public:
  HandPlayedRank1() {
    listen_fd_ = ::socket(AF_INET, SOCK_STREAM, 0);
    sockaddr_in addr{};
    addr.sin_family = AF_INET;
    addr.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
    EDL_CHECK(::bind(listen_fd_, reinterpret_cast<sockaddr*>(&addr), sizeof(addr)) == 0);
    EDL_CHECK(::listen(listen_fd_, 4) == 0);
    socklen_t len = sizeof(addr);
    ::getsockname(listen_fd_, reinterpret_cast<sockaddr*>(&addr), &len);
    port_ = ntohs(addr.sin_port);
  }
  ~HandPlayedRank1() {
    for (int fd : {listen_fd_, from_rank0_}) {
      if (fd >= 0) ::close(fd);
    }
  }
  std::string address() const { return "127.0.0.1:" + std::to_string(port_); }

  // Accepts rank 0, answers its hello and says hello to rank 0's listener.
  void Handshake(int rank0_port, uint64_t version) {
    from_rank0_ = ::accept(listen_fd_, nullptr, nullptr);
    timeval tv{20, 0};
    ::setsockopt(from_rank0_, SOL_SOCKET, SO_RCVTIMEO, &tv, sizeof(tv));
    std::string header(kRingHelloHeaderBytes, '\0');
    EDL_CHECK(::recv(from_rank0_, header.data(), header.size(), MSG_WAITALL) ==
              static_cast<ssize_t>(header.size()));
    RingHello hello;
    Result<size_t> tail_len = DecodeRingHelloHeader(header, hello);
    EDL_CHECK(tail_len.ok()) << tail_len.status().message();
    std::string tail(*tail_len, '\0');
    EDL_CHECK(*tail_len == 0 || ::recv(from_rank0_, tail.data(), tail.size(), MSG_WAITALL) ==
                                    static_cast<ssize_t>(tail.size()));
    EDL_CHECK(DecodeRingHelloTail(tail, hello).ok());
    EDL_CHECK(hello.ring_version == version && hello.from_rank == 0);
    // No shared memory: the collective's bytes come over this socket.
    std::string answer = EncodeRingAnswer(Status::Ok());
    EDL_CHECK(::send(from_rank0_, answer.data(), answer.size(), 0) ==
              static_cast<ssize_t>(answer.size()));
    to_rank0_ = std::make_unique<testing::RawConnection>(rank0_port);
    EDL_CHECK(to_rank0_->Send(EncodeRingHello({version, 1, 0, 2, testing::kSecret, "", ""})));
  }
  // Blocks until rank 0 has sent at least one byte of collective data.
  bool ReceivedData() {
    char byte;
    return ::recv(from_rank0_, &byte, 1, 0) == 1;
  }

 private:
  int listen_fd_ = -1;
  int port_ = 0;
  int from_rank0_ = -1;
  std::unique_ptr<testing::RawConnection> to_rank0_;
};

TEST(Ring, AbortUnblocksACollectiveThatIsWaitingForAPeer) {
  auto listener = RingListener::Listen("127.0.0.1", 0);
  ASSERT_TRUE(listener.ok());
  HandPlayedRank1 rank1;
  RingSpec spec;
  spec.rank = 0;
  spec.peers = {(*listener)->address(), rank1.address()};
  spec.version = 5;
  spec.secret = testing::kSecret;
  spec.deadline = milliseconds(60000);
  std::thread peer([&] { rank1.Handshake((*listener)->port(), 5); });
  auto ring = Ring::Connect(**listener, spec);
  peer.join();
  ASSERT_TRUE(ring.ok()) << ring.status().message();

  Status status;
  std::atomic<bool> done{false};
  std::thread collective([&] {
    std::vector<float> v(size_t{1} << 22, 1.0f);
    status = (*ring)->AllReduce(std::span<float>(v));
    done = true;
  });
  ASSERT_TRUE(rank1.ReceivedData());  // rank 0 is inside the allreduce
  EXPECT_FALSE(done.load());          // and waits for rank 1's data
  (*ring)->Abort();
  // Far below the 60 s transfer deadline: only Abort can end it this soon.
  EXPECT_TRUE(testing::WaitFor([&] { return done.load(); }, std::chrono::seconds(20)));
  collective.join();
  EXPECT_EQ(status.code(), StatusCode::kAborted) << status.message();
}

TEST(Ring, RefusesAPeerWithTheWrongSecret) {
  Listeners listeners(2);
  auto results = OnEveryRank<Result<std::unique_ptr<Ring>>>(2, [&](int r) {
    RingSpec spec = listeners.Spec(r, 1, milliseconds(3000));
    if (r == 1) spec.secret = "not-the-job-secret";
    return Ring::Connect(*listeners.listeners[r], spec);
  });
  for (int r = 0; r < 2; ++r) {
    ASSERT_FALSE(results[r].ok());
    EXPECT_EQ(results[r].status().code(), StatusCode::kUnauthenticated)
        << results[r].status().message();
    EXPECT_NE(results[r].status().message().find("secret"), std::string::npos);
  }
}

TEST(Ring, RefusesAPeerOfAnotherVersion) {
  Listeners listeners(2);
  auto results = OnEveryRank<Result<std::unique_ptr<Ring>>>(2, [&](int r) {
    return Ring::Connect(*listeners.listeners[r],
                         listeners.Spec(r, r == 0 ? 7 : 8, milliseconds(3000)));
  });
  for (int r = 0; r < 2; ++r) {
    ASSERT_FALSE(results[r].ok());
    EXPECT_EQ(results[r].status().code(), StatusCode::kFailedPrecondition)
        << results[r].status().message();
    EXPECT_NE(results[r].status().message().find("version"), std::string::npos);
  }
}

TEST(Ring, ConnectFailsWithinTheDeadlineWhenAPeerNeverComes) {
  Listeners listeners(2);
  auto ring = Ring::Connect(*listeners.listeners[0], listeners.Spec(0, 1, milliseconds(300)));
  ASSERT_FALSE(ring.ok());
  EXPECT_EQ(ring.status().code(), StatusCode::kDeadlineExceeded) << ring.status().message();
  EXPECT_NE(ring.status().message().find("rank 1"), std::string::npos);
}

TEST_P(RingOnEachTransport, IgnoresGarbageConnectionsWhileForming) {
  Listeners listeners(2, GetParam());
  testing::RawConnection garbage(listeners.listeners[1]->port());
  ASSERT_TRUE(garbage.connected());
  ASSERT_TRUE(garbage.Send("GET / HTTP/1.1\r\nHost: x\r\n\r\n0123456789"));
  auto rings = FormRing(listeners, [&](int r) { return listeners.Spec(r); });
  std::vector<std::vector<float>> data = OnEveryRank<std::vector<float>>(2, [&](int r) {
    std::vector<float> v(5, static_cast<float>(r + 1));
    EXPECT_TRUE(rings[r]->AllReduce(std::span<float>(v)).ok());
    return v;
  });
  EXPECT_EQ(data[1], std::vector<float>(5, 3.0f));
}

TEST(Ring, RejectsAnInvalidSpec) {
  Listeners listeners(1);
  RingSpec spec = listeners.Spec(0);
  spec.rank = 3;
  EXPECT_EQ(Ring::Connect(*listeners.listeners[0], spec).status().code(),
            StatusCode::kInvalidArgument);
  spec = listeners.Spec(0);
  spec.peers.clear();
  EXPECT_EQ(Ring::Connect(*listeners.listeners[0], spec).status().code(),
            StatusCode::kInvalidArgument);
}

TEST_P(RingOnEachTransport, SurvivorsReformWithAHigherVersionOnTheSameListeners) {
  const int n = 3;
  Listeners listeners(n, GetParam());
  auto rings = FormRing(listeners, [&](int r) { return listeners.Spec(r, 1, milliseconds(3000)); });
  // Rank 2 dies: its ring and listener go away mid-training.
  auto failed = OnEveryRank<Status>(n, [&](int r) {
    if (r == 2) {
      rings[2].reset();
      listeners.listeners[2].reset();
      return Status::Ok();
    }
    std::vector<float> v(100000, 1.0f);
    return rings[r]->AllReduce(std::span<float>(v));
  });
  EXPECT_FALSE(failed[0].ok());
  EXPECT_FALSE(failed[1].ok());

  std::vector<std::string> survivors = {listeners.peers[0], listeners.peers[1]};
  auto reformed = OnEveryRank<Result<std::unique_ptr<Ring>>>(2, [&](int r) {
    RingSpec spec = listeners.Spec(r, 2);
    spec.peers = survivors;
    return Ring::Connect(*listeners.listeners[r], spec);
  });
  for (auto& ring : reformed) ASSERT_TRUE(ring.ok()) << ring.status().message();
  auto data = OnEveryRank<std::vector<float>>(2, [&](int r) {
    std::vector<float> v(1000003);
    for (size_t i = 0; i < v.size(); ++i) v[i] = Value(r, i);
    Status s = (*reformed[r])->AllReduce(std::span<float>(v));
    EXPECT_TRUE(s.ok()) << s.message();
    return v;
  });
  for (int r = 0; r < 2; ++r) {
    for (size_t i = 0; i < data[r].size(); ++i) {
      ASSERT_EQ(data[r][i], Sum(2, i));
    }
  }
}

}  // namespace
}  // namespace edl::net
