// Helpers for the ring collective tests (net/collective/collective.h): one thread per
// rank, listeners on loopback, forming a ring, and per-rank values whose
// sums are exact in float.
#pragma once

#include <gtest/gtest.h>
#include <sys/types.h>

#include <chrono>
#include <filesystem>
#include <fstream>
#include <functional>
#include <memory>
#include <optional>
#include <string>
#include <thread>
#include <vector>

#include "base/check.h"
#include "net/collective/collective.h"
#include "tests/net/net_test_util.h"

namespace edl::net::testing {

// Runs fn(rank) on one thread per rank and returns their results in rank
// order.
template <typename T>
std::vector<T> OnEveryRank(int n, const std::function<T(int)>& fn) {
  std::vector<std::optional<T>> results(n);
  std::vector<std::thread> threads;
  for (int r = 0; r < n; ++r) {
    threads.emplace_back([&, r] { results[r].emplace(fn(r)); });
  }
  for (auto& t : threads) t.join();
  std::vector<T> out;
  for (auto& r : results) out.push_back(std::move(*r));
  return out;
}

// n listeners on 127.0.0.1 and the specs of a ring over them.
struct Listeners {
  explicit Listeners(int n, bool shared_memory = true) : shared_memory(shared_memory) {
    for (int r = 0; r < n; ++r) {
      auto l = RingListener::Listen("127.0.0.1", 0);
      EDL_CHECK(l.ok()) << l.status().message();
      peers.push_back((*l)->address());
      listeners.push_back(std::move(l).value());
    }
  }
  RingSpec Spec(int rank, uint64_t version = 1,
                std::chrono::milliseconds deadline = std::chrono::milliseconds(5000)) const {
    RingSpec spec;
    spec.rank = rank;
    spec.peers = peers;
    spec.version = version;
    spec.secret = kSecret;
    spec.deadline = deadline;
    spec.shared_memory = shared_memory;
    return spec;
  }
  bool shared_memory;
  std::vector<std::unique_ptr<RingListener>> listeners;
  std::vector<std::string> peers;
};

// Forms a ring of every listener from the specs; fails the test on error.
inline std::vector<std::unique_ptr<Ring>> FormRing(Listeners& listeners,
                                                   const std::function<RingSpec(int)>& spec_of) {
  int n = static_cast<int>(listeners.listeners.size());
  auto rings = OnEveryRank<Result<std::unique_ptr<Ring>>>(
      n, [&](int r) { return Ring::Connect(*listeners.listeners[r], spec_of(r)); });
  std::vector<std::unique_ptr<Ring>> out;
  for (auto& ring : rings) {
    EXPECT_TRUE(ring.ok()) << ring.status().message();
    out.push_back(ring.ok() ? std::move(ring).value() : nullptr);
  }
  return out;
}

// Rank r's element i; integers, so every sum is exact in float.
inline float Value(int rank, size_t i) {
  return static_cast<float>(i % 97) + 1000.0f * static_cast<float>(rank);
}
inline float Sum(int n, size_t i) {
  return static_cast<float>(n) * static_cast<float>(i % 97) +
         1000.0f * static_cast<float>(n * (n - 1) / 2);
}

// How many shared-memory ring segments this process has mapped (each link
// of a ring whose ranks are threads here is mapped twice: both ends).
inline int MappedRingSegments() {
  std::ifstream maps("/proc/self/maps");
  int count = 0;
  for (std::string line; std::getline(maps, line);) {
    count += line.find("/dev/shm/edl-ring-") != std::string::npos;
  }
  return count;
}

// Names in /dev/shm of segments made by process `pid`.
inline std::vector<std::string> SegmentNamesOf(pid_t pid) {
  std::vector<std::string> names;
  const std::string prefix = "edl-ring-" + std::to_string(pid) + "-";
  for (const auto& entry : std::filesystem::directory_iterator("/dev/shm")) {
    std::string name = entry.path().filename().string();
    if (name.rfind(prefix, 0) == 0) names.push_back(name);
  }
  return names;
}

}  // namespace edl::net::testing
