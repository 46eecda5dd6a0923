// The pipelined transfer at the heart of every ring collective: a list of
// pieces to send to the successor and a list to receive from the
// predecessor, progressed concurrently by one loop, so that sending piece
// k+1 overlaps receiving and reducing piece k. A send piece may depend on
// received pieces (it forwards what arrived). Each direction moves over a
// non-blocking TCP socket or, for a neighbour on the same machine, over a
// shared-memory ring (net/collective/shm.h) with the socket kept open only
// to notice the peer's death.
// Internal to net/; not thread-safe (one pipeline per ring at a time).
#pragma once

#include <atomic>
#include <chrono>
#include <cstddef>
#include <span>
#include <string>
#include <vector>

#include "base/status.h"
#include "net/collective/shm.h"

namespace edl::net {

struct SendPiece {
  const char* data;
  size_t bytes;
  size_t needs_received;  // starts once this many recv pieces are done
};

struct RecvPiece {
  char* dest;
  size_t bytes;
  bool reduce_sum;  // true: dest floats += received floats; false: copy
};

// A collective's plan, kept between collectives to reuse its capacity.
struct Pieces {
  std::vector<SendPiece> sends;
  std::vector<RecvPiece> recvs;
};

struct PipelineLinks {
  int send_fd = -1;  // to the successor
  int recv_fd = -1;  // from the predecessor
  int wake_fd = -1;  // eventfd written by Abort()
  // When set, data to the successor (from the predecessor) moves through
  // this shared-memory ring; send_fd (recv_fd) then carries nothing and is
  // watched for the peer closing it.
  ShmLink* send_shm = nullptr;
  ShmLink* recv_shm = nullptr;
  const std::atomic<bool>* aborted = nullptr;
  std::chrono::milliseconds deadline{5000};  // longest time without progress
  std::string successor;                     // "rank 2 (10.0.0.7:7000)", for errors
  std::string predecessor;                   // likewise
  std::vector<char>* staging = nullptr;      // scratch for reduced pieces
};

// Runs both lists to completion. Aborted when *aborted is set;
// DeadlineExceeded when nothing moves for links.deadline; Unavailable when a
// peer closes or resets its connection (or closes the shared ring). Messages
// name the peer. Over shared memory each list ends by padding the stream to
// 64 bytes, so every collective starts aligned.
// REQUIRES: every send piece's dependency is satisfiable by the recv list.
Status RunPipeline(const PipelineLinks& links, std::span<const SendPiece> sends,
                   std::span<const RecvPiece> recvs);

}  // namespace edl::net
