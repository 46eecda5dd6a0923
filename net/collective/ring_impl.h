// Ring::Impl (net/collective/collective.h): the state one ring keeps between
// collectives, shared by ring formation (net/collective/connect.cc) and the
// collectives (net/collective/collective.cc). Internal to net/.
#pragma once

#include <sys/socket.h>

#include <atomic>
#include <memory>
#include <string>
#include <vector>

#include "net/collective/collective.h"
#include "net/collective/pipeline.h"
#include "net/collective/shm.h"
#include "net/collective/socket.h"

namespace edl::net {

// "ring v3 rank 1", the prefix of every error a ring returns.
inline std::string RingPrefix(const RingSpec& spec) {
  return "ring v" + std::to_string(spec.version) + " rank " + std::to_string(spec.rank);
}

struct Ring::Impl {
  Fd to_successor;
  Fd from_predecessor;
  Fd wake;  // eventfd; Abort() writes it to wake a blocked poll
  // Shared-memory rings to the successor / from the predecessor, when on
  // the same machine; null for TCP.
  std::unique_ptr<ShmLink> to_successor_shm;
  std::unique_ptr<ShmLink> from_predecessor_shm;
  std::atomic<bool> aborted{false};
  std::atomic<bool> running{false};
  bool broken = false;  // only the collective's thread touches it
  std::string broken_reason;
  PipelineLinks links;
  std::vector<char> staging;
  std::vector<float> fusion;    // bucket buffer for fused allreduce
  std::vector<float> gathered;  // the other ranks' buffers, small allreduce
  Pieces pieces;

  // OK when collectives may run; Aborted after Abort(), FailedPrecondition
  // after a failure.
  Status Usable(const RingSpec& spec) const {
    if (aborted.load()) return Aborted(RingPrefix(spec) + ": ring aborted");
    if (broken) {
      return FailedPrecondition(RingPrefix(spec) + ": ring is broken (" + broken_reason +
                                "); form a new ring");
    }
    return Status::Ok();
  }

  // Marks the ring broken and shuts its connections down, so that the
  // neighbours fail promptly instead of waiting for their deadline.
  void Break(const Status& why) {
    broken = true;
    broken_reason = why.message();
    ShutDown();
  }

  // Closes the shared-memory links (waking both ends) and shuts the sockets
  // down. Thread-safe.
  void ShutDown() {
    if (to_successor_shm) to_successor_shm->Close();
    if (from_predecessor_shm) from_predecessor_shm->Close();
    if (to_successor.valid()) ::shutdown(to_successor.get(), SHUT_RDWR);
    if (from_predecessor.valid()) ::shutdown(from_predecessor.get(), SHUT_RDWR);
  }
};

}  // namespace edl::net
