#include "roles/master/rendezvous.h"

#include <algorithm>

namespace edl::roles::master {

int RingView::RankOf(const std::string& worker) const {
  for (size_t i = 0; i < members.size(); ++i) {
    if (members[i].worker == worker) return static_cast<int>(i);
  }
  return -1;
}

std::vector<std::string> RingView::Addresses() const {
  std::vector<std::string> out;
  for (const RingMember& m : members) out.push_back(m.address);
  return out;
}

uint64_t Rendezvous::Join(const std::string& worker, const std::string& address) {
  std::lock_guard<std::mutex> lock(mu_);
  members_.erase(std::remove_if(members_.begin(), members_.end(),
                                [&](const RingMember& m) { return m.worker == worker; }),
                 members_.end());
  ++version_;
  members_.push_back(RingMember{worker, address, version_});
  fresh_.insert(worker);
  return version_;
}

uint64_t Rendezvous::Leave(const std::string& worker) {
  std::lock_guard<std::mutex> lock(mu_);
  auto it = std::find_if(members_.begin(), members_.end(),
                         [&](const RingMember& m) { return m.worker == worker; });
  if (it == members_.end()) return version_;
  members_.erase(it);
  fresh_.erase(worker);
  return ++version_;
}

void Rendezvous::MarkSynced(uint64_t version) {
  std::lock_guard<std::mutex> lock(mu_);
  for (const RingMember& m : members_) {
    if (m.joined_version <= version) fresh_.erase(m.worker);
  }
}

RingView Rendezvous::View() const {
  std::lock_guard<std::mutex> lock(mu_);
  RingView view;
  view.version = version_;
  view.members = members_;
  // The source: the longest-standing member that is not itself new. When
  // every member is new (the first ring), the first one's fresh
  // initialization is the state everyone takes.
  bool any_fresh = false;
  for (const RingMember& m : members_) any_fresh = any_fresh || fresh_.count(m.worker);
  if (any_fresh && !members_.empty()) {
    int best = 0;
    for (size_t i = 0; i < members_.size(); ++i) {
      const bool fresh_i = fresh_.count(members_[i].worker) > 0;
      const bool fresh_best = fresh_.count(members_[best].worker) > 0;
      if ((fresh_best && !fresh_i) ||
          (fresh_best == fresh_i && members_[i].joined_version < members_[best].joined_version)) {
        best = static_cast<int>(i);
      }
    }
    view.source_rank = best;
  }
  return view;
}

uint64_t Rendezvous::version() const {
  std::lock_guard<std::mutex> lock(mu_);
  return version_;
}

}  // namespace edl::roles::master
