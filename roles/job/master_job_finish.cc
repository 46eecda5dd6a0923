// MasterJob's last steps: the final model and predictions, then stopping
// every process and the final report.
#include <signal.h>

#include <algorithm>
#include <cstdio>
#include <filesystem>

#include "base/clock.h"
#include "base/logging.h"
#include "roles/job/master_job.h"
#include "roles/job/ps_process.h"
#include "roles/local/model_export.h"
#include "roles/ps/ps_client.h"
#include "tensor/ops.h"

namespace edl::roles::job {

using std::chrono::milliseconds;

namespace {

// How long a stopping PS may take to write its final checkpoint.
constexpr milliseconds kPsCheckpointGrace{600000};

}  // namespace

Status MasterJob::Finish() {
  const MasterProcessOptions& o = o_;
  if (core_->state() == master::JobState::kSucceeded && o.allreduce) {
    // Every member holds the final model; the ring's rank 0 exports it once
    // every member is done, and the workers then exit by themselves.
    const double deadline = SystemClock().NowSeconds() + 120;
    while (!processes_->Running().empty() && SystemClock().NowSeconds() < deadline) {
      supervisor_->Step(milliseconds(100));
    }
    if (!processes_->Running().empty()) {
      EDL_LOG(WARNING) << "workers still running 120 s after the last task; stopping them";
    }
    if (!o.output.empty() && !std::filesystem::exists(o.output)) {
      return Internal("the ring's rank 0 did not export the model to " + o.output +
                      " (see the workers' logs)");
    }
    if (!o.output.empty()) EDL_LOG(INFO) << "the ring exported the trained model to " << o.output;
    return Status::Ok();
  }
  if (core_->state() != master::JobState::kSucceeded) return Internal(core_->failure_reason());
  for (const std::string& name : gone_) {
    if (ps_names_.count(name)) {
      return Internal("training succeeded, but " + name +
                      " ended with the master that saw it "
                      "succeed, before the model was pulled: the final model is in the PS "
                      "checkpoints (--checkpoint_dir), if any, not exported");
    }
  }
  if (!o.checkpoint_dir.empty()) EDL_RETURN_IF_ERROR(SaveFinalCheckpoints(ps_addrs_, secret_));
  // The final model: every PS's partition pulled into the master's model.
  ps::PsClient client(services_);
  CompiledModel& cm = *cm_;
  Status pulled = client.PullDense(cm.model->parameters());
  for (const auto& e : cm.model->EmbeddingInputs()) {
    if (!pulled.ok()) break;
    const int64_t rows = e.table->value.dim(0);
    std::vector<int64_t> ids(rows);
    for (int64_t r = 0; r < rows; ++r) ids[r] = r;
    pulled = client.PullRows(*e.table, tensor::Tensor::FromInts({rows}, ids));
  }
  if (!pulled.ok()) return pulled.WithPrefix("pulling the final model from the PS");
  cm.optimizer->set_iterations(core_->model_version());
  cm.epoch = o.num_epochs;
  if (!o.output.empty()) {
    EDL_RETURN_IF_ERROR(ExportModel(cm, o.output));
    EDL_LOG(INFO) << "exported the trained model to " << o.output;
  }
  if (prediction_parts_) {
    EDL_RETURN_IF_ERROR(core_->PredictionsComplete());
    EDL_RETURN_IF_ERROR(prediction_parts_->Finish(mopt_.records.prediction));
    EDL_LOG(INFO) << "wrote the predictions of " << mopt_.records.prediction << " records to "
                  << o.prediction_output;
  }
  return Status::Ok();
}

Status MasterJob::StopAll(Status result) {
  const MasterProcessOptions& o = o_;
  // Stop every process; workers have mostly left by themselves already. A
  // PS writes its partition on SIGTERM (unless saved above), so it gets the
  // time a checkpoint may take before any SIGKILL.
  stopping_job_ = true;
  const milliseconds ps_grace =
      o.checkpoint_dir.empty() ? o.grace_period : std::max(o.grace_period, kPsCheckpointGrace);
  for (const std::string& name : ps_names_) {
    Status s = supervisor_->Remove(name, SIGTERM, ps_grace);
    (void)s;  // NotFound: it has exited already
  }
  supervisor_->RemoveAll(SIGTERM);
  const double stop_deadline =
      SystemClock().NowSeconds() + std::max(o.grace_period, ps_grace).count() / 1000.0 + 5;
  while (!processes_->Running().empty() && SystemClock().NowSeconds() < stop_deadline) {
    supervisor_->Step(milliseconds(100));
  }
  if (result.ok() && !ps_stop_failures_.empty()) {
    result = Internal(ps_stop_failures_.front() +
                      " while stopping (see its log: its final "
                      "checkpoint may have failed)");
  }
  if (kube_cluster_) kube_cluster_->DeleteServices();
  if (result.ok() && held_) result = HoldOutputs();
  if (!result.ok()) core_->FailEnding(result.message());
  server_->Stop();
  std::printf("%s\n", core_->FinalReport().c_str());
  std::fflush(stdout);
  return result;
}

Status MasterJob::HoldOutputs() {
  const int limit = o_.kube.hold_outputs_s;
  // An output the job should have written and did not fails the job, which
  // the client then reports with the reason.
  EDL_RETURN_IF_ERROR(held_->Ready());
  EDL_LOG(INFO) << "the job's outputs wait in this pod for the client that submitted it (at most "
                << limit << " s)";
  if (held_->WaitFetched(std::chrono::seconds(limit))) {
    EDL_LOG(INFO) << "the client fetched the job's outputs";
  } else if (stop_requested_) {
    EDL_LOG(WARNING) << "stopped while holding the job's outputs; they end with this pod";
  } else {
    EDL_LOG(WARNING) << "no client fetched the job's outputs within " << limit
                     << " s; they end with this pod (put --output on a --volume to keep them)";
  }
  return Status::Ok();
}

}  // namespace edl::roles::job
