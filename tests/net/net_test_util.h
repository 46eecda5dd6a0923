// Helpers for the net tests: waiting for a condition with a deadline, and a
// raw loopback socket for sending bytes no well-behaved client would send.
#pragma once

#include <chrono>
#include <functional>
#include <string>
#include <string_view>

namespace edl::net::testing {

inline constexpr char kSecret[] = "s3cret-for-tests";

// Polls `condition` until it holds or `timeout` passes; returns its last
// value.
bool WaitFor(const std::function<bool()>& condition,
             std::chrono::milliseconds timeout = std::chrono::seconds(10));

// A blocking TCP connection to 127.0.0.1:port; every receive gives up after
// 10 s so a broken server fails the test instead of hanging it.
class RawConnection {
 public:
  explicit RawConnection(int port);
  ~RawConnection();
  RawConnection(const RawConnection&) = delete;
  RawConnection& operator=(const RawConnection&) = delete;

  bool connected() const { return fd_ >= 0; }
  bool Send(std::string_view bytes);
  // Everything the server sends until it closes the connection (or 10 s).
  std::string ReadUntilClosed();
  // Reads until `text` has arrived (or the connection ends or 10 s pass).
  std::string ReadUntil(std::string_view text);

 private:
  int fd_ = -1;
};

}  // namespace edl::net::testing
