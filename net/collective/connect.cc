// Ring formation (net/collective/collective.h): listening, the handshake exchange
// (net/collective/handshake.h), refusing foreign or stale peers, and setting
// up shared-memory links (net/collective/shm.h) to neighbours on the same
// machine.
#include <poll.h>
#include <sys/eventfd.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>
#include <mutex>

#include "base/logging.h"
#include "net/collective/collective.h"
#include "net/collective/handshake.h"
#include "net/collective/ring_impl.h"
#include "net/collective/shm.h"
#include "net/rpc.h"

namespace edl::net {

namespace {

std::string Describe(const RingSpec& spec, int rank) {
  return "rank " + std::to_string(rank) + " (" + spec.peers[rank] + ")";
}

// Compares secrets in time independent of where they differ.
bool SameSecret(const std::string& a, const std::string& b) {
  unsigned char diff = a.size() == b.size() ? 0 : 1;
  for (size_t i = 0; i < a.size(); ++i) {
    diff |= static_cast<unsigned char>(a[i] ^ (i < b.size() ? b[i] : 0));
  }
  return diff == 0;
}

// Why this rank refuses `hello`, or OK.
Status Judge(const RingSpec& spec, const RingHello& hello, int predecessor) {
  int world = static_cast<int>(spec.peers.size());
  if (!SameSecret(hello.secret, spec.secret)) {
    return Unauthenticated("wrong job secret");
  }
  if (hello.ring_version != spec.version) {
    return FailedPrecondition("ring version " + std::to_string(hello.ring_version) +
                              " does not match this rank's version " +
                              std::to_string(spec.version));
  }
  if (hello.world_size != static_cast<uint32_t>(world)) {
    return FailedPrecondition("world size " + std::to_string(hello.world_size) +
                              " does not match this rank's " + std::to_string(world));
  }
  if (hello.to_rank != static_cast<uint32_t>(spec.rank) ||
      hello.from_rank != static_cast<uint32_t>(predecessor)) {
    return FailedPrecondition("connection from rank " + std::to_string(hello.from_rank) +
                              " to rank " + std::to_string(hello.to_rank) + ", expected rank " +
                              std::to_string(predecessor) + " to rank " +
                              std::to_string(spec.rank));
  }
  return Status::Ok();
}

Status ValidateSpec(const RingSpec& spec) {
  if (spec.peers.empty()) {
    return InvalidArgument("ring spec: peers is empty");
  }
  if (spec.rank < 0 || spec.rank >= static_cast<int>(spec.peers.size())) {
    return InvalidArgument("ring spec: rank " + std::to_string(spec.rank) + " is not in [0, " +
                           std::to_string(spec.peers.size()) + ")");
  }
  if (spec.piece_bytes < sizeof(float)) {
    return InvalidArgument("ring spec: piece_bytes must be at least 4");
  }
  if (spec.deadline.count() <= 0) {
    return InvalidArgument("ring spec: deadline must be positive");
  }
  return Status::Ok();
}

// The predecessor's connection, and the shared-memory ring it offered when
// this rank took it.
struct Accepted {
  Fd fd;
  std::unique_ptr<ShmLink> shm;
};

// Accepts one connection and judges its hello. Returns the connection when
// it is this ring's predecessor, with its shared-memory ring mapped when it
// offered one from this machine (`host`: ours, empty when we offer none);
// otherwise answers with the refusal (when the hello parsed) and returns
// why.
Result<Accepted> AcceptOne(int listen_fd, const RingSpec& spec, const std::string& host,
                           RingClock::time_point deadline) {
  int world = static_cast<int>(spec.peers.size());
  int predecessor = (spec.rank - 1 + world) % world;
  Accepted accepted;
  EDL_ASSIGN_OR_RETURN(accepted.fd, AcceptTcp(listen_fd, deadline, spec.socket_buffer_bytes));
  const int fd = accepted.fd.get();
  // The prefix first: garbage is refused without waiting for more bytes.
  std::string header(kRingHelloHeaderBytes, '\0');
  EDL_RETURN_IF_ERROR(ReadExact(fd, header.data(), kRingHelloPrefixBytes, deadline, "peer"));
  EDL_RETURN_IF_ERROR(
      CheckRingHelloPrefix(std::string_view(header).substr(0, kRingHelloPrefixBytes)));
  EDL_RETURN_IF_ERROR(ReadExact(fd, header.data() + kRingHelloPrefixBytes,
                                header.size() - kRingHelloPrefixBytes, deadline, "peer"));
  RingHello hello;
  EDL_ASSIGN_OR_RETURN(size_t tail_len, DecodeRingHelloHeader(header, hello));
  std::string tail(tail_len, '\0');
  EDL_RETURN_IF_ERROR(ReadExact(fd, tail.data(), tail_len, deadline, "peer"));
  EDL_RETURN_IF_ERROR(DecodeRingHelloTail(tail, hello));
  Status verdict = Judge(spec, hello, predecessor);
  if (verdict.ok() && !host.empty() && hello.host == host && !hello.segment.empty()) {
    Result<std::unique_ptr<ShmLink>> shm = ShmLink::Open(hello.segment);
    if (shm.ok()) {
      accepted.shm = std::move(shm).value();
    } else {
      EDL_LOG(WARNING) << RingPrefix(spec) << ": using TCP from " << Describe(spec, predecessor)
                       << ": " << shm.status().message();
    }
  }
  EDL_RETURN_IF_ERROR(
      WriteAll(fd, EncodeRingAnswer(verdict, accepted.shm != nullptr), deadline, "peer"));
  if (!verdict.ok()) return verdict;
  return accepted;
}

// Reads the successor's answer to our hello; returns whether it took our
// shared-memory ring.
Result<bool> ReadAnswer(int fd, const RingSpec& spec, int successor,
                        RingClock::time_point deadline) {
  const std::string peer = Describe(spec, successor);
  std::string header(kRingAnswerHeaderBytes, '\0');
  EDL_RETURN_IF_ERROR(ReadExact(fd, header.data(), header.size(), deadline, peer));
  RingAnswer answer;
  EDL_ASSIGN_OR_RETURN(size_t len, DecodeRingAnswerHeader(header, answer));
  std::string message(len, '\0');
  EDL_RETURN_IF_ERROR(ReadExact(fd, message.data(), len, deadline, peer));
  if (answer.code == StatusCode::kOk) return answer.shared_memory;
  return Status(answer.code,
                peer + " refused ring version " + std::to_string(spec.version) + ": " + message);
}

}  // namespace

Result<std::unique_ptr<RingListener>> RingListener::Listen(const std::string& host, int port) {
  EDL_ASSIGN_OR_RETURN(auto listening, ListenTcp(host, port));
  int bound_port = listening.second;
  return std::unique_ptr<RingListener>(
      new RingListener(listening.first.Release(), host, bound_port));
}

RingListener::~RingListener() { ::close(fd_); }

std::string RingListener::address() const {
  std::string host = host_.find(':') != std::string::npos ? "[" + host_ + "]" : host_;
  return host + ":" + std::to_string(port_);
}

Ring::Ring(RingSpec spec, std::unique_ptr<Impl> impl)
    : spec_(std::move(spec)), impl_(std::move(impl)) {}

Ring::~Ring() = default;

Result<std::unique_ptr<Ring>> Ring::Connect(RingListener& listener, const RingSpec& spec) {
  EDL_RETURN_IF_ERROR(ValidateSpec(spec));
  auto impl = std::make_unique<Impl>();
  impl->wake = Fd(::eventfd(0, EFD_CLOEXEC | EFD_NONBLOCK));
  if (!impl->wake.valid()) {
    return Internal(std::string("eventfd: ") + std::strerror(errno));
  }
  int world = static_cast<int>(spec.peers.size());
  if (world > 1) {
    std::lock_guard<std::mutex> lock(listener.connect_mu_);
    const std::chrono::milliseconds form_limit =
        spec.connect_deadline.count() > 0 ? spec.connect_deadline : spec.deadline;
    auto deadline = RingClock::now() + form_limit;
    int successor = (spec.rank + 1) % world;
    int predecessor = (spec.rank - 1 + world) % world;
    const std::string prefix = RingPrefix(spec);
    std::string host;
    int port = 0;
    EDL_RETURN_IF_ERROR(ParseAddress(spec.peers[successor],
                                     "ring peer " + std::to_string(successor), &host, &port));

    // 1. Connect and say hello (never waits for the peer to accept),
    //    offering a shared-memory ring for the data we will send.
    Result<Fd> out = ConnectTcp(host, port, deadline, spec.socket_buffer_bytes);
    if (!out.ok()) {
      return out.status().WithPrefix(prefix + ": successor " + Describe(spec, successor));
    }
    const std::string machine = spec.shared_memory ? HostIdentity() : "";
    std::unique_ptr<ShmLink> out_shm;  // unlinked when it goes away
    if (!machine.empty()) {
      Result<std::unique_ptr<ShmLink>> created = ShmLink::Create(kShmRingCapacity);
      if (created.ok()) {
        out_shm = std::move(created).value();
      } else {
        EDL_LOG(WARNING) << prefix
                         << ": using TCP to the successor: " << created.status().message();
      }
    }
    RingHello hello{spec.version,
                    static_cast<uint32_t>(spec.rank),
                    static_cast<uint32_t>(successor),
                    static_cast<uint32_t>(world),
                    spec.secret,
                    out_shm ? machine : "",
                    out_shm ? out_shm->name() : ""};
    EDL_RETURN_IF_ERROR(
        WriteAll(out->get(), EncodeRingHello(hello), deadline, Describe(spec, successor))
            .WithPrefix(prefix));
    // 2. Accept the predecessor (its step 1 needs nothing from us) while
    //    watching for the successor's verdict on our hello, so a refusal
    //    is reported at once.
    Accepted in;
    bool answered = false;
    std::string last_refusal;
    while (!in.fd.valid() || !answered) {
      pollfd fds[2];
      nfds_t count = 0;
      if (!in.fd.valid()) fds[count++] = {listener.fd_, POLLIN, 0};
      if (!answered) fds[count++] = {out->get(), POLLIN, 0};
      int ready = ::poll(fds, count, PollTimeoutMs(deadline));
      if (ready < 0 && errno == EINTR) continue;
      if (ready <= 0) {
        std::string missing =
            (!in.fd.valid() ? "predecessor " + Describe(spec, predecessor) + " did not connect"
                            : "successor " + Describe(spec, successor) + " did not answer") +
            " within " + std::to_string(form_limit.count()) + " ms";
        if (!last_refusal.empty()) {
          missing += " (refused a connection: " + last_refusal + ")";
        }
        return DeadlineExceeded(prefix + ": " + missing);
      }
      for (nfds_t i = 0; i < count; ++i) {
        if (fds[i].revents == 0) continue;
        if (fds[i].fd == listener.fd_) {
          Result<Accepted> accepted = AcceptOne(listener.fd_, spec, machine, deadline);
          if (accepted.ok()) {
            in = std::move(accepted).value();
          } else {
            last_refusal = accepted.status().message();
            EDL_LOG(WARNING) << prefix << ": refused a ring connection: " << last_refusal;
          }
        } else {
          Result<bool> shared = ReadAnswer(out->get(), spec, successor, deadline);
          if (!shared.ok()) return shared.status().WithPrefix(prefix);
          if (out_shm) {
            out_shm->Unlink();  // the successor has it mapped, or never will
            if (!*shared) out_shm.reset();
          }
          answered = true;
        }
      }
    }

    impl->to_successor = std::move(out).value();
    impl->from_predecessor = std::move(in.fd);
    impl->to_successor_shm = std::move(out_shm);
    impl->from_predecessor_shm = std::move(in.shm);
    impl->links.send_fd = impl->to_successor.get();
    impl->links.recv_fd = impl->from_predecessor.get();
    impl->links.send_shm = impl->to_successor_shm.get();
    impl->links.recv_shm = impl->from_predecessor_shm.get();
    impl->links.successor = "successor " + Describe(spec, successor);
    impl->links.predecessor = "predecessor " + Describe(spec, predecessor);
  }
  impl->links.wake_fd = impl->wake.get();
  impl->links.aborted = &impl->aborted;
  impl->links.deadline = spec.deadline;
  impl->links.staging = &impl->staging;
  return std::unique_ptr<Ring>(new Ring(spec, std::move(impl)));
}

}  // namespace edl::net
