// The ring collectives' pipelined transfer loop (net/collective/pipeline.h).
#include "net/collective/pipeline.h"

#include <poll.h>
#include <sys/socket.h>

#include <algorithm>
#include <cerrno>
#include <cstring>
#include <thread>

#include "net/collective/socket.h"

namespace edl::net {
namespace {

void AddInto(char* dest, const char* src, size_t bytes) {
  size_t n = bytes / sizeof(float);
  float* __restrict d = reinterpret_cast<float*>(dest);
  const float* __restrict s = reinterpret_cast<const float*>(src);
  for (size_t i = 0; i < n; ++i) d[i] += s[i];
}

std::string Millis(std::chrono::milliseconds m) { return std::to_string(m.count()) + " ms"; }

constexpr auto kSpin = std::chrono::microseconds(20);
// Longest futex sleep between looks at a shared-memory neighbour's socket:
// how soon a killed neighbour is noticed.
constexpr auto kLivenessSlice = std::chrono::milliseconds(20);

// Moves up to `bytes` towards the successor; returns how many (0: no room
// now). data == nullptr: shared-memory padding.
Result<size_t> SendSome(const PipelineLinks& links, const char* data, size_t bytes) {
  if (ShmLink* shm = links.send_shm) {
    // Like a socket whose peer closed: writes succeed while there is room,
    // and fail once the data would have to wait for the closed successor.
    // (Failing every write at once made re-forming rings fail in a rotating
    // pattern: each new ring met its neighbour's previous one closing.)
    size_t n = shm->Write(data, bytes);
    if (n == 0 && shm->Closed()) {
      return Unavailable(links.successor + " closed its connection");
    }
    return n;
  }
  ssize_t n = ::send(links.send_fd, data, bytes, MSG_NOSIGNAL | MSG_DONTWAIT);
  if (n >= 0) return static_cast<size_t>(n);
  if (errno == EAGAIN || errno == EINTR) return size_t{0};
  return Unavailable("connection to " + links.successor + " lost: " + std::strerror(errno));
}

// Moves up to `bytes` from the predecessor into `dest` (adding floats when
// reduce_sum, over shared memory only); returns how many (0: none yet).
Result<size_t> RecvSome(const PipelineLinks& links, char* dest, size_t bytes, bool reduce_sum) {
  if (ShmLink* shm = links.recv_shm) {
    size_t n = shm->Read(dest, bytes, reduce_sum);
    // The predecessor may have published its last bytes and then closed.
    if (n == 0 && shm->Closed()) n = shm->Read(dest, bytes, reduce_sum);
    if (n == 0 && shm->Closed()) {
      return Unavailable(links.predecessor + " closed its connection");
    }
    return n;
  }
  ssize_t n = ::recv(links.recv_fd, dest, bytes, MSG_DONTWAIT);
  if (n > 0) return static_cast<size_t>(n);
  if (n == 0) return Unavailable(links.predecessor + " closed its connection");
  if (errno == EAGAIN || errno == EINTR) return size_t{0};
  return Unavailable("connection from " + links.predecessor + " lost: " + std::strerror(errno));
}

// The socket beside a shared-memory link carries nothing: anything readable
// on it means the peer closed or reset it (or broke the protocol).
Status CheckIdleSocket(int fd, const std::string& peer) {
  char byte;
  ssize_t n = ::recv(fd, &byte, 1, MSG_PEEK | MSG_DONTWAIT);
  if (n == 0) return Unavailable(peer + " closed its connection");
  if (n > 0) return Unavailable(peer + " sent bytes on a shared-memory link");
  if (errno == EAGAIN || errno == EINTR) return Status::Ok();
  return Unavailable("connection with " + peer + " lost: " + std::strerror(errno));
}

// One futex nap on `shm` (at most kLivenessSlice), after checking that its
// peer is alive. Returns whether the link can move now.
Result<bool> WaitOnShm(ShmLink& shm, bool consumer, int fd, const std::string& peer,
                       RingClock::time_point give_up) {
  // A predecessor may publish its last bytes and then leave: those are
  // still read. A successor that left reads nothing more.
  const bool can_read_leftovers = consumer && shm.CanMove();
  if (shm.Closed() && !can_read_leftovers) {
    return Unavailable(peer + " closed its connection");
  }
  Status alive = CheckIdleSocket(fd, peer);
  if (!alive.ok()) {
    if (consumer && shm.CanMove()) return true;
    return alive;
  }
  shm.Wait(std::min(give_up, RingClock::now() + kLivenessSlice));
  return shm.CanMove();
}

// poll() on the given socket events and the abort eventfd until `give_up`.
// Returns whether a socket is ready.
Result<bool> WaitOnSockets(const PipelineLinks& links, short send_events, short recv_events,
                           RingClock::time_point give_up) {
  pollfd fds[3];
  nfds_t count = 0;
  if (send_events != 0) fds[count++] = {links.send_fd, send_events, 0};
  if (recv_events != 0) fds[count++] = {links.recv_fd, recv_events, 0};
  fds[count++] = {links.wake_fd, POLLIN, 0};
  int n = ::poll(fds, count, PollTimeoutMs(give_up));
  if (n < 0 && errno != EINTR) {
    return Internal(std::string("poll: ") + std::strerror(errno));
  }
  return n > 0;
}

}  // namespace

Status RunPipeline(const PipelineLinks& links, std::span<const SendPiece> sends,
                   std::span<const RecvPiece> recvs) {
  const bool staged = links.recv_shm == nullptr;
  size_t max_reduce = 0;
  for (const RecvPiece& r : recvs) {
    if (r.reduce_sum && staged) max_reduce = std::max(max_reduce, r.bytes);
  }
  std::vector<char>& staging = *links.staging;
  if (staging.size() < max_reduce) staging.resize(max_reduce);

  size_t si = 0, sent = 0;            // current send piece, bytes of it sent
  size_t ri = 0, received = 0;        // current recv piece, bytes of it received
  size_t send_pad = 0, recv_pad = 0;  // shared-memory padding after the last
  auto last_progress = RingClock::now();
  auto aborted = [&] { return links.aborted->load(std::memory_order_acquire); };
  auto failed = [&](const Status& status) {
    return aborted() ? Aborted("collective aborted") : status;
  };

  while (si < sends.size() || send_pad > 0 || ri < recvs.size() || recv_pad > 0) {
    if (aborted()) return Aborted("collective aborted");
    bool progressed = false;
    // send_ready: the send side waits for nothing but room.
    const bool send_ready = si < sends.size() ? sends[si].needs_received <= ri : send_pad > 0;
    if (send_ready) {
      const bool padding = si == sends.size();
      Result<size_t> n = padding ? SendSome(links, nullptr, send_pad)
                                 : SendSome(links, sends[si].data + sent, sends[si].bytes - sent);
      if (!n.ok()) return failed(n.status());
      if (*n > 0) {
        progressed = true;
        if (padding) {
          send_pad -= *n;
        } else if ((sent += *n) == sends[si].bytes) {
          sent = 0;
          if (++si == sends.size() && links.send_shm != nullptr) {
            send_pad = links.send_shm->PadBytes();
          }
        }
      }
    }
    const bool receiving = ri < recvs.size() || recv_pad > 0;
    if (receiving) {
      const bool padding = ri == recvs.size();
      Result<size_t> n = size_t{0};
      if (padding) {
        n = RecvSome(links, nullptr, recv_pad, false);
      } else {
        const RecvPiece& p = recvs[ri];
        const bool to_staging = p.reduce_sum && staged;
        char* into = (to_staging ? staging.data() : p.dest) + received;
        n = RecvSome(links, into, p.bytes - received, p.reduce_sum && !staged);
      }
      if (!n.ok()) return failed(n.status());
      if (*n > 0) {
        progressed = true;
        if (padding) {
          recv_pad -= *n;
        } else if ((received += *n) == recvs[ri].bytes) {
          const RecvPiece& p = recvs[ri];
          if (p.reduce_sum && staged) AddInto(p.dest, staging.data(), p.bytes);
          received = 0;
          if (++ri == recvs.size() && links.recv_shm != nullptr) {
            recv_pad = links.recv_shm->PadBytes();
          }
        }
      }
    }
    if (progressed) {
      last_progress = RingClock::now();
      continue;
    }
    // A peer's next bytes usually come within microseconds: retry briefly
    // before paying for a sleep and wake-up.
    if (RingClock::now() - last_progress < kSpin) {
      std::this_thread::yield();  // lets a peer sharing this core run
      continue;
    }

    // Sleep. With both directions on sockets, poll() watches both. With a
    // shared-memory direction one wait covers one side: the send side when
    // it has no room (the successor then holds unread data, so it keeps
    // consuming and wakes us), else the receive side.
    const auto give_up = last_progress + links.deadline;
    bool waits_for_send = send_ready && !receiving;
    Result<bool> ready = false;
    if (links.send_shm == nullptr && links.recv_shm == nullptr) {
      ready = WaitOnSockets(links, send_ready ? POLLOUT : 0, receiving ? POLLIN : 0, give_up);
    } else if (send_ready) {
      waits_for_send = true;
      ready = links.send_shm != nullptr
                  ? WaitOnShm(*links.send_shm, false, links.send_fd, links.successor, give_up)
                  : WaitOnSockets(links, POLLOUT, 0, give_up);
    } else {
      ready = links.recv_shm != nullptr
                  ? WaitOnShm(*links.recv_shm, true, links.recv_fd, links.predecessor, give_up)
                  : WaitOnSockets(links, 0, POLLIN, give_up);
    }
    if (!ready.ok()) return failed(ready.status());
    if (!*ready && RingClock::now() >= give_up) {
      if (waits_for_send) {
        return DeadlineExceeded(links.successor + " accepted no data for " +
                                Millis(links.deadline));
      }
      return DeadlineExceeded("no data from " + links.predecessor + " for " +
                              Millis(links.deadline));
    }
  }
  return Status::Ok();
}

}  // namespace edl::net
