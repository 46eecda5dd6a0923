#include "roles/master/evaluation_aggregator.h"

#include <utility>

#include "base/check.h"

namespace edl::roles::master {

std::string EvaluationRecord::ToString() const {
  return "evaluation at version " + std::to_string(model_version) + ": " + result.ToString();
}

EvaluationAggregator::EvaluationAggregator(int64_t evaluation_steps, bool has_validation_data,
                                           MetricsFactory make_metrics)
    : steps_(evaluation_steps),
      enabled_(has_validation_data),
      make_metrics_(std::move(make_metrics)),
      next_due_(evaluation_steps > 0 ? evaluation_steps : 0) {}

void EvaluationAggregator::OnModelVersion(int64_t version, int epoch) {
  if (!enabled_ || steps_ <= 0 || training_ended_ || version < next_due_) return;
  next_due_ = (version / steps_ + 1) * steps_;
  // Skipped when a round is in flight or due: evaluation keeps up with
  // training rather than queueing stale versions.
  if (!busy()) {
    pending_ = version;
    pending_epoch_ = epoch;
  }
}

void EvaluationAggregator::OnEpochEnd(int epoch, int64_t version) {
  if (!enabled_ || steps_ != 0 || training_ended_) return;
  pending_ = version;
  pending_epoch_ = epoch;
}

void EvaluationAggregator::OnTrainingEnd(int64_t version, int epoch) {
  if (!enabled_ || training_ended_) return;
  training_ended_ = true;
  const bool covered = (round_ && round_->version == version && !pending_) ||
                       (!round_ && last_started_ == version && !pending_);
  if (covered) {
    if (round_)
      round_->final = true;
    else if (!history_.empty())
      history_.back().final = true;
    return;
  }
  pending_ = version;
  pending_epoch_ = epoch;
  pending_final_ = true;
}

std::optional<EvaluationAggregator::DueRound> EvaluationAggregator::TakeRoundToStart() {
  if (round_ || !pending_) return std::nullopt;
  DueRound due{*pending_, pending_epoch_};
  pending_.reset();
  return due;
}

Status EvaluationAggregator::StartRound(int64_t version, int epoch, int64_t num_tasks) {
  EDL_CHECK_GT(num_tasks, 0);
  EDL_CHECK(!round_) << "a round is in flight";
  Round r;
  r.version = version;
  r.epoch = epoch;
  r.tasks = num_tasks;
  r.final = pending_final_ && !pending_;
  if (make_metrics_) {
    auto metrics = make_metrics_();
    if (!metrics.ok()) {
      return metrics.status().WithPrefix("evaluation at version " + std::to_string(version));
    }
    r.metrics = std::move(metrics).value();
  }
  if (r.final) pending_final_ = false;
  last_started_ = version;
  round_ = std::move(r);
  return Status::Ok();
}

Result<std::optional<EvaluationRecord>> EvaluationAggregator::AddReport(
    const protocol::ReportTaskRequest& report) {
  EDL_CHECK(round_) << "an evaluation report with no round in flight";
  Round& r = *round_;
  // Check every state before merging any, so an error changes nothing.
  std::vector<nn::metrics::Metric*> targets;
  // Without a factory the master reports only the loss.
  const auto& states = make_metrics_ ? report.metrics : std::vector<protocol::MetricState>{};
  for (const protocol::MetricState& m : states) {
    nn::metrics::Metric* target = nullptr;
    for (auto& metric : r.metrics) {
      if (metric->name() == m.name) target = metric.get();
    }
    if (target == nullptr) {
      std::string known;
      for (auto& metric : r.metrics) {
        known += (known.empty() ? "" : ", ") + metric->name();
      }
      return InvalidArgument(
          "evaluation report of task " + std::to_string(report.task_id) + " has metric \"" +
          m.name + "\" that the master does not know (known: " + (known.empty() ? "none" : known) +
          ")");
    }
    const size_t expected = target->State().size();
    if (m.state.size() != expected) {
      return InvalidArgument("evaluation report of task " + std::to_string(report.task_id) +
                             ": metric \"" + m.name + "\" has a state of " +
                             std::to_string(m.state.size()) + " numbers, expected " +
                             std::to_string(expected));
    }
    targets.push_back(target);
  }
  for (size_t i = 0; i < targets.size(); ++i) {
    Status s = targets[i]->Merge(states[i].state);
    EDL_CHECK(s.ok()) << s.message();
  }
  r.loss_sum += report.loss_sum;
  r.samples += report.samples;
  if (++r.tasks_done < r.tasks) return std::optional<EvaluationRecord>();

  EvaluationRecord rec;
  rec.model_version = r.version;
  rec.epoch = r.epoch;
  rec.final = r.final;
  rec.result.samples = r.samples;
  rec.result.loss = r.samples > 0 ? r.loss_sum / static_cast<double>(r.samples) : 0;
  for (auto& metric : r.metrics) {
    rec.result.metrics.emplace_back(metric->name(), metric->Result());
  }
  history_.push_back(rec);
  round_.reset();
  return std::optional<EvaluationRecord>(std::move(rec));
}

}  // namespace edl::roles::master
