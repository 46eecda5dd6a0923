// MasterCore and the parameter servers (roles/master/master_core.h): the
// tasks a restored PS lacks trained again as redos, the PS's checkpoint
// health as incidents (and the job's failure), and the holds that keep the
// job from ending while a PS is being checked.
#include <algorithm>
#include <map>

#include "base/logging.h"
#include "roles/master/master_core.h"
#include "roles/master/master_events.h"

namespace edl::roles::master {

int64_t MasterCore::RedoLostTasks(const std::string& ps,
                                  const std::vector<std::pair<int64_t, int64_t>>& settled,
                                  const std::vector<std::pair<int64_t, int64_t>>& taken) {
  ChangeLock lock(*this);
  if (state_ != JobState::kRunning) return 0;
  const std::map<int64_t, int64_t> counts(taken.begin(), taken.end());
  const int64_t mb = std::max<int64_t>(1, options_.minibatch_size);
  std::vector<int64_t> lost;
  size_t range = 0;  // settled is ascending, as are the done tasks
  for (int64_t id : dispatcher_.DoneTrainingTasks()) {
    while (range < settled.size() && settled[range].second < id) ++range;
    if (range < settled.size() && settled[range].first <= id) continue;
    // Every minibatch taken, only the settling missed: held.
    auto count = counts.find(id);
    if (count != counts.end()) {
      const protocol::Task t = *dispatcher_.TaskOf(id);
      if (count->second >= (t.end - t.begin + mb - 1) / mb) continue;
    }
    lost.push_back(id);
  }
  if (lost.empty()) return 0;
  LogLocked(EncodeRedo(ps, lost));
  const auto [tasks, records] = RedoLocked(lost);
  EDL_LOG(WARNING) << ps << " came back without the updates of " << tasks
                   << " done training task(s) (" << records
                   << " records): training them again for it alone";
  return tasks;
}

std::pair<int64_t, int64_t> MasterCore::RedoLocked(const std::vector<int64_t>& task_ids) {
  const int64_t tasks = dispatcher_.Redo(task_ids);
  int64_t records = 0;
  for (int64_t id : task_ids) {
    if (std::optional<protocol::Task> t = dispatcher_.TaskOf(id)) records += t->end - t->begin;
  }
  AfterChangeLocked();
  return {tasks, records};
}

void MasterCore::OnCheckpointHealth(const std::string& ps, int64_t last_good_version,
                                    int64_t failures, int64_t failed_version,
                                    const std::string& error) {
  ChangeLock lock(*this);
  if (failures == 0) {
    if (last_good_version >= 0) incidents_.OnCheckpointWritten(ps, last_good_version);
    return;
  }
  incidents_.OnCheckpointFailed(ps, failed_version, last_good_version, failures, error,
                                WallNanos());
  const int64_t steps = options_.checkpoint_steps;
  const int intervals = options_.max_failed_checkpoint_intervals;
  if (state_ != JobState::kRunning || steps <= 0 || intervals <= 0) return;
  const int64_t since = std::max<int64_t>(last_good_version, 0);
  if (failed_version - since < steps * intervals) return;
  FailLocked(ps + ": no checkpoint written for " + std::to_string(intervals) +
             " checkpoint intervals (" + std::to_string(steps) + " versions each): " +
             (last_good_version < 0
                  ? std::string("none since the start")
                  : "the last good one is version " + std::to_string(last_good_version)) +
             ", and the attempt at version " + std::to_string(failed_version) + " failed (" +
             std::to_string(failures) + " failed attempts): " + error);
}

std::string MasterCore::SavedIncidents() const {
  std::lock_guard<std::mutex> lock(mu_);
  return incidents_.ToSaved();
}

bool MasterCore::RestoreIncidents(const std::string& saved) {
  std::lock_guard<std::mutex> lock(mu_);
  return incidents_.Restore(saved);
}

void MasterCore::HoldEnd(const std::string& who, bool hold) {
  ChangeLock lock(*this);
  if (hold) {
    end_holds_.insert(who);
  } else if (end_holds_.erase(who) > 0) {
    AfterChangeLocked();
  }
}

std::vector<int64_t> MasterCore::TrainingTasksInFlight() const {
  std::lock_guard<std::mutex> lock(mu_);
  return dispatcher_.Leased(TaskType::kTraining);
}

}  // namespace edl::roles::master
