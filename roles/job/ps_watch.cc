#include "roles/job/ps_watch.h"

#include <algorithm>
#include <chrono>

#include "base/logging.h"
#include "roles/job/ps_process.h"

namespace edl::roles::job {

PsWatch::PsWatch(master::MasterCore& core, std::vector<std::string> addresses, std::string secret,
                 std::vector<std::string> known_boots, bool checkpoints)
    : core_(core),
      addresses_(std::move(addresses)),
      secret_(std::move(secret)),
      checkpoints_(checkpoints),
      known_(std::move(known_boots)),
      ask_(addresses_.size(), true),
      pending_boot_(addresses_.size()),
      pending_tasks_(addresses_.size()) {
  known_.resize(addresses_.size());
  // Until each PS is checked, the job cannot end without it.
  for (size_t i = 0; i < addresses_.size(); ++i) core_.HoldEnd(Name(i), true);
  thread_ = std::thread([this] { Loop(); });
}

PsWatch::~PsWatch() {
  {
    std::lock_guard<std::mutex> lock(mu_);
    stop_ = true;
  }
  wake_.notify_all();
  thread_.join();
}

void PsWatch::OnExit(int i) {
  if (i < 0 || i >= static_cast<int>(ask_.size())) return;
  core_.HoldEnd(Name(i), true);
  std::lock_guard<std::mutex> lock(mu_);
  ask_[i] = true;
  wake_.notify_all();
}

std::string PsWatch::Name(size_t i) { return "ps-" + std::to_string(i); }

std::vector<std::string> PsWatch::KnownBoots(bool* changed) {
  std::lock_guard<std::mutex> lock(mu_);
  *changed = changed_;
  changed_ = false;
  return known_;
}

void PsWatch::PollCheckpoints() {
  for (size_t i = 0; i < addresses_.size(); ++i) {
    Result<PsCheckpointHealth> h =
        ReadCheckpointHealth(addresses_[i], secret_, std::chrono::milliseconds(5000));
    if (!h.ok()) continue;  // down: the supervisor and the loss check see to it
    core_.OnCheckpointHealth(Name(i), h->last_good_version, h->failures, h->failed_version,
                             h->error);
  }
}

void PsWatch::Loop() {
  std::unique_lock<std::mutex> lock(mu_);
  auto next_health = std::chrono::steady_clock::now();
  while (!stop_) {
    if (checkpoints_ && std::chrono::steady_clock::now() >= next_health) {
      lock.unlock();
      PollCheckpoints();
      lock.lock();
      next_health = std::chrono::steady_clock::now() + std::chrono::seconds(2);
    }
    for (size_t i = 0; i < addresses_.size() && !stop_; ++i) {
      if (!ask_[i]) continue;
      lock.unlock();
      const bool done = Check(static_cast<int>(i));
      lock.lock();
      if (done) {
        ask_[i] = false;
        core_.HoldEnd(Name(i), false);
      }
    }
    wake_.wait_for(lock, std::chrono::milliseconds(500));
  }
}

bool PsWatch::Check(int i) {
  Result<PsApplied> r = ReadAppliedPushes(addresses_[i], secret_, std::chrono::milliseconds(5000));
  if (!r.ok()) return false;  // not up yet (or gone again: its exit re-arms us)
  std::string known;
  {
    std::lock_guard<std::mutex> lock(mu_);
    known = known_[i];
  }
  auto remember = [&] {
    std::lock_guard<std::mutex> lock(mu_);
    known_[i] = r->boot;
    changed_ = true;
  };
  if (r->boot == known) return true;
  const std::string ps = Name(i);
  if (known.empty()) {  // the job's first PS process under this name
    remember();
    return true;
  }
  if (pending_boot_[i] != r->boot) {
    // Pass 1.
    pending_boot_[i] = r->boot;
    const std::vector<int64_t> leased = core_.TrainingTasksInFlight();
    pending_tasks_[i] = std::set<int64_t>(leased.begin(), leased.end());
    EDL_LOG(INFO) << ps << " is a new process (at version " << r->version
                  << "): checking which done tasks' updates it lacks";
    core_.RedoLostTasks(ps, r->state.settled, r->state.taken);
    return false;  // asked again until pass 2
  }
  const std::vector<int64_t> leased = core_.TrainingTasksInFlight();
  const bool waiting = std::any_of(leased.begin(), leased.end(),
                                   [&](int64_t id) { return pending_tasks_[i].count(id) > 0; });
  if (waiting && core_.state() == master::JobState::kRunning) return false;
  // Pass 2.
  core_.RedoLostTasks(ps, r->state.settled, r->state.taken);
  pending_boot_[i].clear();
  pending_tasks_[i].clear();
  remember();
  return true;
}

}  // namespace edl::roles::job
