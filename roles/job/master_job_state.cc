// What a master leaves for the one that replaces it, beside the core's
// journal (roles/job/master_job.h): the plan (processes.json: the PS
// addresses and boot ids, the workers) and the incident timeline
// (incidents.json).
#include <nlohmann/json.hpp>

#include "base/file.h"
#include "base/logging.h"
#include "roles/job/master_job.h"

namespace edl::roles::job {

Status MasterJob::SavePlan() const {
  if (state_dir_.empty()) return Status::Ok();
  nlohmann::json plan{{"ps", ps_addrs_},
                      {"ps_boots", ps_boots_},
                      {"next_worker", next_worker_},
                      {"workers", active_},
                      {"failure_relaunches", supervisor_->FailureRelaunches()}};
  EDL_RETURN_IF_ERROR(WriteFileAtomically(state_dir_ + "/processes.json", plan.dump()));
  return state_configmap_ ? state_configmap_->Save(state_dir_) : Status::Ok();
}

void MasterJob::SaveIncidents() {
  if (state_dir_.empty()) return;
  std::string now = core_->SavedIncidents();
  if (now == saved_incidents_) return;
  Status s = WriteFileAtomically(state_dir_ + "/incidents.json", now);
  if (s.ok() && state_configmap_) s = state_configmap_->Save(state_dir_);
  if (!s.ok()) {
    EDL_LOG(WARNING) << "the incident timeline could not be saved: " << s.message();
    return;
  }
  saved_incidents_ = std::move(now);
}

}  // namespace edl::roles::job
