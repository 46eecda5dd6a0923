// MasterCore's reports: its read-only views (state, progress, workers,
// evaluations, ledger), the status JSON, Prometheus text and the final report.
#include <cstdio>
#include <nlohmann/json.hpp>
#include <string>
#include <vector>

#include "roles/master/master_core.h"

namespace edl::roles::master {
namespace {

constexpr size_t kStatusEvaluations = 500;

// min(n, max) indices of [0, n): all of them, or `max` evenly spaced ones
// from 0 to n - 1 inclusive.
std::vector<size_t> EvenlySpaced(size_t n, size_t max) {
  std::vector<size_t> out;
  if (n <= max) {
    for (size_t i = 0; i < n; ++i) out.push_back(i);
    return out;
  }
  for (size_t k = 0; k < max; ++k) out.push_back(k * (n - 1) / (max - 1));
  return out;
}

const char* TypeName(TaskType type) {
  switch (type) {
    case TaskType::kTraining: return "training";
    case TaskType::kEvaluation: return "evaluation";
    case TaskType::kPrediction: return "prediction";
    case TaskType::kWait: return "wait";
    case TaskType::kDone: return "done";
  }
  return "?";
}

constexpr TaskType kTypes[] = {TaskType::kTraining, TaskType::kEvaluation, TaskType::kPrediction};

// A label value as the exposition format wants it.
std::string Escape(const std::string& s) {
  std::string out;
  for (char c : s) {
    if (c == '\\' || c == '"') {
      out += '\\';
      out += c;
    } else if (c == '\n') {
      out += "\\n";
    } else {
      out += c;
    }
  }
  return out;
}

std::string Number(double v) {
  char buf[32];
  std::snprintf(buf, sizeof buf, "%.10g", v);
  return buf;
}

void Family(std::string& out, const char* name, const char* type, const char* help) {
  out += std::string("# HELP ") + name + " " + help + "\n# TYPE " + name + " " + type + "\n";
}

}  // namespace

std::string MasterCore::StatusJson() const {
  std::lock_guard<std::mutex> lock(mu_);
  const int64_t now = clock_.NowNanos();
  nlohmann::json j;
  j["job"] = options_.job_name;
  j["master_restarts"] = restarts_;
  j["state"] = JobStateName(state_);
  j["reason"] = failure_;
  j["epoch"] = dispatcher_.current_epoch();
  j["num_epochs"] = options_.records.training > 0 ? options_.num_epochs : 0;
  j["model_version"] = model_version_;
  nlohmann::json workers = nlohmann::json::array();
  for (const auto& [id, w] : membership_.alive()) {
    nlohmann::json tasks = nlohmann::json::array();
    for (const protocol::Task& t : dispatcher_.LeasesOf(id)) {
      tasks.push_back({{"id", t.id},
                       {"type", TypeName(t.type)},
                       {"begin", t.begin},
                       {"end", t.end},
                       {"epoch", t.epoch}});
    }
    workers.push_back(
        {{"id", w.id},
         {"name", w.name},
         {"pid", w.pid},
         {"num_threads", w.num_threads},
         {"last_heartbeat_age_s", static_cast<double>(now - w.last_seen_nanos) * 1e-9},
         {"stopping", w.stopping},
         {"state", w.stopping ? "stopping" : "running"},
         {"registered_age_s", static_cast<double>(now - w.registered_nanos) * 1e-9},
         {"tasks_done", w.tasks_done},
         {"tasks", tasks}});
  }
  j["workers"] = workers;
  j["records_skipped"] = records_skipped_;
  j["workers_target"] = membership_.target();
  j["workers_registered"] = membership_.registrations();
  j["workers_lost"] = membership_.deaths();
  nlohmann::json tasks;
  for (TaskType type : kTypes) {
    const TaskCounts c = dispatcher_.Counts(type);
    tasks[TypeName(type)] = {{"todo", c.todo}, {"doing", c.doing}, {"done", c.done}};
  }
  j["tasks"] = tasks;
  j["incidents"] = incidents_.ToJson();
  j["checkpoint_incidents"] = incidents_.CheckpointsToJson();
  // At most kStatusEvaluations rounds, evenly spaced from the first to the
  // last, so a job with thousands of evaluations keeps a bounded answer.
  nlohmann::json evaluations = nlohmann::json::array();
  const std::vector<EvaluationRecord>& history = evaluation_.history();
  j["evaluations_total"] = history.size();
  for (size_t index : EvenlySpaced(history.size(), kStatusEvaluations)) {
    const EvaluationRecord& e = history[index];
    nlohmann::json metrics = nlohmann::json::object();
    for (const auto& [name, value] : e.result.metrics) metrics[name] = value;
    evaluations.push_back({{"model_version", e.model_version},
                           {"epoch", e.epoch},
                           {"final", e.final},
                           {"samples", e.result.samples},
                           {"loss", e.result.loss},
                           {"metrics", metrics}});
  }
  j["evaluations"] = evaluations;
  j["ledger"] = nlohmann::json::parse(ledger_.ToJson(state_ != JobState::kRunning));
  j["records_trained_total"] = ledger_.records_trained_total();
  if (ring_.version() > 0) {
    const protocol::RingView view = RingViewLocked();
    nlohmann::json members = nlohmann::json::array();
    for (const protocol::RingMember& m : view.members) {
      members.push_back({{"id", m.worker_id}, {"name", m.name}, {"address", m.address}});
    }
    j["ring"] = {{"version", view.version},
                 {"size", view.members.size()},
                 {"source_rank", view.source_rank},
                 {"members", members}};
  }
  return j.dump();
}

std::string MasterCore::PrometheusText() const {
  std::lock_guard<std::mutex> lock(mu_);
  std::string out;
  Family(out, "edl_tasks", "gauge", "Tasks of the job by type and state.");
  for (TaskType type : kTypes) {
    const TaskCounts c = dispatcher_.Counts(type);
    const std::pair<const char*, int64_t> states[] = {
        {"todo", c.todo}, {"doing", c.doing}, {"done", c.done}};
    for (const auto& [state, n] : states) {
      out += std::string("edl_tasks{state=\"") + state + "\",type=\"" + TypeName(type) + "\"} " +
             std::to_string(n) + "\n";
    }
  }
  Family(out, "edl_model_version", "gauge", "The newest model version workers reported.");
  out += "edl_model_version " + std::to_string(model_version_) + "\n";
  Family(out, "edl_master_restarts_total", "counter",
         "Times a new master took the job over from the state of a dead one.");
  out += "edl_master_restarts_total " + std::to_string(restarts_) + "\n";
  Family(out, "edl_epoch", "gauge", "The training epoch being handed out.");
  out += "edl_epoch " + std::to_string(dispatcher_.current_epoch()) + "\n";
  Family(out, "edl_workers_alive", "gauge", "Workers registered and alive.");
  out += "edl_workers_alive " + std::to_string(membership_.alive().size()) + "\n";
  Family(out, "edl_workers_lost_total", "counter",
         "Worker processes that died, exited or were replaced.");
  out += "edl_workers_lost_total " + std::to_string(membership_.deaths()) + "\n";
  Family(out, "edl_records_trained_total", "counter",
         "Training records trained, a record trained twice counting twice.");
  out += "edl_records_trained_total " + std::to_string(ledger_.records_trained_total()) + "\n";
  if (!evaluation_.history().empty()) {
    const EvaluationRecord& last = evaluation_.history().back();
    Family(out, "edl_evaluation_metric", "gauge", "The latest evaluation's loss and metrics.");
    out += "edl_evaluation_metric{name=\"loss\"} " + Number(last.result.loss) + "\n";
    for (const auto& [name, value] : last.result.metrics) {
      out += "edl_evaluation_metric{name=\"" + Escape(name) + "\"} " + Number(value) + "\n";
    }
    Family(out, "edl_evaluation_model_version", "gauge",
           "The model version of the latest evaluation.");
    out += "edl_evaluation_model_version " + std::to_string(last.model_version) + "\n";
  }
  Family(out, "edl_job_state", "gauge", "1 for the job's state.");
  for (JobState s : {JobState::kRunning, JobState::kSucceeded, JobState::kFailed}) {
    out += std::string("edl_job_state{state=\"") + JobStateName(s) + "\"} " +
           (s == state_ ? "1" : "0") + "\n";
  }
  return out;
}

std::string MasterCore::FinalReport() const {
  std::lock_guard<std::mutex> lock(mu_);
  std::string out = "job " + options_.job_name + " " + JobStateName(state_);
  if (state_ == JobState::kFailed) out += ": " + failure_;
  out += "\n";
  out += ledger_.ToString(state_ != JobState::kRunning);
  if (!evaluation_.history().empty()) {
    out += evaluation_.history().back().ToString() + "\n";
  }
  if (training_started_nanos_ >= 0 && training_ended_nanos_ > training_started_nanos_) {
    const double seconds =
        static_cast<double>(training_ended_nanos_ - training_started_nanos_) * 1e-9;
    const double records = static_cast<double>(options_.records.training) * options_.num_epochs;
    char line[160];
    std::snprintf(line, sizeof line, "training: %.0f records in %.1f s, %.0f records/s\n", records,
                  seconds, records / seconds);
    out += line;
  }
  out += incidents_.ToTable();
  if (restarts_ > 0) {
    out += "master replaced " + std::to_string(restarts_) + (restarts_ == 1 ? " time" : " times") +
           " (it recovered the job's state each time)\n";
  }
  if (records_skipped_ > 0) {
    out += "corrupt records skipped: " + std::to_string(records_skipped_) +
           " (--skip_corrupt_records; the workers' logs name the first ones)\n";
  }
  if (options_.records.prediction > 0) {
    out += "predictions: " + std::to_string(predictions_.records_received()) + "/" +
           std::to_string(options_.records.prediction) + " records\n";
  }
  return out;
}

JobState MasterCore::state() const {
  std::lock_guard<std::mutex> lock(mu_);
  return state_;
}

std::string MasterCore::failure_reason() const {
  std::lock_guard<std::mutex> lock(mu_);
  return failure_;
}

int64_t MasterCore::model_version() const {
  std::lock_guard<std::mutex> lock(mu_);
  return model_version_;
}

Progress MasterCore::progress() const {
  std::lock_guard<std::mutex> lock(mu_);
  return ProgressLocked();
}

std::vector<EpochEnd> MasterCore::epoch_ends() const {
  std::lock_guard<std::mutex> lock(mu_);
  return epoch_ends_;
}

Progress MasterCore::ProgressLocked() const {
  Progress p;
  p.epoch = dispatcher_.current_epoch();
  p.records_trained = ledger_.records_trained_total();
  p.model_version = model_version_;
  p.workers = membership_.alive().size();
  p.train_loss_sum = train_loss_sum_;
  p.train_samples = train_samples_;
  return p;
}

int MasterCore::target_workers() const {
  std::lock_guard<std::mutex> lock(mu_);
  return membership_.target();
}

std::vector<WorkerInfo> MasterCore::workers() const {
  std::lock_guard<std::mutex> lock(mu_);
  std::vector<WorkerInfo> out;
  for (const auto& [id, w] : membership_.alive()) out.push_back(w);
  return out;
}

std::vector<EvaluationRecord> MasterCore::evaluation_history() const {
  std::lock_guard<std::mutex> lock(mu_);
  return evaluation_.history();
}

std::vector<EpochLedger> MasterCore::ledger() const {
  std::lock_guard<std::mutex> lock(mu_);
  return ledger_.Summary(state_ != JobState::kRunning);
}

Status MasterCore::PredictionsComplete() const {
  std::lock_guard<std::mutex> lock(mu_);
  return predictions_.CheckComplete();
}

}  // namespace edl::roles::master
