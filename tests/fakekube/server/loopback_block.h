// LoopbackBlock: a /16 of loopback addresses (127.N.0.0/16) that belongs to
// this object for its lifetime, so that fake clusters running side by side
// on one machine (tests run in parallel, an experiment beside them) never
// hand out the same pod or cluster IP. Reservation is an exclusive flock on
// /tmp/edl-fake-kube-loopback/N.lock, released when the object (or the
// process) goes away; N runs over 12..250 from a random start.
#pragma once

#include <string>

namespace edl::fakekube {

class LoopbackBlock {
 public:
  // Reserves a free block; EDL_CHECK-fails if all 239 are taken.
  LoopbackBlock();
  ~LoopbackBlock();
  LoopbackBlock(const LoopbackBlock&) = delete;
  LoopbackBlock& operator=(const LoopbackBlock&) = delete;
  // "127.N." : append "x.y".
  const std::string& prefix() const { return prefix_; }

 private:
  int fd_ = -1;
  std::string prefix_;
};

}  // namespace edl::fakekube
