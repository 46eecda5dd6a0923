// Same-host data path of the ring collectives (net/collective/collective.h): a
// single-producer/single-consumer byte ring in a POSIX shared-memory segment,
// one per directed ring link whose two ends run on the same machine.
//
// The connecting rank (the producer: it sends to its successor) creates the
// segment under an unguessable name ("/edl-ring-<pid>-<128 random bits>",
// mode 0600) and names it in its hello; the accepting rank (the consumer)
// maps it and unlinks the name at once, and the producer unlinks it again
// when the answer comes or formation fails. So the name exists only while a
// handshake is in flight, and a rank killed later leaks nothing; the name of
// one killed during its handshake is unlinked by the next Create on the
// machine (it carries the dead creator's pid).
//
// Layout: a 4 KiB header, then `capacity` bytes (a power of two) of data.
// head (bytes published, written by the producer) and tail (bytes consumed,
// written by the consumer) only grow; the ring holds head - tail bytes and
// both counters stay multiples of 4 inside an allreduce, so floats never
// straddle the wrap. A side that cannot move sleeps on a futex word in the
// header (data_seq for the consumer, space_seq for the producer) after
// announcing itself; the other side bumps the word and FUTEX_WAKEs only then.
// `closed` is set by either side when its ring breaks or goes away, so the
// other end fails promptly; a killed peer is noticed on the TCP connection
// that stays open beside the segment (net/collective/pipeline.cc).
//
// Thread-safety: one thread writes (producer) and one reads (consumer) per
// process; Close() may be called from any thread (Ring::Abort).
#pragma once

#include <cstddef>
#include <cstdint>
#include <memory>
#include <string>

#include "base/status.h"
#include "net/collective/socket.h"

namespace edl::net {

// "<boot id>/<hostname>/<IPC namespace>": equal on two processes only when
// they run on the same booted machine in the same container (so see the
// same /dev/shm). Empty when the boot id cannot be read (then no shared
// memory is offered).
std::string HostIdentity();

inline constexpr size_t kShmRingCapacity = size_t{4} << 20;
inline constexpr size_t kShmMaxNameBytes = 255;

struct ShmHeader;

class ShmLink {
 public:
  // Producer end: creates and maps a new segment with `capacity` bytes of
  // ring (a power of two, at least 4 KiB). The name exists until Unlink().
  // First unlinks segments whose creator process no longer exists.
  static Result<std::unique_ptr<ShmLink>> Create(size_t capacity);
  // Consumer end: maps the segment `name` made by Create and unlinks it.
  // InvalidArgument for a name Create would not make; Unavailable when it
  // cannot be opened or is not an edl ring segment.
  static Result<std::unique_ptr<ShmLink>> Open(const std::string& name);

  // Closes (see Close), unmaps, and unlinks the name if still there.
  ~ShmLink();
  ShmLink(const ShmLink&) = delete;
  ShmLink& operator=(const ShmLink&) = delete;

  const std::string& name() const { return name_; }
  size_t capacity() const { return capacity_; }
  // Removes the name from /dev/shm (idempotent; the mapping stays).
  void Unlink();

  // Producer: copies up to `bytes` from `data` into the ring (data ==
  // nullptr: advances over padding without copying) and publishes them.
  // Returns the bytes taken; 0 when the ring is full.
  size_t Write(const char* data, size_t bytes);
  // Consumer: takes up to `bytes` out of the ring into `dest`, either
  // copying or, with reduce_sum, adding them as floats (dest[i] += ring[i],
  // read straight from the shared segment); dest == nullptr discards.
  // Returns the bytes taken; 0 when the ring is empty.
  size_t Read(char* dest, size_t bytes, bool reduce_sum);
  // Bytes that bring this end's stream position to a multiple of 64; a
  // collective ends with the producer writing and the consumer skipping
  // them, so the next one starts aligned.
  size_t PadBytes() const;

  // True when Write (producer) or Read (consumer) would move a byte now.
  bool CanMove() const;
  // Sleeps until the other end may have made room (producer) or published
  // data (consumer), Close() was called on either end, or `until` passes.
  // May return early.
  void Wait(RingClock::time_point until);
  // True once either end called Close().
  bool Closed() const;
  // Marks the link closed and wakes both ends. Thread-safe.
  void Close();

 private:
  ShmLink(std::string name, bool producer, void* base, size_t mapped_bytes);

  const std::string name_;
  const bool producer_;
  void* const base_;
  const size_t mapped_bytes_;
  ShmHeader* const header_;
  char* const data_;
  const size_t capacity_;
  bool unlinked_ = false;
  uint64_t position_ = 0;       // head (producer) or tail (consumer), ours
  uint64_t peer_position_ = 0;  // last seen tail (producer) or head
};

}  // namespace edl::net
