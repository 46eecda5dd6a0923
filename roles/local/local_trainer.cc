#include "roles/local/local_trainer.h"

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <optional>
#include <string>

#include "base/logging.h"
#include "data/batcher.h"
#include "nn/autograd.h"
#include "nn/functional.h"
#include "roles/local/model_export.h"
#include "roles/local/model_source.h"
#include "roles/progress.h"
#include "roles/summary/event_file.h"
#include "roles/thread_tuner.h"
#include "tensor/host_readback.h"
#include "tensor/ops.h"

namespace edl::roles {

using summary::EventFileWriter;
using summary::LossAndMetrics;
using summary::Scalars;
using summary::WallSeconds;

namespace {

// A training step whose work is queued and whose results are not read yet.
struct QueuedStep {
  tensor::HostReadback loss;
  tensor::HostReadback predictions;  // empty without metrics
  tensor::Tensor labels;
  int64_t size = 0;
  int64_t batch = 0;        // index in the epoch
  int64_t global_step = 0;  // steps of this run, this one included
  int64_t version = 0;      // the model version after this step
};

Result<std::unique_ptr<data::Source>> OpenFor(const std::string& flag, const std::string& path,
                                              const CompiledModel& cm, const ModelOptions& model,
                                              bool stream) {
  data::OpenOptions reading;
  reading.stream = stream;
  reading.index_dir = model.data_index_dir;
  reading.skip_corrupt_records = model.skip_corrupt_records;
  EDL_ASSIGN_OR_RETURN(auto source, OpenSourceForModel(flag, path, cm, true, reading));
  if (source->num_records() == 0) {
    return InvalidArgument(flag + " " + path + ": holds no records");
  }
  return source;
}

Status SaveCheckpoint(const TrainOptions& o, const CompiledModel& cm) {
  Status s = WriteCheckpoint(o.checkpoint_dir, cm.MakeCheckpoint(), o.keep_checkpoint_max);
  if (!s.ok()) return s.WithPrefix("--checkpoint_dir");
  EDL_LOG(INFO) << "checkpoint: wrote " << o.checkpoint_dir << "/version-"
                << cm.optimizer->iterations();
  return Status::Ok();
}

}  // namespace

std::string FormatSummary(const TrainingSummary& s) {
  char buf[160];
  std::snprintf(buf, sizeof buf, "loss %.4f", s.train_loss);
  std::string line = buf;
  for (const auto& [name, value] : s.train_metrics) {
    std::snprintf(buf, sizeof buf, " %s %.4f", name.c_str(), value);
    line += buf;
  }
  if (s.has_validation) line += " " + s.validation.ToString("val_");
  std::snprintf(buf, sizeof buf, " (%lld steps, %lld samples in %.1f s, %.0f samples/s)",
                static_cast<long long>(s.steps), static_cast<long long>(s.samples), s.seconds,
                s.seconds > 0 ? static_cast<double>(s.samples) / s.seconds : 0.0);
  return line + buf;
}

Result<TrainingSummary> RunLocalTraining(const TrainOptions& o, std::FILE* progress_out,
                                         bool terminal, const Clock& clock) {
  if (o.num_epochs <= 0) return InvalidArgument("--num_epochs must be positive");
  if (o.minibatch_size <= 0) return InvalidArgument("--minibatch_size must be positive");
  if (o.training_data.empty()) return InvalidArgument("--training_data is required");
  if (o.checkpoint_dir.empty() && (o.checkpoint_steps > 0 || o.keep_checkpoint_max > 0)) {
    return InvalidArgument(
        std::string(o.checkpoint_steps > 0 ? "--checkpoint_steps" : "--keep_checkpoint_max") +
        " needs --checkpoint_dir");
  }
  if (o.evaluation_steps > 0 && o.validation_data.empty()) {
    return InvalidArgument("--evaluation_steps needs --validation_data");
  }
  tensor::SetNumThreads(o.model.num_threads);  // 0: UsableCpus()

  ModelOptions mo = o.model;
  mo.class_data = o.training_data;
  EDL_ASSIGN_OR_RETURN(CompiledModel cm, CompileModel(mo));
  // Training data is loaded whole (shuffled across the whole data set each
  // epoch); validation data is streamed, a batch at a time.
  EDL_ASSIGN_OR_RETURN(auto train,
                       OpenFor("--training_data", o.training_data, cm, o.model, /*stream=*/false));
  std::unique_ptr<data::Source> validation;
  if (!o.validation_data.empty()) {
    EDL_ASSIGN_OR_RETURN(validation, OpenFor("--validation_data", o.validation_data, cm, o.model,
                                             /*stream=*/true));
  }

  // TensorBoard scalars: the training loss, metrics, samples/s and learning
  // rate at most once a second and at every epoch's (and the run's) end,
  // each evaluation. Opened once the model and data are known good.
  std::unique_ptr<EventFileWriter> events;
  if (!o.tensorboard_log_dir.empty()) {
    EDL_ASSIGN_OR_RETURN(events, EventFileWriter::Open("--tensorboard_log_dir",
                                                       o.tensorboard_log_dir, WallSeconds()));
    EDL_LOG(INFO) << "TensorBoard events: " << events->path();
  }

  const int64_t n = train->num_records();
  data::BatchOptions bo;
  bo.batch_size = o.minibatch_size;
  bo.shuffle = o.shuffle;
  bo.seed = o.model.seed;
  data::Batcher batcher(*train, 0, n, bo);
  const int64_t steps_per_epoch = batcher.num_batches();
  // A run resumed from a checkpoint continues where it stopped: the epochs
  // still to do, from the batch after the checkpoint's last one (batch
  // orders are seeded per epoch, so the order is the same as before), and
  // --max_step counts the model's steps, not this run's.
  const int64_t start_version = cm.optimizer->iterations();
  int64_t skip = start_version - cm.epoch * steps_per_epoch;
  if (skip < 0 || skip >= steps_per_epoch) {
    if (start_version > 0) {
      EDL_LOG(WARNING) << "checkpoint version " << start_version << " and epoch " << cm.epoch
                       << " do not match " << steps_per_epoch
                       << " steps per epoch (another --minibatch_size?); resuming at the "
                          "start of epoch "
                       << cm.epoch + 1;
    }
    skip = 0;
  }
  int64_t total_steps = steps_per_epoch * std::max<int64_t>(0, o.num_epochs - cm.epoch) - skip;
  if (o.max_steps > 0) {
    total_steps = std::min(total_steps, std::max<int64_t>(0, o.max_steps - start_version));
  }
  if (start_version > 0) {
    EDL_LOG(INFO) << "resuming at model version " << start_version << " (epoch " << cm.epoch + 1
                  << ", batch " << skip + 1 << "); " << total_steps << " steps to go";
  }

  std::vector<nn::Parameter*> params = cm.model->parameters();
  int64_t num_weights = 0;
  for (auto* p : params) num_weights += p->value.numel();
  EDL_LOG(INFO) << "model " << cm.spec.origin << ": " << params.size() << " weight tensors, "
                << num_weights << " parameters";
  EDL_LOG(DEBUG) << "\n" << cm.model->Summary();
  EDL_LOG(INFO) << "training on " << o.training_data << ": " << n << " records, " << o.num_epochs
                << " epoch(s) of " << steps_per_epoch << " steps of " << o.minibatch_size
                << (validation ? ", validating on " + o.validation_data : "") << ", "
                << tensor::NumThreads() << " thread(s)";

  std::mt19937_64 rng(o.model.seed ^ 0x9e3779b97f4a7c15ULL);
  ProgressReporter progress(progress_out, terminal && o.progress_bar, clock, o.log_interval_s);
  TrainingSummary summary;
  const double start = clock.NowSeconds();
  // Fewer CPU threads while the cores are shared, if that is faster.
  AdaptiveThreads threads(o.model.adapt_threads && cm.device == tensor::Device::kCPU, clock);
  int64_t global_step = 0;  // steps taken by this run
  int64_t evaluated_version = -1;
  int64_t checkpointed_version = -1;

  auto write_events = [&](const Scalars& scalars) {
    if (!events) return;
    Status s = events->Write(cm.optimizer->iterations(), WallSeconds(), scalars);
    if (!s.ok()) {
      EDL_LOG(WARNING) << s.message() << "; writing no more TensorBoard events";
      events.reset();
    }
  };
  double events_time = clock.NowSeconds();
  int64_t events_samples = 0;
  // The rate after the first steps (start-up, cuDNN's algorithm choice and
  // lazily loaded GPU kernels fall in them), logged at the end.
  constexpr int64_t warmup_steps = 10;
  double warmup_end = 0;
  int64_t warmup_samples = 0;
  // EDL_SYNC_STEPS=1 reads each step's results before queuing the next (the
  // loop's behaviour before steps overlapped; for measurements).
  const char* sync_env = std::getenv("EDL_SYNC_STEPS");
  const bool sync_every_step = sync_env != nullptr && std::string(sync_env) == "1";
  auto evaluate = [&]() -> Status {
    const int64_t version = cm.optimizer->iterations();
    if (!validation || version == evaluated_version) return Status::Ok();
    EDL_ASSIGN_OR_RETURN(EvaluationResult r, Evaluate(cm, *validation, 256));
    summary.has_validation = true;
    summary.validation = r;
    evaluated_version = version;
    EDL_LOG(INFO) << "evaluation at step " << version << ": " << r.ToString("val_");
    write_events(LossAndMetrics("validation/", r.loss, r.metrics));
    return Status::Ok();
  };
  auto checkpoint = [&]() -> Status {
    if (o.checkpoint_dir.empty() || cm.optimizer->iterations() == checkpointed_version) {
      return Status::Ok();
    }
    EDL_RETURN_IF_ERROR(SaveCheckpoint(o, cm));
    checkpointed_version = cm.optimizer->iterations();
    return Status::Ok();
  };

  for (int epoch = static_cast<int>(cm.epoch); epoch < o.num_epochs && global_step < total_steps;
       ++epoch) {
    batcher.StartEpoch(epoch);
    EDL_ASSIGN_OR_RETURN(auto metrics, cm.MakeMetrics());
    const int64_t first_batch = epoch == cm.epoch ? skip : 0;
    Progress p;
    p.epoch = epoch + 1;
    p.num_epochs = o.num_epochs;
    p.step = first_batch;
    // With --max_step the last epoch is cut short; the bar counts to its end.
    p.steps_per_epoch = std::min(steps_per_epoch, first_batch + total_steps - global_step);
    p.total_steps = total_steps;
    double loss_sum = 0;
    int64_t epoch_samples = 0;
    progress.StartEpoch();
    // A step's loss and outputs are read back (a wait for the device) only
    // after the next step is queued, so a GPU always has a step to run while
    // the host prepares the next one; on the CPU the values are ready at
    // once. finish() accounts one queued step.
    std::optional<QueuedStep> queued;
    auto finish = [&](QueuedStep& q) -> Status {
      const float loss_value = q.loss.Get().item();
      if (!std::isfinite(loss_value)) {
        return Internal("training diverged: loss is " + std::to_string(loss_value) + " at step " +
                        std::to_string(q.version - 1) + " (try a smaller --learning_rate)");
      }
      if (q.predictions.defined()) {
        for (auto& m : metrics) m->Update(q.labels, q.predictions.Get());
      }
      loss_sum += static_cast<double>(loss_value) * static_cast<double>(q.size);
      epoch_samples += q.size;
      p.samples += q.size;
      p.step = q.batch + 1;
      p.global_step = q.global_step;
      p.loss = loss_sum / static_cast<double>(epoch_samples);
      if ((terminal && o.progress_bar) || (q.global_step % 16) == 0) {
        p.metrics.clear();
        for (auto& m : metrics) p.metrics.emplace_back(m->name(), m->Result());
      }
      progress.Update(p);
      summary.samples += q.size;
      events_samples += q.size;
      if (q.global_step == warmup_steps) {
        warmup_end = clock.NowSeconds();
        warmup_samples = summary.samples;
      }
      if (events && (clock.NowSeconds() - events_time >= 1.0 || q.batch + 1 == steps_per_epoch ||
                     q.global_step == total_steps)) {
        const double now = clock.NowSeconds();
        std::vector<std::pair<std::string, double>> train_metrics;
        for (auto& m : metrics) train_metrics.emplace_back(m->name(), m->Result());
        Scalars scalars = LossAndMetrics("train/", p.loss, train_metrics);
        if (now > events_time) {
          scalars.emplace_back("train/samples_per_second",
                               static_cast<double>(events_samples) / (now - events_time));
        }
        scalars.emplace_back("train/learning_rate", cm.optimizer->CurrentLearningRate());
        write_events(scalars);
        events_time = now;
        events_samples = 0;
      }
      return Status::Ok();
    };
    auto finish_queued = [&]() -> Status {
      if (!queued) return Status::Ok();
      Status s = finish(*queued);
      queued.reset();
      return s;
    };
    for (int64_t b = first_batch; b < steps_per_epoch && global_step < total_steps; ++b) {
      EDL_ASSIGN_OR_RETURN(data::Examples batch, batcher.Batch(b));
      std::vector<nn::Var> out = cm.model->Forward(ModelInputs(batch, cm), true,
                                                   AugmentationKeys(batch, o.model.seed, epoch));
      EDL_RETURN_IF_ERROR(CheckBatch(batch.labels, out[0].value(), cm, metrics,
                                     "--training_data " + o.training_data));
      nn::Var loss = cm.loss->Compute(out[0], batch.labels);
      // A model without weight penalties gives a constant zero: leave it out
      // of the graph.
      nn::Var reg = cm.model->RegularizationLoss();
      nn::Backward(reg.requires_grad() ? nn::fn::Add(loss, reg) : loss);
      cm.optimizer->Apply(params);
      for (auto* prm : params) prm->ZeroGrad();
      QueuedStep step;
      step.loss = tensor::HostReadback(loss.value());
      if (!metrics.empty()) {
        step.predictions = tensor::HostReadback(cm.ForMetrics(out[0].value()));
      }
      step.labels = batch.labels;
      step.size = batch.size();
      step.batch = b;
      step.global_step = ++global_step;
      step.version = cm.optimizer->iterations();
      // The previous step is read now that this one is queued.
      EDL_RETURN_IF_ERROR(finish_queued());
      queued = std::move(step);
      if (sync_every_step) EDL_RETURN_IF_ERROR(finish_queued());
      threads.Step();

      const int64_t version = cm.optimizer->iterations();
      const bool evaluate_now = o.evaluation_steps > 0 && version % o.evaluation_steps == 0;
      const bool checkpoint_now = o.checkpoint_steps > 0 && version % o.checkpoint_steps == 0;
      if (evaluate_now || checkpoint_now || b + 1 == steps_per_epoch ||
          global_step == total_steps) {
        EDL_RETURN_IF_ERROR(finish_queued());
      }
      if (evaluate_now) EDL_RETURN_IF_ERROR(evaluate());
      if (checkpoint_now) EDL_RETURN_IF_ERROR(checkpoint());
      if (b + 1 == steps_per_epoch) cm.epoch = epoch + 1;  // the epoch is complete
    }
    EDL_RETURN_IF_ERROR(finish_queued());
    p.metrics.clear();
    for (auto& m : metrics) p.metrics.emplace_back(m->name(), m->Result());
    progress.EndEpoch(p);
    summary.train_loss = p.loss;
    summary.train_metrics = p.metrics;
    if (o.evaluation_steps == 0) EDL_RETURN_IF_ERROR(evaluate());
  }
  summary.steps = global_step;
  summary.seconds = clock.NowSeconds() - start;
  if (global_step > warmup_steps && summary.seconds + start > warmup_end) {
    const double after = summary.seconds + start - warmup_end;
    char line[160];
    std::snprintf(line, sizeof line,
                  "training: %.0f samples/s after the first %lld steps (which took %.2f s)",
                  static_cast<double>(summary.samples - warmup_samples) / after,
                  static_cast<long long>(warmup_steps), warmup_end - start);
    EDL_LOG(INFO) << line;
  }
  if (const std::string t = threads.Summary(); !t.empty()) {
    EDL_LOG(INFO) << "CPU cores were shared: " << t;
  }
  // The summary's validation figures are those of the final model.
  EDL_RETURN_IF_ERROR(evaluate());
  EDL_RETURN_IF_ERROR(checkpoint());
  if (!o.output.empty()) {
    EDL_RETURN_IF_ERROR(ExportModel(cm, o.output));
    EDL_LOG(INFO) << "exported the trained model to " << o.output
                  << " (TF.js model.json + weights.bin, edl checkpoint)";
  }
  return summary;
}

}  // namespace edl::roles
