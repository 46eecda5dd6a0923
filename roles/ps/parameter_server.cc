#include "roles/ps/parameter_server.h"

#include <algorithm>
#include <cstring>
#include <optional>
#include <set>

#include "base/logging.h"
#include "nn/optim/optimizer_from_json.h"
#include "roles/ps/compression.h"
#include "roles/ps/partition.h"
#include "roles/ps/ps_checkpoint.h"
#include "tensor/cpu/parallel.h"

namespace edl::roles::ps {

using tensor::DType;
using tensor::Tensor;

ParameterServer::ParameterServer(const ParameterServerOptions& options) : options_(options) {}

ParameterServer::~ParameterServer() = default;

std::string ParameterServer::Who() const {
  return "PS " + std::to_string(options_.ps_index) + " of " + std::to_string(options_.num_ps);
}

Result<std::unique_ptr<ParameterServer>> ParameterServer::Create(
    const ParameterServerOptions& options, CompiledModel model) {
  if (options.num_ps < 1 || options.ps_index < 0 || options.ps_index >= options.num_ps) {
    return InvalidArgument("parameter server index " + std::to_string(options.ps_index) + " of " +
                           std::to_string(options.num_ps) + ": need 0 <= index < num_ps");
  }
  if (!options.use_async && options.grads_to_wait < 1) {
    return InvalidArgument("--grads_to_wait must be >= 1, got " +
                           std::to_string(options.grads_to_wait));
  }
  if (options.sync_version_tolerance < 0) {
    return InvalidArgument("--sync_version_tolerance must be >= 0");
  }
  if (options.checkpoint_steps < 0) {
    return InvalidArgument("--checkpoint_steps must be >= 0");
  }
  if (!model.model || !model.optimizer) {
    return InvalidArgument("parameter server: the model has no optimizer");
  }
  std::unique_ptr<ParameterServer> ps(new ParameterServer(options));
  EDL_RETURN_IF_ERROR(ps->Init(model));
  for (const std::string& root : {options.checkpoint_dir, options.checkpoint_dir_for_init}) {
    if (root.empty()) continue;
    const std::vector<int64_t> versions = ListCompleteVersions(root);
    if (versions.empty()) continue;
    EDL_RETURN_IF_ERROR(ps->Restore(root, versions.back()));
    EDL_LOG(INFO) << ps->Who() << ": restored version " << versions.back() << " from " << root;
    break;
  }
  return ps;
}

Status ParameterServer::Init(CompiledModel& model) {
  spec_json_ = model.SpecJson();
  optimizer_ = std::move(model.optimizer);
  version_ = optimizer_->iterations();
  const std::string config = optimizer_->ConfigJson();
  // Probe the factory once so that a config that does not round-trip is an
  // error here rather than an abort later.
  auto probe = nn::optim::OptimizerFromJson(config, "optimizer config");
  if (!probe.ok()) return probe.status().WithPrefix(Who());
  OptimizerFactory factory = [config]() {
    auto o = nn::optim::OptimizerFromJson(config, "optimizer config");
    EDL_CHECK(o.ok()) << o.status().message();
    return std::move(o).value();
  };
  auto specs = FindEmbeddingTables(*model.model);
  if (!specs.ok()) return specs.status().WithPrefix(Who());
  std::map<std::string, const EmbeddingSpec*> spec_of;
  for (const EmbeddingSpec& s : *specs) spec_of[s.name] = &s;

  const auto model_slots = options_.tables_from_model
                               ? optimizer_->Slots()
                               : std::vector<std::pair<std::string, Tensor>>{};
  for (nn::Parameter* p : model.model->parameters()) {
    auto it = spec_of.find(p->name);
    if (it != spec_of.end()) {
      auto table = std::make_unique<EmbeddingTable>(*it->second, options_.seed, factory);
      if (options_.tables_from_model) {
        // This PS's rows of the model's table, with their slots.
        const int64_t dim = table->dim();
        std::vector<int64_t> ids;
        for (int64_t id = options_.ps_index; id < p->value.dim(0); id += options_.num_ps) {
          ids.push_back(id);
        }
        const int64_t n = static_cast<int64_t>(ids.size());
        auto rows_of = [&](const Tensor& full) {
          Tensor out = Tensor::Empty({n, dim});
          for (int64_t i = 0; i < n; ++i) {
            std::memcpy(out.f32() + i * dim, full.f32() + ids[i] * dim, dim * sizeof(float));
          }
          return out;
        };
        EmbeddingTable::Rows rows;
        rows.ids = Tensor::FromInts({n}, ids);
        rows.values = rows_of(p->value);
        for (const std::string& slot : table->slot_names()) {
          auto s = std::find_if(model_slots.begin(), model_slots.end(),
                                [&](const auto& e) { return e.first == p->name + "/" + slot; });
          if (s == model_slots.end()) break;
          rows.slots.push_back(rows_of(s->second));
        }
        if (rows.slots.size() != table->slot_names().size()) rows.slots.clear();
        table->Import(rows);
      }
      tables_[p->name] = std::move(table);
    } else if (PsOfParameter(p->name, options_.num_ps) == options_.ps_index) {
      auto d = std::make_unique<DenseParameter>();
      d->name = p->name;
      d->trainable = p->trainable;
      d->value = p->value;
      dense_by_name_[p->name] = d.get();
      dense_.push_back(std::move(d));
    }
  }
  return Status::Ok();
}

std::vector<std::string> ParameterServer::DenseNames() const {
  std::vector<std::string> out;
  for (const auto& d : dense_) out.push_back(d->name);
  return out;
}

int64_t ParameterServer::NumRows(const std::string& table) const {
  auto it = tables_.find(table);
  return it == tables_.end() ? -1 : it->second->size();
}

namespace {

// A CPU tensor's copy, made on the engine's threads when it is large: one
// thread's memcpy leaves most of the memory bandwidth unused.
Tensor CopyOf(const Tensor& t) {
  constexpr int64_t kSliceBytes = int64_t{1} << 20;
  if (t.device() != tensor::Device::kCPU || t.bytes() < 4 * kSliceBytes || omp_in_parallel()) {
    return t.Clone();
  }
  Tensor copy = Tensor::Empty(t.shape(), t.dtype());
  const char* from = static_cast<const char*>(t.raw_data());
  char* to = static_cast<char*>(copy.raw_data());
  const int64_t bytes = static_cast<int64_t>(t.bytes());
  tensor::cpu::ParallelFor((bytes + kSliceBytes - 1) / kSliceBytes, 1, [&](int64_t b, int64_t e) {
    const int64_t begin = b * kSliceBytes, end = std::min(bytes, e * kSliceBytes);
    std::memcpy(to + begin, from + begin, static_cast<size_t>(end - begin));
  });
  return copy;
}

}  // namespace

void ParameterServer::ForWriting(DenseParameter& p) {
  // Held by p.value and by the owner just taken; more: a pull's answer.
  // Under p.mu nothing new can take it, so a count of 2 stays 2.
  if (p.value.storage_owner().use_count() > 2) p.value = CopyOf(p.value);
}

Result<protocol::PullDenseResponse> ParameterServer::PullDense(
    const protocol::PullDenseRequest& r) {
  protocol::PullDenseResponse out;
  // Read before copying: the copies then hold at least this version.
  out.version = version_.load();
  if (r.known_version == out.version) return out;
  out.params.reserve(dense_.size());
  for (const auto& d : dense_) {
    std::lock_guard<std::mutex> lock(d->mu);
    // The value itself, not a copy: a push that finds it still held copies
    // it before writing (ForWriting). 16-bit when asked for; worker state
    // (moving statistics) stays float32.
    out.params.push_back({d->name, d->trainable ? Compress(d->value, r.compression) : d->value});
  }
  return out;
}

Result<protocol::PullRowsResponse> ParameterServer::PullRows(const protocol::PullRowsRequest& r) {
  auto it = tables_.find(r.table);
  if (it == tables_.end()) {
    return InvalidArgument(Who() + ": no embedding table \"" + r.table + "\"");
  }
  EmbeddingTable& table = *it->second;
  if (!r.ids.defined() || r.ids.dtype() != DType::kInt64 || r.ids.rank() != 1) {
    return InvalidArgument(Who() + ": table \"" + r.table + "\": ids must be an int64 vector");
  }
  const int64_t n = r.ids.numel();
  const int64_t* ids = r.ids.i64();
  for (int64_t i = 0; i < n; ++i) {
    if (ids[i] < 0 || ids[i] >= table.spec().input_dim ||
        PsOfId(ids[i], options_.num_ps) != options_.ps_index) {
      return InvalidArgument(Who() + ": table \"" + r.table + "\": id " + std::to_string(ids[i]) +
                             " is not held here (outside [0, " +
                             std::to_string(table.spec().input_dim) + ") or owned by another PS)");
    }
  }
  protocol::PullRowsResponse out;
  out.values = Tensor::Empty({n, table.dim()});
  table.Gather(ids, n, out.values.f32());
  return out;
}

Status ParameterServer::Validate(const protocol::PushGradientsRequest& r) const {
  for (const NamedTensor& t : r.state) {
    auto it = dense_by_name_.find(t.name);
    if (it == dense_by_name_.end()) {
      return InvalidArgument(Who() + ": state \"" + t.name + "\" is not a variable this PS holds");
    }
    if (!t.value.defined() || t.value.dtype() != DType::kFloat32 ||
        t.value.numel() != it->second->value.numel()) {
      return InvalidArgument(Who() + ": state \"" + t.name + "\" must be float32 " +
                             tensor::ShapeString(it->second->value.shape()));
    }
  }
  std::set<std::string> seen;
  for (const NamedTensor& g : r.dense) {
    auto it = dense_by_name_.find(g.name);
    if (it == dense_by_name_.end()) {
      return InvalidArgument(Who() + ": gradient for \"" + g.name +
                             "\", a dense parameter this PS does not hold");
    }
    if (!seen.insert(g.name).second) {
      return InvalidArgument(Who() + ": two gradients for \"" + g.name + "\"");
    }
    if (!g.value.defined() || g.value.dtype() != DType::kFloat32 ||
        g.value.numel() != it->second->value.numel()) {
      return InvalidArgument(Who() + ": gradient for \"" + g.name + "\" must be float32 " +
                             tensor::ShapeString(it->second->value.shape()) + ", got " +
                             (g.value.defined() ? tensor::ShapeString(g.value.shape()) : "none"));
    }
  }
  for (const protocol::SparseGradient& g : r.sparse) {
    auto it = tables_.find(g.table);
    if (it == tables_.end()) {
      return InvalidArgument(Who() + ": gradient for unknown embedding table \"" + g.table + "\"");
    }
    const EmbeddingTable& table = *it->second;
    if (!g.ids.defined() || g.ids.dtype() != DType::kInt64 || g.ids.rank() != 1 ||
        !g.values.defined() || g.values.dtype() != DType::kFloat32 ||
        g.values.numel() != g.ids.numel() * table.dim()) {
      return InvalidArgument(Who() + ": gradient for table \"" + g.table +
                             "\" must be int64 ids [n] and float32 values [n, " +
                             std::to_string(table.dim()) + "]");
    }
    const int64_t* ids = g.ids.i64();
    for (int64_t i = 0; i < g.ids.numel(); ++i) {
      if (ids[i] < 0 || ids[i] >= table.spec().input_dim ||
          PsOfId(ids[i], options_.num_ps) != options_.ps_index) {
        return InvalidArgument(Who() + ": gradient for table \"" + g.table + "\" row " +
                               std::to_string(ids[i]) + ", which this PS does not hold");
      }
    }
  }
  return Status::Ok();
}

void ParameterServer::ApplyUpdate(const std::vector<NamedTensor>& dense,
                                  const std::vector<protocol::SparseGradient>& sparse,
                                  float scale) {
  const int64_t step = optimizer_->iterations();
  for (const NamedTensor& g : dense) {
    DenseParameter& p = *dense_by_name_.at(g.name);
    Tensor grad = g.value;
    if (scale != 1.f) {
      grad = g.value.Clone();
      float* x = grad.f32();
      for (int64_t i = 0; i < grad.numel(); ++i) x[i] *= scale;
    }
    std::lock_guard<std::mutex> lock(p.mu);
    ForWriting(p);
    optimizer_->ApplyDense(p.name, p.value, grad);
  }
  for (const protocol::SparseGradient& g : sparse) {
    tables_.at(g.table)->Apply(g.ids.i64(), g.ids.numel(), g.values.f32(), scale, step);
  }
  optimizer_->FinishStep();
}

Result<protocol::PushGradientsResponse> ParameterServer::ApplyPush(
    const protocol::PushGradientsRequest& request) {
  // Gradients sent as 16-bit floats (--gradient_compression) are applied
  // in float32.
  std::optional<protocol::PushGradientsRequest> widened;
  auto compressed = [](const protocol::PushGradientsRequest& q) {
    for (const NamedTensor& g : q.dense) {
      if (IsCompressed(g.value)) return true;
    }
    for (const protocol::SparseGradient& g : q.sparse) {
      if (IsCompressed(g.values)) return true;
    }
    return false;
  };
  if (compressed(request)) {
    widened = request;
    for (NamedTensor& g : widened->dense) g.value = Decompress(g.value);
    for (protocol::SparseGradient& g : widened->sparse) g.values = Decompress(g.values);
  }
  const protocol::PushGradientsRequest& r = widened ? *widened : request;
  protocol::PushGradientsResponse out;
  int64_t applied = -1;  // the version this push completed, if any
  {
    std::shared_lock<std::shared_mutex> gate(gate_);
    EDL_RETURN_IF_ERROR(Validate(r));
    if (r.settled_task != 0) applied_.Settle(r.settled_task, r.settled_minibatches);
    std::unique_lock<std::mutex> sync_lock;
    if (!options_.use_async) sync_lock = std::unique_lock<std::mutex>(sync_mu_);
    const AppliedPushes::Claim claim = applied_.Take(r.task_id, r.minibatch);
    out.task_taken = claim.taken;
    if (!claim.apply) {
      out.duplicate = !claim.behind;
      out.behind = claim.behind;
      out.version = version_.load();
      return out;
    }
    // A sync round refuses a push computed on too old a version. It stays
    // taken (dropped, as before pushes were named): the worker goes on with
    // its next minibatch.
    if (!options_.use_async) {
      const int64_t current = version_.load();
      if (r.version < current - options_.sync_version_tolerance) {
        out.accepted = false;
        out.version = current;
        return out;
      }
    }
    // Worker-maintained state (moving statistics): the last writer wins.
    for (const NamedTensor& t : r.state) {
      DenseParameter& p = *dense_by_name_.at(t.name);
      std::lock_guard<std::mutex> lock(p.mu);
      ForWriting(p);
      p.value.CopyFrom(t.value);
    }
    if (options_.use_async) {
      float scale = 1.f;
      if (options_.lr_staleness_modulation) {
        const int64_t staleness = version_.load() - r.version;
        if (staleness > 1) scale = 1.f / static_cast<float>(staleness);
      }
      ApplyUpdate(r.dense, r.sparse, scale);
      applied = version_.fetch_add(1) + 1;
      out.version = applied;
    } else {
      for (const NamedTensor& g : r.dense) {
        Tensor& sum = round_.dense[g.name];
        if (!sum.defined()) {
          sum = g.value.Clone();
        } else {
          float* s = sum.f32();
          const float* x = g.value.f32();
          for (int64_t i = 0; i < sum.numel(); ++i) s[i] += x[i];
        }
      }
      if (r.task_id != 0) round_.claims.emplace_back(r.task_id, r.minibatch);
      for (const protocol::SparseGradient& g : r.sparse) {
        // Copies: the request's tensors view its whole received body.
        round_.sparse[g.table].push_back({g.table, g.ids.Clone(), g.values.Clone()});
      }
      if (++round_.pushes >= options_.grads_to_wait) {
        std::vector<NamedTensor> dense;
        for (auto& [name, sum] : round_.dense) dense.push_back({name, sum});
        std::vector<protocol::SparseGradient> sparse;
        for (const auto& [name, parts] : round_.sparse) {
          const int64_t dim = tables_.at(name)->dim();
          int64_t n = 0;
          for (const auto& part : parts) n += part.ids.numel();
          protocol::SparseGradient merged{name, Tensor::Empty({n}, DType::kInt64),
                                          Tensor::Empty({n, dim})};
          int64_t at = 0;
          for (const auto& part : parts) {
            const int64_t m = part.ids.numel();
            std::memcpy(merged.ids.i64() + at, part.ids.i64(), m * sizeof(int64_t));
            std::memcpy(merged.values.f32() + at * dim, part.values.f32(), m * dim * sizeof(float));
            at += m;
          }
          sparse.push_back(std::move(merged));
        }
        ApplyUpdate(dense, sparse, 1.f / static_cast<float>(options_.grads_to_wait));
        round_ = SyncRound{};
        applied = version_.fetch_add(1) + 1;
      }
      out.version = version_.load();
    }
  }
  if (applied > 0) MaybeCheckpoint(applied);
  return out;
}

Result<protocol::PushGradientsResponse> ParameterServer::PushGradients(
    const protocol::PushGradientsRequest& r) {
  EDL_ASSIGN_OR_RETURN(protocol::PushGradientsResponse out, ApplyPush(r));
  if (r.pull_dense) {
    // What a PullDense right after this push would answer (also when a
    // sync round refused the push as too stale).
    EDL_ASSIGN_OR_RETURN(protocol::PullDenseResponse pulled, PullDense({-1, r.pull_compression}));
    out.params_version = pulled.version;
    out.params = std::move(pulled.params);
  }
  return out;
}

}  // namespace edl::roles::ps
