// POSIX TCP plumbing for the ring collectives (net/collective/socket.h).
#include "net/collective/socket.h"

#include <fcntl.h>
#include <netdb.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <poll.h>
#include <sys/socket.h>
#include <unistd.h>

#include <cerrno>
#include <climits>
#include <cstring>
#include <thread>

namespace edl::net {
namespace {

std::string Errno(int err) { return std::strerror(err); }

void Configure(int fd, int buffer_bytes) {
  int one = 1;
  ::setsockopt(fd, IPPROTO_TCP, TCP_NODELAY, &one, sizeof(one));
  if (buffer_bytes > 0) {
    ::setsockopt(fd, SOL_SOCKET, SO_SNDBUF, &buffer_bytes, sizeof(buffer_bytes));
    ::setsockopt(fd, SOL_SOCKET, SO_RCVBUF, &buffer_bytes, sizeof(buffer_bytes));
  }
  ::fcntl(fd, F_SETFL, ::fcntl(fd, F_GETFL) | O_NONBLOCK);
}

// Waits until `fd` has `events`; false when `deadline` passes first.
bool WaitFd(int fd, short events, RingClock::time_point deadline) {
  while (true) {
    pollfd p{fd, events, 0};
    int n = ::poll(&p, 1, PollTimeoutMs(deadline));
    if (n > 0) return true;
    if (n == 0 && RingClock::now() >= deadline) return false;
    if (n < 0 && errno != EINTR) return true;  // let the caller see the error
  }
}

Result<addrinfo*> Resolve(const std::string& host, int port, bool passive) {
  addrinfo hints{};
  hints.ai_family = AF_UNSPEC;
  hints.ai_socktype = SOCK_STREAM;
  if (passive) hints.ai_flags = AI_PASSIVE;
  addrinfo* result = nullptr;
  int rc = ::getaddrinfo(host.c_str(), std::to_string(port).c_str(), &hints, &result);
  if (rc != 0) {
    return Unavailable(host + ": cannot resolve: " + ::gai_strerror(rc));
  }
  return result;
}

}  // namespace

void Fd::Reset() {
  if (fd_ >= 0) ::close(fd_);
  fd_ = -1;
}

int PollTimeoutMs(RingClock::time_point deadline) {
  auto left = std::chrono::ceil<std::chrono::milliseconds>(deadline - RingClock::now());
  if (left.count() <= 0) return 0;
  return left.count() > INT_MAX ? INT_MAX : static_cast<int>(left.count());
}

Result<std::pair<Fd, int>> ListenTcp(const std::string& host, int port) {
  EDL_ASSIGN_OR_RETURN(addrinfo * addrs, Resolve(host, port, true));
  std::string error = "no address";
  for (addrinfo* a = addrs; a != nullptr; a = a->ai_next) {
    Fd fd(::socket(a->ai_family, a->ai_socktype | SOCK_CLOEXEC, a->ai_protocol));
    if (!fd.valid()) {
      error = Errno(errno);
      continue;
    }
    int one = 1;
    ::setsockopt(fd.get(), SOL_SOCKET, SO_REUSEADDR, &one, sizeof(one));
    if (::bind(fd.get(), a->ai_addr, a->ai_addrlen) != 0 || ::listen(fd.get(), 128) != 0) {
      error = Errno(errno);
      continue;
    }
    sockaddr_storage bound{};
    socklen_t len = sizeof(bound);
    ::getsockname(fd.get(), reinterpret_cast<sockaddr*>(&bound), &len);
    int bound_port = bound.ss_family == AF_INET6
                         ? ntohs(reinterpret_cast<sockaddr_in6*>(&bound)->sin6_port)
                         : ntohs(reinterpret_cast<sockaddr_in*>(&bound)->sin_port);
    ::freeaddrinfo(addrs);
    return std::make_pair(std::move(fd), bound_port);
  }
  ::freeaddrinfo(addrs);
  return Unavailable("ring listener " + host + ":" + std::to_string(port) +
                     ": cannot listen: " + error);
}

Result<Fd> ConnectTcp(const std::string& host, int port, RingClock::time_point deadline,
                      int buffer_bytes) {
  const std::string name = host + ":" + std::to_string(port);
  auto backoff = std::chrono::milliseconds(5);
  std::string error;
  while (true) {
    EDL_ASSIGN_OR_RETURN(addrinfo * addrs, Resolve(host, port, false));
    for (addrinfo* a = addrs; a != nullptr; a = a->ai_next) {
      Fd fd(::socket(a->ai_family, a->ai_socktype | SOCK_CLOEXEC, a->ai_protocol));
      if (!fd.valid()) {
        error = Errno(errno);
        continue;
      }
      Configure(fd.get(), buffer_bytes);
      int rc = ::connect(fd.get(), a->ai_addr, a->ai_addrlen);
      if (rc != 0 && errno == EINPROGRESS) {
        if (!WaitFd(fd.get(), POLLOUT, deadline)) {
          error = "no answer";
          continue;
        }
        int err = 0;
        socklen_t len = sizeof(err);
        ::getsockopt(fd.get(), SOL_SOCKET, SO_ERROR, &err, &len);
        rc = err == 0 ? 0 : -1;
        errno = err;
      }
      if (rc == 0) {
        ::freeaddrinfo(addrs);
        return fd;
      }
      error = Errno(errno);
    }
    ::freeaddrinfo(addrs);
    if (RingClock::now() + backoff >= deadline) {
      return DeadlineExceeded(name + ": cannot connect before the deadline: " + error);
    }
    std::this_thread::sleep_for(backoff);  // the peer may not listen yet
    backoff = std::min(backoff * 2, std::chrono::milliseconds(200));
  }
}

Result<Fd> AcceptTcp(int listen_fd, RingClock::time_point deadline, int buffer_bytes) {
  while (true) {
    if (!WaitFd(listen_fd, POLLIN, deadline)) {
      return DeadlineExceeded("no connection before the deadline");
    }
    Fd fd(::accept4(listen_fd, nullptr, nullptr, SOCK_CLOEXEC));
    if (fd.valid()) {
      Configure(fd.get(), buffer_bytes);
      return fd;
    }
    if (errno != EINTR && errno != EAGAIN && errno != ECONNABORTED) {
      return Unavailable("accept: " + Errno(errno));
    }
  }
}

Status WriteAll(int fd, std::string_view bytes, RingClock::time_point deadline,
                const std::string& peer) {
  size_t done = 0;
  while (done < bytes.size()) {
    ssize_t n = ::send(fd, bytes.data() + done, bytes.size() - done, MSG_NOSIGNAL);
    if (n > 0) {
      done += static_cast<size_t>(n);
    } else if (n < 0 && (errno == EAGAIN || errno == EINTR)) {
      if (!WaitFd(fd, POLLOUT, deadline)) {
        return DeadlineExceeded(peer + ": write timed out");
      }
    } else {
      return Unavailable(peer + ": connection lost: " + Errno(errno));
    }
  }
  return Status::Ok();
}

Status ReadExact(int fd, char* out, size_t bytes, RingClock::time_point deadline,
                 const std::string& peer) {
  size_t done = 0;
  while (done < bytes) {
    ssize_t n = ::recv(fd, out + done, bytes - done, 0);
    if (n > 0) {
      done += static_cast<size_t>(n);
    } else if (n == 0) {
      return Unavailable(peer + ": connection closed by peer");
    } else if (errno == EAGAIN || errno == EINTR) {
      if (!WaitFd(fd, POLLIN, deadline)) {
        return DeadlineExceeded(peer + ": read timed out");
      }
    } else {
      return Unavailable(peer + ": connection lost: " + Errno(errno));
    }
  }
  return Status::Ok();
}

}  // namespace edl::net
