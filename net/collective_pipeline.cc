// The ring collectives' pipelined transfer loop (net/collective_pipeline.h).
#include "net/collective_pipeline.h"

#include <poll.h>
#include <sys/socket.h>

#include <algorithm>
#include <cerrno>
#include <cstring>
#include <thread>

#include "net/collective_socket.h"

namespace edl::net {
namespace {

void AddInto(char* dest, const char* src, size_t bytes) {
  size_t n = bytes / sizeof(float);
  float* d = reinterpret_cast<float*>(dest);
  const float* s = reinterpret_cast<const float*>(src);
  for (size_t i = 0; i < n; ++i) d[i] += s[i];
}

std::string Millis(std::chrono::milliseconds m) {
  return std::to_string(m.count()) + " ms";
}

constexpr auto kSpin = std::chrono::microseconds(20);

}  // namespace

Status RunPipeline(const PipelineLinks& links, std::span<const SendPiece> sends,
                   std::span<const RecvPiece> recvs) {
  size_t max_reduce = 0;
  for (const RecvPiece& r : recvs) {
    if (r.reduce_sum) max_reduce = std::max(max_reduce, r.bytes);
  }
  std::vector<char>& staging = *links.staging;
  if (staging.size() < max_reduce) staging.resize(max_reduce);

  size_t si = 0, sent = 0;      // current send piece, bytes of it sent
  size_t ri = 0, received = 0;  // current recv piece, bytes of it received
  auto last_progress = RingClock::now();
  auto aborted = [&] { return links.aborted->load(std::memory_order_acquire); };

  while (si < sends.size() || ri < recvs.size()) {
    if (aborted()) return Aborted("collective aborted");
    bool progressed = false;
    bool send_ready = si < sends.size() && sends[si].needs_received <= ri;
    if (send_ready) {
      const SendPiece& p = sends[si];
      ssize_t n = p.bytes == sent
                      ? 0
                      : ::send(links.send_fd, p.data + sent, p.bytes - sent,
                               MSG_NOSIGNAL | MSG_DONTWAIT);
      if (n < 0 && errno != EAGAIN && errno != EINTR) {
        if (aborted()) return Aborted("collective aborted");
        return Unavailable("connection to " + links.successor +
                           " lost: " + std::strerror(errno));
      }
      if (n > 0) sent += static_cast<size_t>(n);
      if (sent == p.bytes) {
        ++si;
        sent = 0;
        progressed = true;
      } else if (n > 0) {
        progressed = true;
      }
    }
    if (ri < recvs.size()) {
      const RecvPiece& p = recvs[ri];
      char* into = p.reduce_sum ? staging.data() : p.dest;
      ssize_t n = p.bytes == received
                      ? 0
                      : ::recv(links.recv_fd, into + received,
                               p.bytes - received, MSG_DONTWAIT);
      if (n == 0 && p.bytes != received) {
        if (aborted()) return Aborted("collective aborted");
        return Unavailable(links.predecessor + " closed its connection");
      }
      if (n < 0 && errno != EAGAIN && errno != EINTR) {
        if (aborted()) return Aborted("collective aborted");
        return Unavailable("connection from " + links.predecessor +
                           " lost: " + std::strerror(errno));
      }
      if (n > 0) received += static_cast<size_t>(n);
      if (received == p.bytes) {
        if (p.reduce_sum) AddInto(p.dest, staging.data(), p.bytes);
        ++ri;
        received = 0;
        progressed = true;
      } else if (n > 0) {
        progressed = true;
      }
    }
    if (progressed) {
      last_progress = RingClock::now();
      continue;
    }
    // A peer's next bytes usually come within microseconds: retry briefly
    // before paying for a poll() sleep and wake-up.
    if (RingClock::now() - last_progress < kSpin) {
      std::this_thread::yield();  // lets a peer sharing this core run
      continue;
    }

    pollfd fds[3];
    nfds_t count = 0;
    const bool receiving = ri < recvs.size();
    if (send_ready) fds[count++] = {links.send_fd, POLLOUT, 0};
    if (receiving) fds[count++] = {links.recv_fd, POLLIN, 0};
    fds[count++] = {links.wake_fd, POLLIN, 0};
    auto give_up = last_progress + links.deadline;
    int n = ::poll(fds, count, PollTimeoutMs(give_up));
    if (n < 0 && errno != EINTR) {
      return Internal(std::string("poll: ") + std::strerror(errno));
    }
    if (n == 0 && RingClock::now() >= give_up) {
      if (receiving) {
        return DeadlineExceeded("no data from " + links.predecessor + " for " +
                                Millis(links.deadline));
      }
      return DeadlineExceeded(links.successor + " accepted no data for " +
                              Millis(links.deadline));
    }
  }
  return Status::Ok();
}

}  // namespace edl::net
