#include "tests/roles/master/simulated_worker.h"

#include <gtest/gtest.h>

#include "nn/metrics/metrics_from_json.h"

namespace edl::roles::master::testing {

float Label(int64_t i) { return (i * 7919) % 10 < 4 ? 1.0f : 0.0f; }

float Probability(int64_t i) {
  const float noise = static_cast<float>((i * 104729) % 1000) / 1000.0f;
  return 0.3f * Label(i) + 0.7f * noise;  // overlapping classes: AUC < 1
}

double RecordLoss(int64_t i) { return 0.001 * static_cast<double>(i % 97); }

MetricsFactory BinaryMetrics() {
  return [] {
    return nn::metrics::MetricsFromJson(R"(["accuracy", "auc"])", "binary_crossentropy", "test");
  };
}

std::vector<std::unique_ptr<nn::metrics::Metric>> MetricsOver(int64_t begin, int64_t end) {
  auto metrics = BinaryMetrics()().value();
  std::vector<float> y_true, y_pred;
  for (int64_t i = begin; i < end; ++i) {
    y_true.push_back(Label(i));
    y_pred.push_back(Probability(i));
  }
  const int64_t n = end - begin;
  for (auto& m : metrics) {
    m->Update(tensor::Tensor::FromVector({n, 1}, y_true),
              tensor::Tensor::FromVector({n, 1}, y_pred));
  }
  return metrics;
}

SimulatedWorker::SimulatedWorker(MasterCore& core, std::string name)
    : core_(&core), name_(std::move(name)) {
  auto r = core_->RegisterWorker({name_, 1000});
  EXPECT_TRUE(r.ok()) << r.status().message();
  if (r.ok()) id_ = r->worker_id;
}

Task SimulatedWorker::Take() {
  auto t = core_->GetTask({id_, ++requests_});
  EXPECT_TRUE(t.ok()) << t.status().message();
  return t.ok() ? *t : Task{};
}

void SimulatedWorker::Complete(const Task& task, std::atomic<int64_t>& version) {
  protocol::ReportTaskRequest r;
  r.worker_id = id_;
  r.task_id = task.id;
  r.samples = task.end - task.begin;
  switch (task.type) {
    case TaskType::kTraining: r.model_version = ++version; break;
    case TaskType::kEvaluation:
      for (int64_t i = task.begin; i < task.end; ++i) r.loss_sum += RecordLoss(i);
      for (auto& m : MetricsOver(task.begin, task.end)) {
        r.metrics.push_back({m->name(), m->State()});
      }
      r.model_version = version;
      break;
    case TaskType::kPrediction: {
      std::vector<float> values;
      for (int64_t i = task.begin; i < task.end; ++i) values.push_back(i);
      r.predictions = tensor::Tensor::FromVector({task.end - task.begin, 1}, values);
      break;
    }
    default: ADD_FAILURE() << "completing a task of type " << static_cast<int>(task.type);
  }
  auto s = core_->ReportTask(r);
  EXPECT_TRUE(s.ok()) << s.status().message();
}

void SimulatedWorker::Fail(const Task& task, const std::string& error) {
  protocol::ReportTaskRequest r;
  r.worker_id = id_;
  r.task_id = task.id;
  r.ok = false;
  r.error = error;
  auto s = core_->ReportTask(r);
  EXPECT_TRUE(s.ok()) << s.status().message();
}

bool SimulatedWorker::Heartbeat() {
  auto r = core_->Heartbeat({id_});
  EXPECT_TRUE(r.ok()) << r.status().message();
  return r.ok() && r->stop;
}

TaskType SimulatedWorker::Step(std::atomic<int64_t>& version) {
  Task t = Take();
  if (t.type != TaskType::kWait && t.type != TaskType::kDone) Complete(t, version);
  return t.type;
}

}  // namespace edl::roles::master::testing
