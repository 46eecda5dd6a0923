// MasterCore's part in the allreduce ring (roles/master/master_core.h):
// members join, leave and report the ring formed; the view every member
// forms its ring from.
#include "base/logging.h"
#include "roles/master/master_core.h"
#include "roles/master/master_events.h"

namespace edl::roles::master {

void MasterCore::LeaveRingLocked(const std::string& name, int64_t id, const std::string& why) {
  auto it = ring_ids_.find(name);
  if (it == ring_ids_.end() || it->second != id) return;
  ring_ids_.erase(it);
  const uint64_t version = ring_.Leave(name);
  if (!replaying_)
    EDL_LOG(INFO) << "ring: " << name << " (id " << id << ") left (" << why << "); version "
                  << version << ", " << ring_ids_.size() << " member(s)";
}

protocol::RingView MasterCore::RingViewLocked() const {
  const RingView view = ring_.View();
  protocol::RingView out;
  out.version = view.version;
  out.source_rank = view.source_rank;
  out.members.reserve(view.members.size());
  for (const RingMember& m : view.members) {
    auto it = ring_ids_.find(m.worker);
    EDL_CHECK(it != ring_ids_.end()) << "ring member " << m.worker << " without an incarnation";
    out.members.push_back({.worker_id = it->second, .name = m.worker, .address = m.address});
  }
  return out;
}

Result<protocol::RingView> MasterCore::JoinRing(const protocol::JoinRingRequest& r) {
  if (r.address.empty()) {
    return InvalidArgument("JoinRing: worker id " + std::to_string(r.worker_id) +
                           ": address is empty (want \"host:port\")");
  }
  ChangeLock lock(*this);
  const Standing standing = membership_.Touch(r.worker_id, clock_.NowNanos());
  if (standing == Standing::kUnknown) return NeverRegistered(r.worker_id);
  if (standing != Standing::kAlive) {
    return FailedPrecondition(
        "JoinRing: worker id " + std::to_string(r.worker_id) +
        (standing == Standing::kGone ? " was declared dead or exited" : " was asked to leave") +
        "; it may not join the ring");
  }
  LogLocked(EncodeJoin(r.worker_id, r.address));
  JoinRingLocked(r.worker_id, r.address);
  return RingViewLocked();
}

void MasterCore::JoinRingLocked(int64_t worker_id, const std::string& address) {
  const std::string& name = membership_.alive().at(worker_id).name;
  ring_ids_[name] = worker_id;
  const uint64_t version = ring_.Join(name, address);
  if (!replaying_) {
    EDL_LOG(INFO) << "ring: " << name << " (id " << worker_id << ") joined at " << address
                  << "; version " << version << ", " << ring_ids_.size() << " member(s)";
  }
}

Result<protocol::RingView> MasterCore::GetRingView(const protocol::RingViewRequest& r) {
  std::lock_guard<std::mutex> lock(mu_);
  const Standing standing = membership_.Touch(r.worker_id, clock_.NowNanos());
  if (standing == Standing::kUnknown) return NeverRegistered(r.worker_id);
  return RingViewLocked();
}

Result<protocol::RingSyncedResponse> MasterCore::RingSynced(const protocol::RingSyncedRequest& r) {
  ChangeLock lock(*this);
  const Standing standing = membership_.Touch(r.worker_id, clock_.NowNanos());
  if (standing == Standing::kUnknown) return NeverRegistered(r.worker_id);
  ring_.MarkSynced(r.version);
  LogLocked(EncodeSynced(r.version));
  return protocol::RingSyncedResponse{};
}

}  // namespace edl::roles::master
