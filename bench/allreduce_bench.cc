// edl_allreduce_bench: bus bandwidth of the ring allreduce (net/collective/collective.h)
// on one machine, with one real process per rank.
//
//   edl_allreduce_bench [--ranks N] [--min_bytes B] [--max_bytes B]
//                       [--piece_bytes B] [--socket_buffer_bytes B (0:
//                       the kernel's autotuned buffers)] [--no_shm]
//                       [--iters N (default: 512 MiB per size, 5..200000)]
//                       [--small_allreduce_bytes B (RingSpec's; 0: the ring
//                       algorithm at every size)]
//
// --no_shm sets RingSpec::shared_memory = false: data moves over TCP
// loopback instead of the same-host shared-memory rings.
//
// Forks N processes (one per rank), forms a ring on 127.0.0.1 and, for each
// size from min to max (powers of 4), times `iters` back-to-back in-place
// float32 sum allreduces (512 MiB worth, 5 to 200,000) after iters/10 (at
// least 2) warm-up ones: the first thousand small collectives run several
// times slower while the scheduler settles the ranks on their cores, so a
// short run measures the warm-up. Rank 0 prints one line per
// size: "bytes ranks iters seconds_per_op busbw_GBps", where bus bandwidth =
// 2(N-1)/N * bytes / time (the NCCL-tests convention) and GB = 1e9 bytes.
// Same measurement as bench/mpi_allreduce_bench.cc.
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <memory>
#include <string>
#include <vector>

#include "net/collective/collective.h"

namespace {

struct Options {
  int ranks = 2;
  size_t min_bytes = 4096;
  size_t max_bytes = size_t{64} << 20;
  size_t piece_bytes = size_t{1} << 19;
  int socket_buffer_bytes = 4 << 20;
  bool shared_memory = true;
  int iters = 0;  // 0: Iterations(bytes)
  size_t small_allreduce_bytes = edl::net::RingSpec{}.small_allreduce_bytes;
};

[[noreturn]] void Usage(const char* why) {
  std::fprintf(stderr,
               "edl_allreduce_bench: %s\nusage: edl_allreduce_bench [--ranks "
               "N] [--min_bytes B] [--max_bytes B] [--piece_bytes B] "
               "[--socket_buffer_bytes B] [--no_shm] [--iters N] "
               "[--small_allreduce_bytes B]\n",
               why);
  std::exit(2);
}

Options Parse(int argc, char** argv) {
  Options o;
  for (int i = 1; i < argc; ++i) {
    std::string flag = argv[i];
    if (flag == "--no_shm") {
      o.shared_memory = false;
      continue;
    }
    if (i + 1 >= argc) Usage(("missing value for " + flag).c_str());
    long long value = std::atoll(argv[++i]);
    if (value < 0 ||
        (value == 0 && flag != "--socket_buffer_bytes" && flag != "--small_allreduce_bytes")) {
      Usage((flag + " must be a positive integer").c_str());
    }
    if (flag == "--ranks") {
      o.ranks = static_cast<int>(value);
    } else if (flag == "--min_bytes") {
      o.min_bytes = static_cast<size_t>(value);
    } else if (flag == "--max_bytes") {
      o.max_bytes = static_cast<size_t>(value);
    } else if (flag == "--piece_bytes") {
      o.piece_bytes = static_cast<size_t>(value);
    } else if (flag == "--small_allreduce_bytes") {
      o.small_allreduce_bytes = static_cast<size_t>(value);
    } else if (flag == "--iters") {
      o.iters = static_cast<int>(value);
    } else if (flag == "--socket_buffer_bytes") {
      o.socket_buffer_bytes = static_cast<int>(value);
    } else {
      Usage(("unknown flag " + flag).c_str());
    }
  }
  return o;
}

// Iterations for a size: enough bytes to time, bounded for tiny sizes.
int Iterations(size_t bytes) {
  size_t target = size_t{512} << 20;
  return static_cast<int>(std::clamp<size_t>(target / bytes, 5, 200000));
}

int RunRank(const Options& o, int rank, edl::net::RingListener& listener,
            const std::vector<std::string>& peers) {
  edl::net::RingSpec spec;
  spec.rank = rank;
  spec.peers = peers;
  spec.version = 1;
  spec.secret = "bench";
  spec.deadline = std::chrono::milliseconds(30000);
  spec.piece_bytes = o.piece_bytes;
  spec.socket_buffer_bytes = o.socket_buffer_bytes;
  spec.shared_memory = o.shared_memory;
  spec.small_allreduce_bytes = o.small_allreduce_bytes;
  auto ring = edl::net::Ring::Connect(listener, spec);
  if (!ring.ok()) {
    std::fprintf(stderr, "rank %d: %s\n", rank, ring.status().message().c_str());
    return 1;
  }
  std::vector<float> sync(1);
  for (size_t bytes = o.min_bytes; bytes <= o.max_bytes; bytes *= 4) {
    std::vector<float> data(bytes / sizeof(float), 1.0f);
    int iters = o.iters > 0 ? o.iters : Iterations(bytes);
    for (int i = 0; i < std::max(2, iters / 10); ++i) {
      if (!(*ring)->AllReduce(std::span<float>(data)).ok()) return 1;
    }
    if (!(*ring)->AllReduce(std::span<float>(sync)).ok()) return 1;  // barrier
    auto start = std::chrono::steady_clock::now();
    for (int i = 0; i < iters; ++i) {
      edl::Status s = (*ring)->AllReduce(std::span<float>(data));
      if (!s.ok()) {
        std::fprintf(stderr, "rank %d: %s\n", rank, s.message().c_str());
        return 1;
      }
    }
    double seconds =
        std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count() / iters;
    if (rank == 0) {
      int n = o.ranks;
      double busbw = 2.0 * (n - 1) / n * static_cast<double>(bytes) / seconds;
      std::printf("%zu %d %d %.9f %.4f\n", bytes, n, iters, seconds, busbw / 1e9);
      std::fflush(stdout);
    }
  }
  return 0;
}

}  // namespace

int main(int argc, char** argv) {
  Options o = Parse(argc, argv);
  std::vector<std::unique_ptr<edl::net::RingListener>> listeners;
  std::vector<std::string> peers;
  for (int r = 0; r < o.ranks; ++r) {
    auto listener = edl::net::RingListener::Listen("127.0.0.1", 0);
    if (!listener.ok()) {
      std::fprintf(stderr, "%s\n", listener.status().message().c_str());
      return 1;
    }
    peers.push_back((*listener)->address());
    listeners.push_back(std::move(listener).value());
  }
  std::vector<pid_t> children;
  for (int r = 0; r < o.ranks; ++r) {
    pid_t pid = ::fork();
    if (pid < 0) {
      std::perror("fork");
      return 1;
    }
    if (pid == 0) {
      int rc = RunRank(o, r, *listeners[r], peers);
      std::fflush(stdout);
      ::_exit(rc);
    }
    children.push_back(pid);
  }
  int failed = 0;
  for (pid_t pid : children) {
    int status = 0;
    ::waitpid(pid, &status, 0);
    if (!WIFEXITED(status) || WEXITSTATUS(status) != 0) ++failed;
  }
  if (failed > 0) {
    std::fprintf(stderr, "edl_allreduce_bench: %d rank(s) failed\n", failed);
    return 1;
  }
  return 0;
}
