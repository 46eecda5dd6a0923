// Rendezvous: the membership of an allreduce ring, kept by the master
// (--distribution_strategy=AllreduceStrategy, docs/allreduce.md). A worker
// joins by registering the address of its ring listener (net/collective/collective.h);
// it leaves by dying (the master's heartbeat membership declares it lost),
// by SIGTERM or by a scale-down. Every change bumps the version; workers
// read the view at step boundaries and re-form their ring when the version
// differs from theirs, so a change costs at most the step in flight.
//
// Ring order is join order: survivors keep their relative order and
// joiners are appended, so a re-formed ring reconnects few neighbours. A
// view in which some members are new names a source: the longest-standing
// member, whose parameters and optimizer state are broadcast to everyone
// before the next step (no checkpoint reload, no restart).
//
// Thread-safe.
#pragma once

#include <cstdint>
#include <mutex>
#include <set>
#include <string>
#include <vector>

namespace edl::roles::protocol {
class Reader;
class Writer;
}  // namespace edl::roles::protocol

namespace edl::roles::master {

struct RingMember {
  std::string worker;           // the worker's name ("worker-3")
  std::string address;          // its ring listener, "host:port"
  uint64_t joined_version = 0;  // the version its join created
};

struct RingView {
  uint64_t version = 0;             // 0: nobody has joined yet
  std::vector<RingMember> members;  // ring order; rank = index
  // Rank of the member whose state everyone takes before the next step
  // (-1 when every member already holds the ring's state).
  int source_rank = -1;

  int size() const { return static_cast<int>(members.size()); }
  // The rank of `worker`, -1 if it is not a member.
  int RankOf(const std::string& worker) const;
  std::vector<std::string> Addresses() const;
};

class Rendezvous {
 public:
  // Adds `worker` at the end of the ring, or moves it there with its new
  // address if it re-joins (a relaunched worker under the same name).
  // Returns the new version.
  uint64_t Join(const std::string& worker, const std::string& address);
  // Removes `worker`; returns the new version, or the current one if it was
  // not a member (nothing changed).
  uint64_t Leave(const std::string& worker);
  // The ring of `version` has taken the source's state: its members are no
  // longer new. Ignored for an older version than a member's join.
  void MarkSynced(uint64_t version);
  RingView View() const;
  uint64_t version() const;

  // The durable state (roles/master/master_state.cc): version, members in
  // order, those not synced. Load replaces it; errors go to the reader.
  void Save(protocol::Writer& w) const;
  void Load(protocol::Reader& r);

 private:
  mutable std::mutex mu_;
  // Guarded by mu_.
  uint64_t version_ = 0;
  std::vector<RingMember> members_;
  // Members that have not yet taken the source's state.
  std::set<std::string> fresh_;
};

}  // namespace edl::roles::master
