// Ring collectives for Elastic AllReduce: persistent TCP streams between ring
// neighbours and a pipelined ring allreduce / broadcast over them. Between
// two neighbours on the same machine (same boot id and hostname, both with
// RingSpec::shared_memory) the data moves through a shared-memory ring
// buffer instead, and the TCP stream stays open to notice the peer's death.
//
// A ring has N ranks in a fixed order; rank r keeps one connection to its
// successor (r+1) % N and one from its predecessor (r-1+N) % N. A membership
// has a version: the handshake carries (ring version, ranks, world size, job
// secret) and a peer whose version, world size or secret differs is refused.
// A RingListener outlives rings: after a member is lost the survivors call
// Ring::Connect again on the same listeners with a higher version.
//
// Every transfer has a deadline: when no byte moves for `spec.deadline` the
// collective fails with DeadlineExceeded naming the peer it waits for; a peer
// that closes its end gives Unavailable. After any failure (or Abort()) the
// ring is broken: its sockets are shut down, so neighbours fail promptly too,
// and every later collective returns FailedPrecondition. Form a new ring.
//
// On failure a collective leaves its buffers' contents unspecified.
//
// Thread-safety: one collective at a time per Ring; Abort() may be called
// from any thread while the Ring lives. Ring::Connect calls on one listener
// are serialized; Connect itself cannot be aborted (it is bounded by
// spec.deadline).
#pragma once

#include <chrono>
#include <cstddef>
#include <cstdint>
#include <memory>
#include <mutex>
#include <span>
#include <string>
#include <vector>

#include "base/status.h"

namespace edl::net {

struct RingSpec {
  int rank = 0;
  std::vector<std::string> peers;  // "host:port" of every rank, ring order
  uint64_t version = 0;            // membership version; peers must agree
  std::string secret;              // the job secret; peers must agree
  // Bound on forming the ring, and on how long any transfer may make no
  // progress before the collective fails.
  std::chrono::milliseconds deadline{5000};
  // Bound on forming the ring alone (0: `deadline`); short when the
  // membership may change meanwhile, so a stale view fails fast.
  std::chrono::milliseconds connect_deadline{0};
  size_t piece_bytes = size_t{1} << 19;  // pipelining granularity
  // An allreduce of at most this many bytes is latency-bound: instead of
  // reduce-scatter + allgather (2(N-1) steps) every rank's whole buffer goes
  // round the ring (N-1 steps, (N-1) buffers per rank) and each rank sums
  // the N buffers in rank order, so results stay bitwise identical. 0: the
  // ring algorithm at every size.
  size_t small_allreduce_bytes = size_t{8} << 10;
  int socket_buffer_bytes = 4 << 20;  // SO_SNDBUF/SO_RCVBUF; 0: kernel's
  // Offer (and accept) shared-memory links to neighbours on the same
  // machine. A link uses shared memory only when both its ends set this;
  // otherwise, and between machines, data moves over TCP. Failures, the
  // deadline and Abort() behave the same on both.
  bool shared_memory = true;
};

class RingListener {
 public:
  // Listens on host:port (port 0: an ephemeral port).
  static Result<std::unique_ptr<RingListener>> Listen(const std::string& host, int port);
  ~RingListener();
  RingListener(const RingListener&) = delete;
  RingListener& operator=(const RingListener&) = delete;

  // "host:port" with the actual port; what peers put in RingSpec::peers.
  std::string address() const;
  int port() const { return port_; }

 private:
  friend class Ring;
  RingListener(int fd, std::string host, int port) : fd_(fd), host_(std::move(host)), port_(port) {}

  const int fd_;
  const std::string host_;
  const int port_;
  std::mutex connect_mu_;  // held by Ring::Connect while it accepts
};

enum class ReduceOp { kSum, kAverage };

class Ring {
 public:
  // Connects to the successor, accepts the predecessor on `listener` and
  // exchanges handshakes. Fails with DeadlineExceeded when the ring does not
  // form within spec.deadline, Unauthenticated on a secret mismatch and
  // FailedPrecondition on a version or world-size mismatch (naming the peer).
  // World size 1 opens no connection.
  static Result<std::unique_ptr<Ring>> Connect(RingListener& listener, const RingSpec& spec);
  ~Ring();
  Ring(const Ring&) = delete;
  Ring& operator=(const Ring&) = delete;

  int rank() const { return spec_.rank; }
  int size() const { return static_cast<int>(spec_.peers.size()); }
  uint64_t version() const { return spec_.version; }

  // In place: every rank ends with the element-wise sum (or mean) of all
  // ranks' `data`, bitwise identical on every rank. REQUIRES: all ranks pass
  // the same length.
  Status AllReduce(std::span<float> data, ReduceOp op = ReduceOp::kSum);

  // Gradient fusion: packs consecutive tensors into buckets of about
  // `bucket_bytes` and reduces each bucket as one buffer (a tensor larger
  // than a bucket is reduced in place on its own). REQUIRES: all ranks pass
  // the same tensor sizes in the same order.
  Status AllReduce(const std::vector<std::span<float>>& tensors, size_t bucket_bytes,
                   ReduceOp op = ReduceOp::kSum);

  // Copies `root`'s bytes into every rank's `data`, pipelined along the ring.
  // REQUIRES: all ranks pass the same length and root.
  Status Broadcast(std::span<std::byte> data, int root);

  // Makes a running or later collective return Aborted promptly; the ring is
  // broken afterwards. Thread-safe.
  void Abort();

 private:
  struct Impl;
  Ring(RingSpec spec, std::unique_ptr<Impl> impl);

  const RingSpec spec_;
  std::unique_ptr<Impl> impl_;
};

}  // namespace edl::net
