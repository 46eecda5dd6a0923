// The durable state of the master's parts (docs/distributed.md, 'A master
// that survives its own death'): what each writes to a snapshot of
// MasterCore (roles/master/master_core_journal.cc) and reads back, in the
// wire format of roles/protocol/wire.h. A Load replaces the part's state;
// anything malformed is recorded in the Reader (which names the field) and
// the caller refuses the snapshot.
#include <algorithm>

#include "roles/master/data_ledger.h"
#include "roles/master/evaluation_aggregator.h"
#include "roles/master/membership.h"
#include "roles/master/prediction_collector.h"
#include "roles/master/rendezvous.h"
#include "roles/master/task_dispatcher.h"
#include "roles/protocol/wire.h"

namespace edl::roles::master {

using protocol::Reader;
using protocol::Writer;

// ---- Membership ------------------------------------------------------------

void Membership::Save(Writer& w) const {
  w.I64(target_);
  w.I64(next_id_);
  w.I64(deaths_);
  w.Varint(alive_.size());
  for (const auto& [id, info] : alive_) {
    w.I64(id);
    w.String(info.name);
    w.I64(info.pid);
    w.I32(info.num_threads);
    w.Bool(info.stopping);
    w.I64(info.last_get_request);
    w.I64(info.last_get_task);
    w.I64(info.last_report_task);
  }
  w.Varint(gone_last_report_.size());
  for (const auto& [id, task] : gone_last_report_) {
    w.I64(id);
    w.I64(task);
  }
}

void Membership::Load(Reader& r, int64_t now_nanos) {
  auto scope = r.Field("membership");
  target_ = static_cast<int>(r.I64("target"));
  next_id_ = r.I64("next_id");
  deaths_ = r.I64("deaths");
  alive_.clear();
  const size_t n = r.Count("workers", 8);
  for (size_t i = 0; i < n && r.ok(); ++i) {
    auto item = r.Item("workers", i);
    WorkerInfo info;
    info.id = r.I64("id");
    info.name = r.String("name");
    info.pid = r.I64("pid");
    info.num_threads = r.I32("num_threads");
    info.stopping = r.Bool("stopping");
    info.last_get_request = r.I64("last_get_request");
    info.last_get_task = r.I64("last_get_task");
    info.last_report_task = r.I64("last_report_task");
    info.registered_nanos = now_nanos;
    info.last_seen_nanos = now_nanos;
    if (r.ok() && (info.id <= 0 || info.id >= next_id_)) {
      r.Fail("worker id " + std::to_string(info.id) + " was never issued");
    }
    alive_.emplace(info.id, info);
  }
  gone_last_report_.clear();
  const size_t gone = r.Count("gone", 16);
  for (size_t i = 0; i < gone && r.ok(); ++i) {
    const int64_t id = r.I64("id");
    gone_last_report_[id] = r.I64("last_report_task");
  }
}

// ---- TaskDispatcher ----------------------------------------------------------

void TaskDispatcher::Save(Writer& w) const {
  w.I64(epoch_);
  w.I64(rounds_);
  w.String(failure_);
  for (int64_t d : done_) w.I64(d);
  w.Varint(live_.size());
  for (const auto& [id, e] : live_) {
    w.I64(id);
    w.I64(e.task.model_version);
    w.I32(e.task.epoch);
    w.I32(e.failures);
    w.I32(e.losses);
    w.Bool(e.redo);
  }
  for (const auto* q : {&training_queue_, &evaluation_queue_, &prediction_queue_}) {
    w.Varint(q->size());
    for (int64_t id : *q) w.I64(id);
  }
  w.Varint(leases_.size());
  for (const auto& [worker, ids] : leases_) {
    w.I64(worker);
    w.Varint(ids.size());
    for (int64_t id : ids) w.I64(id);
  }
}

void TaskDispatcher::Load(Reader& r, int64_t now_nanos) {
  auto scope = r.Field("dispatcher");
  epoch_ = static_cast<int>(r.I64("epoch"));
  rounds_ = r.I64("rounds");
  failure_ = r.String("failure");
  for (int64_t& d : done_) d = r.I64("done");
  if (r.ok() && (epoch_ < 0 || epoch_ > options_.num_epochs || rounds_ < 0)) {
    r.Fail("epoch " + std::to_string(epoch_) + " or round " + std::to_string(rounds_) +
           " out of range for this job");
    return;
  }
  live_.clear();
  deadlines_.clear();
  leases_.clear();
  epoch_left_.clear();
  redo_left_ = 0;
  for (int i = 0; i < 4; ++i) doing_[i] = queued_[i] = 0;
  const size_t n = r.Count("live", 29);
  for (size_t i = 0; i < n && r.ok(); ++i) {
    auto item = r.Item("live", i);
    const int64_t id = r.I64("id");
    const int64_t version = r.I64("model_version");
    const int32_t task_epoch = r.I32("epoch");
    Entry e;
    e.failures = r.I32("failures");
    e.losses = r.I32("losses");
    e.redo = r.Bool("redo");
    std::optional<Task> task = Decode(id);
    if (!r.ok()) break;
    if (!task) {
      r.Fail("task id " + std::to_string(id) + " names no task of this job");
      break;
    }
    e.task = *task;
    e.task.model_version = version;
    e.task.epoch = task_epoch;  // an evaluation task's: the epoch it was made in
    if (e.redo && e.task.type != TaskType::kTraining) {
      r.Fail("task id " + std::to_string(id) + " is a redo but not a training task");
      break;
    }
    if (e.redo) {
      ++redo_left_;
    } else if (e.task.type == TaskType::kTraining) {
      ++epoch_left_[e.task.epoch];
    }
    live_.emplace(id, e);
  }
  auto queue_of = [&](int64_t id) -> Entry* {
    auto it = live_.find(id);
    if (it == live_.end()) {
      r.Fail("task id " + std::to_string(id) + " is queued or leased but not live");
      return nullptr;
    }
    return &it->second;
  };
  for (auto* q : {&training_queue_, &evaluation_queue_, &prediction_queue_}) {
    q->clear();
    const size_t m = r.Count("queue", 8);
    for (size_t i = 0; i < m && r.ok(); ++i) {
      const int64_t id = r.I64("id");
      if (Entry* e = r.ok() ? queue_of(id) : nullptr) {
        q->push_back(id);
        ++queued_[static_cast<int>(e->task.type) & 3];
      }
    }
  }
  const size_t workers = r.Count("leases", 16);
  for (size_t i = 0; i < workers && r.ok(); ++i) {
    const int64_t worker = r.I64("worker");
    const size_t m = r.Count("tasks", 8);
    for (size_t k = 0; k < m && r.ok(); ++k) {
      const int64_t id = r.I64("id");
      Entry* e = r.ok() ? queue_of(id) : nullptr;
      if (e == nullptr) break;
      if (e->worker != 0 || worker <= 0) {
        r.Fail("task id " + std::to_string(id) + " is leased twice");
        break;
      }
      e->worker = worker;
      e->deadline = now_nanos + options_.lease_timeout_nanos;
      deadlines_.emplace(e->deadline, id);
      leases_[worker].push_back(id);
      ++doing_[static_cast<int>(e->task.type) & 3];
    }
  }
  int64_t placed = 0;
  for (int i = 0; i < 4; ++i) placed += queued_[i] + doing_[i];
  if (r.ok() && placed != static_cast<int64_t>(live_.size())) {
    r.Fail(std::to_string(live_.size()) + " live tasks but " + std::to_string(placed) +
           " queued or leased");
  }
}

// ---- DataLedger ----------------------------------------------------------------

void DataLedger::Save(Writer& w) const {
  w.Varint(times_.size());
  for (const auto& times : times_) {
    w.Varint(times.size());
    w.Bytes(times.data(), times.size() * sizeof(uint16_t));
  }
  for (const EpochLedger& s : sums_) w.I64(s.redone);
}

void DataLedger::Load(Reader& r) {
  auto scope = r.Field("ledger");
  const size_t epochs = r.Count("epochs", 1);
  if (r.ok() && epochs != times_.size()) {
    r.Fail(std::to_string(epochs) + " epochs, this job has " + std::to_string(times_.size()));
    return;
  }
  const int64_t tasks = cuts_.num_tasks();
  total_ = 0;
  for (size_t e = 0; e < epochs && r.ok(); ++e) {
    auto item = r.Item("epochs", e);
    auto& times = times_[e];
    EpochLedger& s = sums_[e];
    s.trained = s.trained_more_than_once = s.record_trainings = 0;
    s.pending = s.records;
    const size_t n = r.Count("tasks", sizeof(uint16_t));
    if (!r.ok()) break;
    if (n != 0 && static_cast<int64_t>(n) != tasks) {
      r.Fail(std::to_string(n) + " tasks, this job's epochs have " + std::to_string(tasks));
      break;
    }
    times.assign(n, 0);
    for (size_t i = 0; i < n; ++i) {
      const uint16_t lo = r.U8("times");
      const uint16_t hi = r.U8("times");
      const uint16_t t = static_cast<uint16_t>(lo | (hi << 8));
      times[i] = t;
      if (t == 0) continue;
      const auto [begin, end] = cuts_.Range(static_cast<int64_t>(i));
      s.trained += end - begin;
      s.pending -= end - begin;
      if (t > 1) s.trained_more_than_once += end - begin;
      s.record_trainings += (end - begin) * t;
    }
    total_ += s.record_trainings;
  }
  for (size_t e = 0; e < epochs && r.ok(); ++e) {
    sums_[e].redone = r.I64("redone");
    if (r.ok() && sums_[e].redone < 0) r.Fail("negative redone records");
  }
}

// ---- EvaluationAggregator ------------------------------------------------------

namespace {

void SaveOptional(Writer& w, const std::optional<int64_t>& v) {
  w.Bool(v.has_value());
  w.I64(v.value_or(0));
}
std::optional<int64_t> LoadOptional(Reader& r, const char* field) {
  const bool has = r.Bool(field);
  const int64_t v = r.I64(field);
  return has ? std::optional<int64_t>(v) : std::nullopt;
}

}  // namespace

void EvaluationAggregator::Save(Writer& w) const {
  w.I64(next_due_);
  w.Bool(training_ended_);
  SaveOptional(w, pending_);
  w.I32(pending_epoch_);
  w.Bool(pending_final_);
  SaveOptional(w, last_started_);
  w.Bool(round_.has_value());
  if (round_) {
    w.I64(round_->version);
    w.I32(round_->epoch);
    w.Bool(round_->final);
    w.I64(round_->tasks);
    w.I64(round_->tasks_done);
    w.F64(round_->loss_sum);
    w.I64(round_->samples);
    w.Varint(round_->metrics.size());
    for (const auto& m : round_->metrics) w.Doubles(m->State());
  }
  w.Varint(history_.size());
  for (const EvaluationRecord& h : history_) {
    w.I64(h.model_version);
    w.I32(h.epoch);
    w.Bool(h.final);
    w.I64(h.result.samples);
    w.F64(h.result.loss);
    w.Varint(h.result.metrics.size());
    for (const auto& [name, value] : h.result.metrics) {
      w.String(name);
      w.F64(value);
    }
  }
}

void EvaluationAggregator::Load(Reader& r) {
  auto scope = r.Field("evaluation");
  next_due_ = r.I64("next_due");
  training_ended_ = r.Bool("training_ended");
  pending_ = LoadOptional(r, "pending");
  pending_epoch_ = r.I32("pending_epoch");
  pending_final_ = r.Bool("pending_final");
  last_started_ = LoadOptional(r, "last_started");
  round_.reset();
  if (r.Bool("round")) {
    Round round;
    round.version = r.I64("version");
    round.epoch = r.I32("epoch");
    round.final = r.Bool("final");
    round.tasks = r.I64("tasks");
    round.tasks_done = r.I64("tasks_done");
    round.loss_sum = r.F64("loss_sum");
    round.samples = r.I64("samples");
    const size_t n = r.Count("metrics", 1);
    if (r.ok() && make_metrics_) {
      auto metrics = make_metrics_();
      if (!metrics.ok()) {
        r.Fail("cannot make the metrics: " + metrics.status().message());
      } else {
        round.metrics = std::move(*metrics);
      }
    }
    if (r.ok() && n != round.metrics.size()) {
      r.Fail(std::to_string(n) + " metrics, this model has " +
             std::to_string(round.metrics.size()));
    }
    for (size_t i = 0; i < n && r.ok(); ++i) {
      std::vector<double> state = r.Doubles("state");
      if (!r.ok()) break;
      Status s = round.metrics[i]->Merge(state);
      if (!s.ok()) r.Fail(s.message());
    }
    round_ = std::move(round);
  }
  history_.clear();
  const size_t n = r.Count("history", 29);
  for (size_t i = 0; i < n && r.ok(); ++i) {
    auto item = r.Item("history", i);
    EvaluationRecord h;
    h.model_version = r.I64("model_version");
    h.epoch = r.I32("epoch");
    h.final = r.Bool("final");
    h.result.samples = r.I64("samples");
    h.result.loss = r.F64("loss");
    const size_t m = r.Count("metrics", 9);
    for (size_t k = 0; k < m && r.ok(); ++k) {
      std::string name = r.String("name");
      h.result.metrics.emplace_back(std::move(name), r.F64("value"));
    }
    history_.push_back(std::move(h));
  }
}

// ---- PredictionCollector ---------------------------------------------------------

void PredictionCollector::MarkReceived(int64_t begin, int64_t end, const tensor::Tensor& columns) {
  if (begins_.insert(begin).second) received_ += end - begin;
  if (!have_first_ && columns.defined() && columns.rank() >= 1) {
    row_shape_.assign(columns.shape().begin() + 1, columns.shape().end());
    dtype_ = columns.dtype();
    have_first_ = true;
  }
}

void PredictionCollector::Save(Writer& w) const {
  w.I64(received_);
  w.Varint(begins_.size());
  for (int64_t b : begins_) w.I64(b);
  w.Bool(have_first_);
  w.U8(static_cast<uint8_t>(dtype_));
  w.Varint(row_shape_.size());
  for (int64_t d : row_shape_) w.I64(d);
}

void PredictionCollector::Load(Reader& r) {
  auto scope = r.Field("predictions");
  received_ = r.I64("received");
  begins_.clear();
  have_first_ = false;
  const size_t n = r.Count("ranges", 8);
  for (size_t i = 0; i < n && r.ok(); ++i) begins_.insert(r.I64("begin"));
  have_first_ = r.Bool("have_first");
  dtype_ = static_cast<tensor::DType>(r.U8("dtype"));
  row_shape_.assign(r.Count("row_shape", 8), 0);
  for (int64_t& d : row_shape_) d = r.I64("dim");
  if (r.ok() && (received_ < 0 || received_ > records_)) {
    r.Fail(std::to_string(received_) + " records received of " + std::to_string(records_));
  }
}

// ---- Rendezvous ------------------------------------------------------------------

void Rendezvous::Save(Writer& w) const {
  std::lock_guard<std::mutex> lock(mu_);
  w.U64(version_);
  w.Varint(members_.size());
  for (const RingMember& m : members_) {
    w.String(m.worker);
    w.String(m.address);
    w.U64(m.joined_version);
  }
  w.Varint(fresh_.size());
  for (const std::string& f : fresh_) w.String(f);
}

void Rendezvous::Load(Reader& r) {
  std::lock_guard<std::mutex> lock(mu_);
  auto scope = r.Field("ring");
  version_ = r.U64("version");
  members_.clear();
  fresh_.clear();
  const size_t n = r.Count("members", 10);
  for (size_t i = 0; i < n && r.ok(); ++i) {
    RingMember m;
    m.worker = r.String("worker");
    m.address = r.String("address");
    m.joined_version = r.U64("joined_version");
    members_.push_back(std::move(m));
  }
  const size_t f = r.Count("fresh", 1);
  for (size_t i = 0; i < f && r.ok(); ++i) fresh_.insert(r.String("fresh"));
}

}  // namespace edl::roles::master
