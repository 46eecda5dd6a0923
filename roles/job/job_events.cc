// The master's TensorBoard scalars (roles/job/job_events.h).
#include "roles/job/job_events.h"

#include "base/logging.h"
#include "nn/optim/optimizer.h"

namespace edl::roles::job {

Result<std::unique_ptr<JobEvents>> JobEvents::Open(const std::string& dir,
                                                   nn::optim::Optimizer* optimizer,
                                                   const master::Progress& start,
                                                   size_t evaluations_done, double now) {
  std::unique_ptr<summary::EventFileWriter> file;
  if (!dir.empty()) {
    EDL_ASSIGN_OR_RETURN(
        file, summary::EventFileWriter::Open("--tensorboard_log_dir", dir, summary::WallSeconds()));
    EDL_LOG(INFO) << "TensorBoard events: " << file->path();
  }
  return std::unique_ptr<JobEvents>(
      new JobEvents(std::move(file), optimizer, start, evaluations_done, now));
}

JobEvents::JobEvents(std::unique_ptr<summary::EventFileWriter> file,
                     nn::optim::Optimizer* optimizer, const master::Progress& start,
                     size_t evaluations_done, double now)
    : file_(std::move(file)),
      optimizer_(optimizer),
      last_(start),
      evaluations_done_(evaluations_done),
      last_time_(now) {}

void JobEvents::Write(int64_t step, const summary::Scalars& scalars) {
  const double wall = summary::WallSeconds();
  for (const auto& [tag, value] : scalars) series_.Add(tag, step, wall, value);
  if (!file_ || scalars.empty()) return;
  Status s = file_->Write(step, wall, scalars);
  if (!s.ok()) {
    EDL_LOG(WARNING) << s.message() << "; writing no more TensorBoard events";
    file_.reset();
  }
}

void JobEvents::Update(const master::Progress& p,
                       const std::vector<master::EvaluationRecord>& evaluations,
                       const std::vector<master::EpochEnd>& epoch_ends, double now) {
  for (; evaluations_done_ < evaluations.size(); ++evaluations_done_) {
    const master::EvaluationRecord& e = evaluations[evaluations_done_];
    Write(e.model_version, summary::LossAndMetrics("validation/", e.result.loss, e.result.metrics));
  }
  bool at_epoch_end = false;
  for (; epoch_ends_done_ < epoch_ends.size(); ++epoch_ends_done_) {
    const master::EpochEnd& e = epoch_ends[epoch_ends_done_];
    // Records trained only grow, so an end after `p` has trained more.
    if (e.progress.records_trained > p.records_trained) break;
    WriteTraining(e.progress, e.at_s);
    at_epoch_end = true;
  }
  const bool moved = p.model_version != last_.model_version ||
                     p.records_trained != last_.records_trained || p.workers != last_.workers;
  if (!at_epoch_end || moved) WriteTraining(p, now);
}

void JobEvents::WriteTraining(const master::Progress& p, double now) {
  const double elapsed = now - last_time_;
  summary::Scalars scalars;
  const int64_t samples = p.train_samples - last_.train_samples;
  if (samples > 0) {
    scalars.emplace_back("train/loss",
                         (p.train_loss_sum - last_.train_loss_sum) / static_cast<double>(samples));
  }
  const int64_t records = p.records_trained - last_.records_trained;
  if (elapsed > 0 && records > 0) {
    scalars.emplace_back("train/samples_per_second", static_cast<double>(records) / elapsed);
  }
  if (optimizer_ != nullptr) {
    optimizer_->set_iterations(p.model_version);
    scalars.emplace_back("train/learning_rate", optimizer_->CurrentLearningRate());
  }
  scalars.emplace_back("job/workers", static_cast<double>(p.workers));
  Write(p.model_version, scalars);
  last_ = p;
  last_time_ = now;
}

}  // namespace edl::roles::job
