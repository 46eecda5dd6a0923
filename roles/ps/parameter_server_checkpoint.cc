// ParameterServer's checkpoints: the snapshot it writes and the restore
// (with re-partitioning) at startup. Layout: roles/ps/ps_checkpoint.h.
#include <algorithm>
#include <set>

#include "base/logging.h"
#include "roles/ps/parameter_server.h"
#include "roles/ps/partition.h"
#include "roles/ps/ps_checkpoint.h"

namespace edl::roles::ps {

using tensor::DType;
using tensor::Tensor;

namespace {

constexpr char kIds[] = "#ids";
constexpr char kValues[] = "#values";
constexpr char kAppliedTaken[] = "#applied/taken";
constexpr char kAppliedSettled[] = "#applied/settled";

bool EndsWith(const std::string& s, const std::string& suffix) {
  return s.size() >= suffix.size() &&
         s.compare(s.size() - suffix.size(), suffix.size(), suffix) == 0;
}

// "dense/kernel/m" -> "dense/kernel".
std::string Owner(const std::string& slot_name) {
  const size_t slash = slot_name.rfind('/');
  return slash == std::string::npos ? "" : slot_name.substr(0, slash);
}

}  // namespace

void ParameterServer::MaybeCheckpoint(int64_t version) {
  if (options_.checkpoint_dir.empty() || options_.checkpoint_steps <= 0) return;
  int64_t retry = retry_at_.load();
  // A due version, or the retry of a failed one (claimed by one thread).
  const bool due = version % options_.checkpoint_steps == 0;
  const bool retrying =
      !due && retry > 0 && version >= retry && retry_at_.compare_exchange_strong(retry, 0);
  if (!due && !retrying) return;
  Status s = WriteCheckpointAt(version);
  if (!s.ok()) {
    EDL_LOG(WARNING) << Who() << ": checkpoint of version " << version << " failed"
                     << (retrying ? " again" : "") << ": " << s.message();
    retry_at_ = version + std::max<int64_t>(1, options_.checkpoint_steps / 4);
  }
}

Status ParameterServer::SaveCheckpoint() {
  if (options_.checkpoint_dir.empty()) {
    return FailedPrecondition(Who() + ": no --checkpoint_dir to save into");
  }
  return WriteCheckpointAt(version_.load());
}

ParameterServer::CheckpointHealth ParameterServer::checkpoint_health() const {
  std::lock_guard<std::mutex> lock(health_mu_);
  return health_;
}

Status ParameterServer::WriteCheckpointAt(int64_t version) {
  std::lock_guard<std::mutex> lock(checkpoint_mu_);
  Checkpoint c;
  {
    std::unique_lock<std::shared_mutex> gate(gate_);
    c = Snapshot(version);
  }
  Status written = WritePartition(options_.checkpoint_dir, options_.ps_index, options_.num_ps, c)
                       .WithPrefix(Who());
  {
    std::lock_guard<std::mutex> health(health_mu_);
    if (written.ok()) {
      health_.last_good_version = std::max(health_.last_good_version, version);
      health_.failures = 0;
      retry_at_ = 0;
    } else {
      ++health_.failures;
      health_.failed_version = version;
      health_.last_error = written.message();
    }
  }
  EDL_RETURN_IF_ERROR(written);
  Status pruned = PrunePartitions(options_.checkpoint_dir, options_.keep_checkpoint_max, version);
  if (!pruned.ok()) {
    EDL_LOG(WARNING) << Who() << ": " << pruned.message();
  }
  return Status::Ok();
}

Checkpoint ParameterServer::Snapshot(int64_t version) const {
  Checkpoint c;
  c.version = version;
  c.model_spec_json = spec_json_;
  c.optimizer_json = optimizer_->ConfigJson();
  for (const auto& d : dense_) c.model.push_back({d->name, d->value.Clone()});
  for (auto& [name, slot] : optimizer_->Slots()) {
    if (dense_by_name_.count(Owner(name))) c.optimizer.push_back({name, slot});
  }
  // The named pushes the weights hold (roles/ps/applied_pushes.h), as
  // int64 [n, 2] pairs; a sync round's pushes are not in the weights yet.
  const AppliedPushes::State applied =
      AppliedPushes::WithoutClaims(applied_.Export(), round_.claims);
  for (const auto& [name, pairs] : {std::make_pair(kAppliedTaken, &applied.taken),
                                    std::make_pair(kAppliedSettled, &applied.settled)}) {
    if (pairs->empty()) continue;
    std::vector<int64_t> flat;
    for (const auto& [a, b] : *pairs) flat.insert(flat.end(), {a, b});
    c.optimizer.push_back({name, Tensor::FromInts({static_cast<int64_t>(pairs->size()), 2}, flat)});
  }
  for (const auto& [name, table] : tables_) {
    EmbeddingTable::Rows rows = table->Export();
    c.model.push_back({name + kIds, rows.ids});
    c.model.push_back({name + kValues, rows.values});
    for (size_t k = 0; k < rows.slots.size(); ++k) {
      c.optimizer.push_back({name + "/" + table->slot_names()[k] + kValues, rows.slots[k]});
    }
  }
  return c;
}

Status ParameterServer::Restore(const std::string& root, int64_t version) {
  auto partitions = ReadPartitions(root, version, options_.num_ps);
  if (!partitions.ok()) return partitions.status().WithPrefix(Who());
  const std::string where = Who() + ": checkpoint " + root + "/version-" + std::to_string(version);
  std::set<std::string> restored;
  std::vector<std::pair<std::string, Tensor>> dense_slots;
  // Per table: the owned rows gathered from every partition.
  struct Gathered {
    std::vector<int64_t> ids;
    std::vector<float> values;
    std::vector<std::vector<float>> slots;
  };
  std::map<std::string, Gathered> gathered;

  for (const Checkpoint& c : *partitions) {
    std::map<std::string, const Tensor*> by_name;
    for (const NamedTensor& t : c.model) by_name[t.name] = &t.value;
    for (const NamedTensor& t : c.optimizer) by_name[t.name] = &t.value;
    for (const NamedTensor& t : c.model) {
      if (EndsWith(t.name, kValues)) continue;
      if (EndsWith(t.name, kIds)) {
        const std::string name = t.name.substr(0, t.name.size() - 4);
        auto table = tables_.find(name);
        if (table == tables_.end()) {
          return InvalidArgument(where + ": embedding table \"" + name + "\" is not in the model");
        }
        const int64_t dim = table->second->dim();
        auto values = by_name.find(name + kValues);
        const int64_t n = t.value.numel();
        if (t.value.dtype() != DType::kInt64 || values == by_name.end() ||
            values->second->numel() != n * dim) {
          return InvalidArgument(where + ": table \"" + name +
                                 "\" needs int64 \"#ids\" [n] and \"#values\" "
                                 "[n, " +
                                 std::to_string(dim) + "]");
        }
        const auto& slot_names = table->second->slot_names();
        std::vector<const float*> slots;
        for (const std::string& slot : slot_names) {
          auto s = by_name.find(name + "/" + slot + kValues);
          if (s == by_name.end()) break;
          if (s->second->numel() != n * dim) {
            return InvalidArgument(where + ": slot \"" + s->first + "\" has shape " +
                                   tensor::ShapeString(s->second->shape()));
          }
          slots.push_back(s->second->f32());
        }
        if (slots.size() != slot_names.size()) slots.clear();
        Gathered& g = gathered[name];
        if (g.slots.empty()) g.slots.resize(slot_names.size());
        const int64_t* ids = t.value.i64();
        const float* v = values->second->f32();
        for (int64_t i = 0; i < n; ++i) {
          if (ids[i] < 0 || PsOfId(ids[i], options_.num_ps) != options_.ps_index) {
            continue;
          }
          g.ids.push_back(ids[i]);
          g.values.insert(g.values.end(), v + i * dim, v + (i + 1) * dim);
          for (size_t k = 0; k < slots.size(); ++k) {
            g.slots[k].insert(g.slots[k].end(), slots[k] + i * dim, slots[k] + (i + 1) * dim);
          }
        }
        continue;
      }
      auto d = dense_by_name_.find(t.name);
      if (d == dense_by_name_.end()) {
        if (PsOfParameter(t.name, options_.num_ps) == options_.ps_index || tables_.count(t.name)) {
          return InvalidArgument(where + ": weight \"" + t.name + "\" is not in the model");
        }
        continue;
      }
      Tensor& value = d->second->value;
      if (t.value.dtype() != DType::kFloat32 || t.value.shape() != value.shape()) {
        return InvalidArgument(where + ": weight \"" + t.name + "\" has shape " +
                               tensor::ShapeString(t.value.shape()) + ", the model needs " +
                               tensor::ShapeString(value.shape()));
      }
      std::lock_guard<std::mutex> lock(d->second->mu);
      ForWriting(*d->second);
      value.CopyFrom(t.value);
      restored.insert(t.name);
    }
    for (const NamedTensor& t : c.optimizer) {
      if (t.name.find('#') != std::string::npos) continue;
      if (dense_by_name_.count(Owner(t.name))) {
        dense_slots.emplace_back(t.name, t.value);
      }
    }
  }
  for (const auto& d : dense_) {
    if (!restored.count(d->name)) {
      return InvalidArgument(where + " has no weight \"" + d->name + "\" that the model needs");
    }
  }
  Status s = optimizer_->RestoreSlots(dense_slots);
  if (!s.ok()) return s.WithPrefix(where);
  for (auto& [name, g] : gathered) {
    EmbeddingTable& table = *tables_.at(name);
    const int64_t n = static_cast<int64_t>(g.ids.size());
    EmbeddingTable::Rows rows;
    rows.ids = Tensor::FromInts({n}, g.ids);
    rows.values = Tensor::FromVector({n, table.dim()}, g.values);
    const bool complete_slots =
        std::all_of(g.slots.begin(), g.slots.end(), [&](const std::vector<float>& v) {
          return static_cast<int64_t>(v.size()) == n * table.dim();
        });
    if (complete_slots) {
      for (const auto& v : g.slots) {
        rows.slots.push_back(Tensor::FromVector({n, table.dim()}, v));
      }
    }
    table.Import(rows);
  }
  // This PS's own record of named pushes, when the checkpoint is this job's
  // own (another job's task ids mean other tasks) and was written by as
  // many PS (after a change of PS count the shards differ).
  if (root == options_.checkpoint_dir && static_cast<int>(partitions->size()) == options_.num_ps) {
    AppliedPushes::State applied;
    for (const NamedTensor& t : (*partitions)[options_.ps_index].optimizer) {
      std::vector<std::pair<int64_t, int64_t>>* pairs = t.name == kAppliedTaken ? &applied.taken
                                                        : t.name == kAppliedSettled
                                                            ? &applied.settled
                                                            : nullptr;
      if (pairs == nullptr) continue;
      if (t.value.dtype() != DType::kInt64 || t.value.rank() != 2 || t.value.dim(1) != 2) {
        return InvalidArgument(where + ": \"" + t.name + "\" must be int64 [n, 2]");
      }
      const int64_t* v = t.value.i64();
      for (int64_t i = 0; i < t.value.dim(0); ++i) pairs->emplace_back(v[2 * i], v[2 * i + 1]);
    }
    EDL_RETURN_IF_ERROR(applied_.Import(applied).WithPrefix(where));
  }
  optimizer_->set_iterations(version);
  version_ = version;
  if (root == options_.checkpoint_dir) {  // this job's own: a good one to fall back to
    std::lock_guard<std::mutex> health(health_mu_);
    health_.last_good_version = version;
  }
  return Status::Ok();
}

}  // namespace edl::roles::ps
