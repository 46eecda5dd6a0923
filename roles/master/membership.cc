#include "roles/master/membership.h"

#include <algorithm>
#include <cctype>

namespace edl::roles::master {

bool NaturalLess(const std::string& a, const std::string& b) {
  size_t i = 0, j = 0;
  while (i < a.size() && j < b.size()) {
    if (std::isdigit(static_cast<unsigned char>(a[i])) &&
        std::isdigit(static_cast<unsigned char>(b[j]))) {
      size_t ie = i, je = j;
      while (ie < a.size() && std::isdigit(static_cast<unsigned char>(a[ie]))) ++ie;
      while (je < b.size() && std::isdigit(static_cast<unsigned char>(b[je]))) ++je;
      // Compare the numbers without leading zeros: longer is larger.
      size_t is = i, js = j;
      while (is + 1 < ie && a[is] == '0') ++is;
      while (js + 1 < je && b[js] == '0') ++js;
      if (ie - is != je - js) return ie - is < je - js;
      int c = a.compare(is, ie - is, b, js, je - js);
      if (c != 0) return c < 0;
      i = ie;
      j = je;
    } else {
      if (a[i] != b[j]) return a[i] < b[j];
      ++i;
      ++j;
    }
  }
  return a.size() - i < b.size() - j;
}

Membership::Membership(int64_t heartbeat_timeout_nanos, int target_workers)
    : heartbeat_timeout_(heartbeat_timeout_nanos), target_(target_workers) {}

std::map<int64_t, WorkerInfo>::iterator Membership::FindByName(const std::string& name) {
  return std::find_if(alive_.begin(), alive_.end(),
                      [&](const auto& kv) { return kv.second.name == name; });
}

Membership::Registration Membership::Register(const std::string& name, int64_t pid,
                                              int64_t now_nanos, int num_threads) {
  Registration r;
  if (auto old = FindByName(name); old != alive_.end()) {
    r.replaced = old->second;
    if (old->second.last_report_task != 0) {
      gone_last_report_[old->first] = old->second.last_report_task;
    }
    alive_.erase(old);
    ++deaths_;
  }
  WorkerInfo w;
  w.id = next_id_++;
  w.name = name;
  w.pid = pid;
  w.num_threads = num_threads;
  w.registered_nanos = now_nanos;
  w.last_seen_nanos = now_nanos;
  w.stopping = target_ > 0 && active_count() >= target_;
  alive_.emplace(w.id, w);
  r.worker = w;
  return r;
}

Standing Membership::StandingOf(int64_t worker_id) const {
  if (worker_id <= 0 || worker_id >= next_id_) return Standing::kUnknown;
  auto it = alive_.find(worker_id);
  if (it == alive_.end()) return Standing::kGone;
  return it->second.stopping ? Standing::kStopping : Standing::kAlive;
}

Standing Membership::Touch(int64_t worker_id, int64_t now_nanos) {
  auto it = alive_.find(worker_id);
  if (it != alive_.end()) {
    it->second.last_seen_nanos = std::max(it->second.last_seen_nanos, now_nanos);
  }
  return StandingOf(worker_id);
}

std::vector<WorkerInfo> Membership::Tick(int64_t now_nanos) {
  std::vector<WorkerInfo> dead;
  for (auto it = alive_.begin(); it != alive_.end();) {
    if (now_nanos - it->second.last_seen_nanos > heartbeat_timeout_) {
      dead.push_back(it->second);
      if (it->second.last_report_task != 0) {
        gone_last_report_[it->first] = it->second.last_report_task;
      }
      it = alive_.erase(it);
      ++deaths_;
    } else {
      ++it;
    }
  }
  return dead;
}

std::optional<WorkerInfo> Membership::OnExit(const std::string& name) {
  auto it = FindByName(name);
  if (it == alive_.end()) return std::nullopt;
  return DeclareDead(it->first);
}

std::optional<WorkerInfo> Membership::DeclareDead(int64_t id) {
  auto it = alive_.find(id);
  if (it == alive_.end()) return std::nullopt;
  WorkerInfo w = it->second;
  if (w.last_report_task != 0) gone_last_report_[id] = w.last_report_task;
  alive_.erase(it);
  ++deaths_;
  return w;
}

int64_t Membership::LastReport(int64_t id) const {
  if (auto it = alive_.find(id); it != alive_.end()) return it->second.last_report_task;
  auto gone = gone_last_report_.find(id);
  return gone == gone_last_report_.end() ? 0 : gone->second;
}

void Membership::SetLastReport(int64_t id, int64_t task_id) {
  if (auto it = alive_.find(id); it != alive_.end()) {
    it->second.last_report_task = task_id;
  } else if (id > 0 && id < next_id_) {
    gone_last_report_[id] = task_id;
  }
}

WorkerInfo* Membership::Find(int64_t id) {
  auto it = alive_.find(id);
  return it == alive_.end() ? nullptr : &it->second;
}

int Membership::active_count() const {
  return static_cast<int>(std::count_if(alive_.begin(), alive_.end(),
                                        [](const auto& kv) { return !kv.second.stopping; }));
}

std::vector<std::string> Membership::SetTarget(int n) {
  target_ = n;
  std::vector<std::string> asked;
  if (n <= 0) return asked;
  std::vector<WorkerInfo*> active;
  for (auto& [id, w] : alive_) {
    if (!w.stopping) active.push_back(&w);
  }
  std::sort(active.begin(), active.end(),
            [](const WorkerInfo* a, const WorkerInfo* b) { return NaturalLess(a->name, b->name); });
  for (size_t i = static_cast<size_t>(n); i < active.size(); ++i) {
    active[i]->stopping = true;
    asked.push_back(active[i]->name);
  }
  return asked;
}

bool Membership::RequestStop(const std::string& name) {
  auto it = FindByName(name);
  if (it == alive_.end()) return false;
  it->second.stopping = true;
  return true;
}

}  // namespace edl::roles::master
