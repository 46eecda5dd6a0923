// Ring collectives (net/collective/collective.h) over same-host shared-memory links
// (net/collective/shm.h): exact sums, fusion and broadcast, a peer killed
// with SIGKILL (a real forked process), a silent peer, Abort() while asleep
// on the futex, no segment left in /dev/shm, mixed shared-memory/TCP rings,
// the acceptor falling back to TCP, and the ShmLink ring itself.
#include <arpa/inet.h>
#include <fcntl.h>
#include <gtest/gtest.h>
#include <netinet/in.h>
#include <poll.h>
#include <signal.h>
#include <sys/mman.h>
#include <sys/socket.h>
#include <sys/syscall.h>
#include <sys/time.h>
#include <sys/wait.h>
#include <unistd.h>

#include <atomic>
#include <chrono>
#include <cstddef>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <functional>
#include <memory>
#include <optional>
#include <string>
#include <thread>
#include <vector>

#include "net/collective/collective.h"
#include "net/collective/handshake.h"
#include "net/collective/shm.h"
#include "tests/net/net_test_util.h"
#include "tests/net/ring_test_util.h"

namespace edl::net {
namespace {

using std::chrono::milliseconds;
using testing::FormRing;
using testing::Listeners;
using testing::MappedRingSegments;
using testing::OnEveryRank;
using testing::SegmentNamesOf;
using testing::Sum;
using testing::Value;

// Every rank allreduces `count` floats; returns how many results are wrong.
size_t WrongSums(std::vector<std::unique_ptr<Ring>>& rings, size_t count) {
  const int n = static_cast<int>(rings.size());
  auto data = OnEveryRank<std::vector<float>>(n, [&](int r) {
    std::vector<float> v(count);
    for (size_t i = 0; i < count; ++i) v[i] = Value(r, i);
    Status s = rings[r]->AllReduce(std::span<float>(v));
    EXPECT_TRUE(s.ok()) << s.message();
    return v;
  });
  size_t wrong = 0;
  for (int r = 0; r < n; ++r) {
    for (size_t i = 0; i < count; ++i) wrong += data[r][i] != Sum(n, i);
  }
  return wrong;
}

TEST(RingOverSharedMemory, SumsExactlyForTwoToFourRanksWithOddSizes) {
  for (int n = 2; n <= 4; ++n) {
    for (size_t piece_bytes : {size_t{1} << 19, size_t{4100}}) {
      Listeners listeners(n);
      auto rings = FormRing(listeners, [&](int r) {
        RingSpec spec = listeners.Spec(r);
        spec.piece_bytes = piece_bytes;
        return spec;
      });
      for (auto& ring : rings) ASSERT_NE(ring, nullptr);
      // Both ends of every link are in this process.
      EXPECT_EQ(MappedRingSegments(), 2 * n);
      // More than the 4 MiB ring per link at the largest size.
      for (size_t count : {size_t{1}, size_t{7}, size_t(n - 1), size_t{1000}, (size_t{1} << 20) + 3,
                           (size_t{3} << 20) + 5}) {
        EXPECT_EQ(WrongSums(rings, count), 0u)
            << "n=" << n << " piece " << piece_bytes << " count " << count;
      }
    }
  }
  EXPECT_EQ(MappedRingSegments(), 0);  // rings gone: unmapped
}

TEST(RingOverSharedMemory, SegmentNamesAreGoneFromDevShmOnceTheRingFormed) {
  Listeners listeners(3);
  auto rings = FormRing(listeners, [&](int r) { return listeners.Spec(r); });
  for (auto& ring : rings) ASSERT_NE(ring, nullptr);
  EXPECT_EQ(MappedRingSegments(), 6);
  EXPECT_TRUE(SegmentNamesOf(::getpid()).empty());
  std::ifstream maps("/proc/self/maps");
  for (std::string line; std::getline(maps, line);) {
    if (line.find("/dev/shm/edl-ring-") != std::string::npos) {
      EXPECT_NE(line.find("(deleted)"), std::string::npos) << line;
    }
  }
}

TEST(RingOverSharedMemory, FusedBucketsSumEachTensor) {
  const int n = 3;
  Listeners listeners(n);
  auto rings = FormRing(listeners, [&](int r) { return listeners.Spec(r); });
  ASSERT_EQ(MappedRingSegments(), 2 * n);
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

// Odd byte counts leave the stream unaligned for floats unless every
// collective ends padded; allreduces after them must still sum exactly.
TEST(RingOverSharedMemory, BroadcastsOddLengthsFromEveryRootThenStillSums) {
  for (int n : {2, 4}) {
    Listeners listeners(n);
    auto rings = FormRing(listeners, [&](int r) {
      RingSpec spec = listeners.Spec(r);
      spec.piece_bytes = 65536;
      return spec;
    });
    ASSERT_EQ(MappedRingSegments(), 2 * n);
    for (int root = 0; root < n; ++root) {
      for (size_t bytes : {size_t{1}, size_t{63}, (size_t{5} << 20) + 5}) {
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
          EXPECT_EQ(data[r], data[root]) << "n=" << n << " root " << root;
        }
        EXPECT_EQ(data[root][bytes - 1], std::byte((bytes - 1) * 7 + root));
        EXPECT_EQ(WrongSums(rings, 1001), 0u) << "after " << bytes << " bytes";
      }
    }
  }
}

TEST(RingOverSharedMemory, MixedRingWithATcpOnlyRankSumsExactly) {
  // n=3, rank 1 without shared memory: only link 2 -> 0 uses it.
  // n=4, rank 0 without: links 1 -> 2 and 2 -> 3 use it.
  for (auto [n, tcp_rank, shared_links] : {std::tuple{3, 1, 1}, std::tuple{4, 0, 2}}) {
    Listeners listeners(n);
    auto rings = FormRing(listeners, [&](int r) {
      RingSpec spec = listeners.Spec(r);
      spec.shared_memory = r != tcp_rank;
      return spec;
    });
    for (auto& ring : rings) ASSERT_NE(ring, nullptr);
    EXPECT_EQ(MappedRingSegments(), 2 * shared_links) << "n=" << n;
    for (size_t count : {size_t{5}, (size_t{3} << 20) + 1}) {
      EXPECT_EQ(WrongSums(rings, count), 0u) << "n=" << n;
    }
  }
}

TEST(RingOverSharedMemory, UsesTcpWhenEveryRankTurnsItOff) {
  Listeners listeners(3);
  auto rings = FormRing(listeners, [&](int r) {
    RingSpec spec = listeners.Spec(r);
    spec.shared_memory = false;
    return spec;
  });
  for (auto& ring : rings) ASSERT_NE(ring, nullptr);
  EXPECT_EQ(MappedRingSegments(), 0);
  EXPECT_EQ(WrongSums(rings, (size_t{1} << 20) + 3), 0u);
}

// Waits up to 20 s for `fd` to become readable.
bool Readable(int fd) {
  pollfd p{fd, POLLIN, 0};
  return ::poll(&p, 1, 20000) == 1;
}

TEST(RingOverSharedMemory, PeerKilledMidTransferFailsTheSurvivorsPromptly) {
  const int n = 3;
  const size_t count = size_t{1} << 22;  // 16 MiB: several ring fills
  Listeners listeners(n);
  int ready[2];
  ASSERT_EQ(::pipe(ready), 0);
  pid_t child = ::fork();
  ASSERT_GE(child, 0);
  if (child == 0) {
    // Rank 2, in its own process: signals after its first allreduce and
    // keeps reducing until it is killed.
    ::close(ready[0]);
    auto ring = Ring::Connect(*listeners.listeners[2], listeners.Spec(2, 1, milliseconds(60000)));
    if (!ring.ok()) ::_exit(1);
    std::vector<float> v(count, 1.0f);
    for (int i = 0;; ++i) {
      if (!(*ring)->AllReduce(std::span<float>(v)).ok()) ::_exit(2);
      if (i == 0 && ::write(ready[1], "x", 1) != 1) ::_exit(3);
    }
  }
  ::close(ready[1]);
  std::vector<Status> statuses(2);
  std::vector<std::thread> survivors;
  for (int r = 0; r < 2; ++r) {
    survivors.emplace_back([&, r] {
      auto ring = Ring::Connect(*listeners.listeners[r], listeners.Spec(r, 1, milliseconds(60000)));
      if (!ring.ok()) {
        statuses[r] = ring.status();
        return;
      }
      std::vector<float> v(count, 1.0f);
      while ((statuses[r] = (*ring)->AllReduce(std::span<float>(v))).ok()) {
      }
    });
  }
  char byte = 0;
  bool started = Readable(ready[0]) && ::read(ready[0], &byte, 1) == 1;
  EXPECT_TRUE(started) << "rank 2 never finished an allreduce";
  ::kill(child, SIGKILL);
  int wstatus = 0;
  ASSERT_EQ(::waitpid(child, &wstatus, 0), child);
  EXPECT_TRUE(WIFSIGNALED(wstatus) && WTERMSIG(wstatus) == SIGKILL);
  for (auto& t : survivors) t.join();
  ::close(ready[0]);
  // Unavailable, not DeadlineExceeded: noticed long before the 60 s
  // deadline, through the socket beside the shared ring.
  for (int r = 0; r < 2; ++r) {
    EXPECT_EQ(statuses[r].code(), StatusCode::kUnavailable)
        << "rank " << r << ": " << statuses[r].message();
  }
  // Both survivors neighbour rank 2; whichever notices first names it, and
  // the other may instead see that survivor leave (CI saw rank 1 first).
  EXPECT_TRUE(statuses[0].message().find("rank 2") != std::string::npos ||
              statuses[1].message().find("rank 2") != std::string::npos)
      << statuses[0].message() << " / " << statuses[1].message();
  EXPECT_TRUE(SegmentNamesOf(child).empty());  // nothing leaked
}

TEST(RingOverSharedMemory, SilentPeerMakesTheOtherMissItsDeadline) {
  const milliseconds deadline(1500);
  Listeners listeners(2);
  auto rings = FormRing(listeners, [&](int r) { return listeners.Spec(r, 1, deadline); });
  ASSERT_EQ(MappedRingSegments(), 4);
  // Rank 1 is alive but never joins; rank 0 fills the 4 MiB ring to it.
  std::vector<float> v(size_t{1} << 22, 1.0f);
  Status status = rings[0]->AllReduce(std::span<float>(v));
  EXPECT_EQ(status.code(), StatusCode::kDeadlineExceeded) << status.message();
  EXPECT_NE(status.message().find("successor rank 1"), std::string::npos) << status.message();
  EXPECT_NE(status.message().find("accepted no data"), std::string::npos) << status.message();
  // The broken ring refuses further work.
  EXPECT_EQ(rings[0]->AllReduce(std::span<float>(v)).code(), StatusCode::kFailedPrecondition);
}

// What thread `tid` of this process is blocked in: the syscall number from
// /proc, or -1 when it runs.
long SyscallOf(pid_t tid) {
  std::ifstream in("/proc/self/task/" + std::to_string(tid) + "/syscall");
  std::string first;
  if (!(in >> first) || first == "running") return -1;
  return std::stol(first);
}

TEST(RingOverSharedMemory, AbortWakesACollectiveAsleepOnTheFutex) {
  Listeners listeners(2);
  auto rings =
      FormRing(listeners, [&](int r) { return listeners.Spec(r, 1, milliseconds(60000)); });
  ASSERT_EQ(MappedRingSegments(), 4);
  std::atomic<pid_t> tid{0};
  std::atomic<bool> done{false};
  Status status;
  std::thread blocked([&] {
    tid = static_cast<pid_t>(::syscall(SYS_gettid));
    std::vector<float> v(1000, 1.0f);  // fits the ring: then waits for data
    status = rings[0]->AllReduce(std::span<float>(v));
    done = true;
  });
  // Rank 1 never joins: rank 0 ends up sleeping on the futex.
  EXPECT_TRUE(
      testing::WaitFor([&] { return tid.load() != 0 && SyscallOf(tid.load()) == SYS_futex; },
                       std::chrono::seconds(20)));
  EXPECT_FALSE(done.load());
  rings[0]->Abort();
  // Far below the 60 s deadline: only Abort can end it this soon.
  EXPECT_TRUE(testing::WaitFor([&] { return done.load(); }, std::chrono::seconds(20)));
  blocked.join();
  EXPECT_EQ(status.code(), StatusCode::kAborted) << status.message();
}

TEST(RingOverSharedMemory, DestroyedPeerRingFailsItsNeighboursAtOnce) {
  const int n = 3;
  Listeners listeners(n);
  auto rings =
      FormRing(listeners, [&](int r) { return listeners.Spec(r, 1, milliseconds(60000)); });
  auto statuses = OnEveryRank<Status>(n, [&](int r) {
    if (r == 2) {
      rings[2].reset();  // closes its shared rings and sockets
      return Status::Ok();
    }
    std::vector<float> v(size_t{1} << 22, 1.0f);
    return rings[r]->AllReduce(std::span<float>(v));
  });
  for (int r = 0; r < 2; ++r) {
    EXPECT_EQ(statuses[r].code(), StatusCode::kUnavailable) << statuses[r].message();
  }
}

// A blocking loopback socket whose reads give up after 20 s.
int ConnectTo(int port) {
  int fd = ::socket(AF_INET, SOCK_STREAM, 0);
  timeval tv{20, 0};
  ::setsockopt(fd, SOL_SOCKET, SO_RCVTIMEO, &tv, sizeof(tv));
  sockaddr_in addr{};
  addr.sin_family = AF_INET;
  addr.sin_port = htons(static_cast<uint16_t>(port));
  addr.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
  EDL_CHECK(::connect(fd, reinterpret_cast<sockaddr*>(&addr), sizeof(addr)) == 0);
  return fd;
}

std::string ReadBytes(int fd, size_t n) {
  std::string out(n, '\0');
  ssize_t got = n == 0 ? 0 : ::recv(fd, out.data(), n, MSG_WAITALL);
  out.resize(got > 0 ? static_cast<size_t>(got) : 0);
  return out;
}

// Rank 1 played by hand: takes rank 0's shared-memory offer apart, declines
// it, and offers a segment that does not exist; rank 0 must fall back to
// TCP both ways and clean up its own segment.
TEST(RingOverSharedMemory, FallsBackToTcpWhenTheOfferIsDeclinedOrBroken) {
  auto listener = RingListener::Listen("127.0.0.1", 0);
  ASSERT_TRUE(listener.ok());
  int rank1_listen = ::socket(AF_INET, SOCK_STREAM, 0);
  sockaddr_in addr{};
  addr.sin_family = AF_INET;
  addr.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
  ASSERT_EQ(::bind(rank1_listen, reinterpret_cast<sockaddr*>(&addr), sizeof(addr)), 0);
  ASSERT_EQ(::listen(rank1_listen, 4), 0);
  socklen_t len = sizeof(addr);
  ::getsockname(rank1_listen, reinterpret_cast<sockaddr*>(&addr), &len);
  RingSpec spec;
  spec.rank = 0;
  spec.peers = {(*listener)->address(), "127.0.0.1:" + std::to_string(ntohs(addr.sin_port))};
  spec.version = 3;
  spec.secret = testing::kSecret;
  spec.deadline = milliseconds(20000);
  std::optional<Result<std::unique_ptr<Ring>>> ring;
  std::thread rank0([&] { ring.emplace(Ring::Connect(**listener, spec)); });

  int from_rank0 = ::accept(rank1_listen, nullptr, nullptr);
  timeval tv{20, 0};
  ::setsockopt(from_rank0, SOL_SOCKET, SO_RCVTIMEO, &tv, sizeof(tv));
  RingHello offer;
  auto tail_len = DecodeRingHelloHeader(ReadBytes(from_rank0, kRingHelloHeaderBytes), offer);
  ASSERT_TRUE(tail_len.ok()) << tail_len.status().message();
  ASSERT_TRUE(DecodeRingHelloTail(ReadBytes(from_rank0, *tail_len), offer).ok());
  EXPECT_EQ(offer.host, HostIdentity());
  ASSERT_EQ(offer.segment.rfind("/edl-ring-" + std::to_string(::getpid()), 0), 0u) << offer.segment;
  EXPECT_EQ(SegmentNamesOf(::getpid()).size(), 1u);  // while in flight
  std::string declined = EncodeRingAnswer(Status::Ok(), false);
  ASSERT_EQ(::send(from_rank0, declined.data(), declined.size(), 0),
            static_cast<ssize_t>(declined.size()));

  int to_rank0 = ConnectTo((*listener)->port());
  std::string hello =
      EncodeRingHello({3, 1, 0, 2, testing::kSecret, HostIdentity(), "/edl-ring-1-does-not-exist"});
  ASSERT_EQ(::send(to_rank0, hello.data(), hello.size(), 0), static_cast<ssize_t>(hello.size()));
  auto answer = DecodeRingAnswer(ReadBytes(to_rank0, kRingAnswerHeaderBytes));
  ASSERT_TRUE(answer.ok()) << answer.status().message();
  EXPECT_EQ(answer->code, StatusCode::kOk);
  EXPECT_FALSE(answer->shared_memory);
  rank0.join();
  ASSERT_TRUE(ring->ok()) << ring->status().message();
  EXPECT_EQ(MappedRingSegments(), 0);
  EXPECT_TRUE(SegmentNamesOf(::getpid()).empty());
  for (int fd : {rank1_listen, from_rank0, to_rank0}) ::close(fd);
}

}  // namespace
}  // namespace edl::net
