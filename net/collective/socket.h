// POSIX TCP plumbing for the ring collectives (net/collective/collective.h): an owned
// file descriptor, and listen/connect/accept/read/write with deadlines.
// Internal to net/. Functions are thread-safe; an Fd is not.
#pragma once

#include <chrono>
#include <cstddef>
#include <string>
#include <string_view>
#include <utility>

#include "base/status.h"

namespace edl::net {

using RingClock = std::chrono::steady_clock;

// Owns a file descriptor (closed on destruction); -1 when empty.
class Fd {
 public:
  Fd() = default;
  explicit Fd(int fd) : fd_(fd) {}
  ~Fd() { Reset(); }
  Fd(Fd&& other) noexcept : fd_(std::exchange(other.fd_, -1)) {}
  Fd& operator=(Fd&& other) noexcept {
    if (this != &other) {
      Reset();
      fd_ = std::exchange(other.fd_, -1);
    }
    return *this;
  }
  int get() const { return fd_; }
  bool valid() const { return fd_ >= 0; }
  void Reset();
  // Gives up ownership; returns the descriptor.
  int Release() { return std::exchange(fd_, -1); }

 private:
  int fd_ = -1;
};

// A listening socket on host:port (0: ephemeral) and the port it got.
Result<std::pair<Fd, int>> ListenTcp(const std::string& host, int port);

// Connects to host:port, retrying refused connections until `deadline`.
// The socket is non-blocking, TCP_NODELAY, with `buffer_bytes` buffers.
Result<Fd> ConnectTcp(const std::string& host, int port, RingClock::time_point deadline,
                      int buffer_bytes);

// Accepts one connection (configured like ConnectTcp's) before `deadline`.
Result<Fd> AcceptTcp(int listen_fd, RingClock::time_point deadline, int buffer_bytes);

// Writes/reads exactly `bytes` on a non-blocking socket before `deadline`.
// DeadlineExceeded or Unavailable, prefixed with `peer`.
Status WriteAll(int fd, std::string_view bytes, RingClock::time_point deadline,
                const std::string& peer);
Status ReadExact(int fd, char* out, size_t bytes, RingClock::time_point deadline,
                 const std::string& peer);

// Milliseconds until `deadline` for poll(): 0 when past, capped at INT_MAX.
int PollTimeoutMs(RingClock::time_point deadline);

}  // namespace edl::net
