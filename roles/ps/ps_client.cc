#include "roles/ps/ps_client.h"

#include <algorithm>
#include <cstring>
#include <functional>
#include <map>
#include <optional>
#include <thread>

#include "roles/ps/compression.h"
#include "roles/ps/partition.h"
#include "tensor/ops.h"

namespace edl::roles::ps {

using tensor::DType;
using tensor::Tensor;

namespace {

Tensor AsInt64(const Tensor& ids) {
  return ids.dtype() == DType::kInt64 ? ids : tensor::Cast(ids, DType::kInt64);
}

}  // namespace

struct PsClient::InFlightPush {
  std::vector<protocol::PushGradientsRequest> requests;
  std::vector<protocol::PushGradientsResponse> responses;  // of answered PS
  std::vector<char> answered;      // per PS; written by its lane, read after Wait
  std::unique_ptr<PsCalls> calls;  // while queued
  bool pull_pending = false;       // asked for the dense pull PullDense has not taken
  // A failure other than Unavailable: the push may have been applied, so it
  // is never resent; every later wait returns this.
  Status final_failure;

  bool AllAnswered() const {
    return std::all_of(answered.begin(), answered.end(), [](char a) { return a != 0; });
  }
};

namespace {

std::vector<protocol::PsService*> CheckedServices(std::vector<protocol::PsService*> services) {
  EDL_CHECK(!services.empty()) << "PsClient needs at least one PS";
  for (auto* s : services) EDL_CHECK(s != nullptr);
  return services;
}

}  // namespace

PsClient::PsClient(std::vector<protocol::PsService*> services, protocol::Compression compression)
    : services_(CheckedServices(std::move(services))),
      compression_(compression),
      versions_(services_.size(), -1),
      lanes_(static_cast<int>(services_.size())) {}

PsClient::~PsClient() = default;

Status PsClient::ForEachPs(const std::function<Status(int)>& fn) {
  const int n = num_ps();
  if (n == 1 && !push_in_flight()) return fn(0).WithPrefix("PS 0");
  PsCalls calls(n);
  calls.Start(lanes_, fn);
  return calls.Wait();
}

void PsClient::ForgetVersions() { std::fill(versions_.begin(), versions_.end(), -1); }

namespace {

// Writes PS i's pulled `values` into the worker's parameters (by name).
Status WritePulled(int i, const std::vector<NamedTensor>& values,
                   const std::map<std::string, nn::Parameter*>& by_name) {
  for (const NamedTensor& t : values) {
    auto it = by_name.find(t.name);
    if (it == by_name.end()) {
      return InvalidArgument("PS " + std::to_string(i) + " sent \"" + t.name +
                             "\", which the worker's model does not have");
    }
    // Non-trainable state (batch norm moving statistics) comes too: the
    // workers share it through the PS (PushGradients sends theirs).
    nn::Parameter& p = *it->second;
    if (t.value.shape() != p.value.shape()) {
      return InvalidArgument("PS " + std::to_string(i) + " sent \"" + t.name + "\" with shape " +
                             tensor::ShapeString(t.value.shape()) + ", the worker's model has " +
                             tensor::ShapeString(p.value.shape()));
    }
    p.value.CopyFrom(Decompress(t.value));
  }
  return Status::Ok();
}

}  // namespace

Status PsClient::PullDense(const std::vector<nn::Parameter*>& params) {
  std::map<std::string, nn::Parameter*> by_name;
  for (nn::Parameter* p : params) by_name[p->name] = p;
  const int n = num_ps();
  if (push_in_flight() && push_->pull_pending) {
    // The push in flight asked for this pull: its answers carry it.
    if (push_->calls || !push_->AllAnswered()) EDL_RETURN_IF_ERROR(AwaitPush());
    for (int i = 0; i < n; ++i) {
      EDL_RETURN_IF_ERROR(WritePulled(i, push_->responses[i].params, by_name));
      versions_[i] = push_->responses[i].params_version;
    }
    push_->pull_pending = false;
    return Status::Ok();
  }
  std::vector<protocol::PullDenseResponse> responses(n);
  EDL_RETURN_IF_ERROR(ForEachPs([&](int i) -> Status {
    auto r = services_[i]->PullDense({versions_[i], compression_});
    if (!r.ok()) return r.status();
    responses[i] = std::move(r).value();
    return Status::Ok();
  }));
  for (int i = 0; i < n; ++i) {
    EDL_RETURN_IF_ERROR(WritePulled(i, responses[i].params, by_name));
    versions_[i] = responses[i].version;
  }
  return Status::Ok();
}

Result<PsClient::Rows> PsClient::GatherRows(const std::string& table, const Tensor& ids_in) {
  const Tensor ids = AsInt64(ids_in.On(tensor::Device::kCPU));
  const int64_t total = ids.numel();
  const int64_t* p = ids.i64();
  // (id, position) sorted gives the unique ids and, in the same pass, each
  // position's index among them (the inverse).
  std::vector<std::pair<int64_t, int64_t>> sorted(total);
  for (int64_t j = 0; j < total; ++j) sorted[j] = {p[j], j};
  std::sort(sorted.begin(), sorted.end());
  std::vector<int64_t> unique;
  Tensor inverse = Tensor::Empty(ids.shape(), DType::kInt64);
  for (int64_t j = 0; j < total; ++j) {
    if (j == 0 || sorted[j].first != sorted[j - 1].first) unique.push_back(sorted[j].first);
    inverse.i64()[sorted[j].second] = static_cast<int64_t>(unique.size()) - 1;
  }
  if (!unique.empty() && unique.front() < 0) {
    return InvalidArgument("table \"" + table + "\": negative id " +
                           std::to_string(unique.front()));
  }
  const int n = num_ps();
  const int64_t u = static_cast<int64_t>(unique.size());
  // Positions in `unique` of each PS's ids.
  std::vector<std::vector<int64_t>> positions(n);
  for (int64_t k = 0; k < u; ++k) positions[PsOfId(unique[k], n)].push_back(k);
  std::vector<Tensor> values(n);
  EDL_RETURN_IF_ERROR(ForEachPs([&](int i) -> Status {
    if (positions[i].empty()) return Status::Ok();
    protocol::PullRowsRequest request;
    request.table = table;
    request.ids = Tensor::Empty({static_cast<int64_t>(positions[i].size())}, DType::kInt64);
    for (size_t k = 0; k < positions[i].size(); ++k) {
      request.ids.i64()[k] = unique[positions[i][k]];
    }
    auto r = services_[i]->PullRows(request);
    if (!r.ok()) return r.status();
    const Tensor& v = r->values;
    if (v.dtype() != DType::kFloat32 || v.rank() != 2 ||
        v.dim(0) != static_cast<int64_t>(positions[i].size())) {
      return Internal("table \"" + table + "\": reply has shape " + tensor::ShapeString(v.shape()) +
                      " for " + std::to_string(positions[i].size()) + " ids");
    }
    values[i] = v;
    return Status::Ok();
  }));
  int64_t dim = -1;
  for (int i = 0; i < n; ++i) {
    if (!values[i].defined()) continue;
    if (dim >= 0 && values[i].dim(1) != dim) {
      return Internal("table \"" + table + "\": the PS disagree on the row size");
    }
    dim = values[i].dim(1);
  }
  Rows out;
  out.unique_ids = Tensor::FromInts({u}, unique);
  out.values = Tensor::Empty({u, std::max<int64_t>(dim, 0)});
  for (int i = 0; i < n; ++i) {
    for (size_t k = 0; k < positions[i].size(); ++k) {
      std::memcpy(out.values.f32() + positions[i][k] * dim, values[i].f32() + k * dim,
                  dim * sizeof(float));
    }
  }
  out.inverse = std::move(inverse);
  return out;
}

Status PsClient::PullRows(nn::Parameter& table, const Tensor& ids) {
  EDL_CHECK_EQ(table.value.rank(), 2) << table.name;
  const int64_t rows = table.value.dim(0), dim = table.value.dim(1);
  EDL_ASSIGN_OR_RETURN(Rows r, GatherRows(table.name, ids));
  const int64_t u = r.unique_ids.numel();
  if (u > 0 && r.unique_ids.i64()[u - 1] >= rows) {
    return InvalidArgument("table \"" + table.name + "\": id " +
                           std::to_string(r.unique_ids.i64()[u - 1]) + " is outside [0, " +
                           std::to_string(rows) + ")");
  }
  if (u > 0 && r.values.dim(1) != dim) {
    return InvalidArgument("table \"" + table.name + "\": the PS rows have " +
                           std::to_string(r.values.dim(1)) + " columns, the worker's table " +
                           std::to_string(dim));
  }
  if (table.value.device() != tensor::Device::kCPU) {
    // Each pulled row is uploaded into its place in the device table.
    for (int64_t k = 0; k < u; ++k) {
      const int64_t id = r.unique_ids.i64()[k];
      table.value.Slice(id, id + 1).CopyFrom(r.values.Slice(k, k + 1));
    }
    return Status::Ok();
  }
  for (int64_t k = 0; k < u; ++k) {
    std::memcpy(table.value.f32() + r.unique_ids.i64()[k] * dim, r.values.f32() + k * dim,
                dim * sizeof(float));
  }
  return Status::Ok();
}

std::vector<protocol::PushGradientsRequest> PsClient::PushRequests(
    const std::vector<nn::Parameter*>& params, int64_t worker_id) const {
  const int n = num_ps();
  std::vector<protocol::PushGradientsRequest> requests(n);
  for (int i = 0; i < n; ++i) {
    requests[i].worker_id = worker_id;
    requests[i].version = versions_[i];
  }
  // What goes on the wire is on the host: device values and gradients are
  // downloaded here (no copy for CPU tensors).
  const tensor::Device host = tensor::Device::kCPU;
  for (nn::Parameter* p : params) {
    if (p == nullptr) continue;
    if (!p->trainable) {
      // Worker state (moving statistics) goes to its PS; frozen weights
      // never change, so the PS's copy stays right.
      if (!p->frozen && !IsEmbeddingTable(p->name)) {
        // A copy: the next step's forward pass updates the value in place
        // while the push may still be on its way.
        requests[PsOfParameter(p->name, n)].state.push_back({p->name, p->value.To(host)});
      }
      continue;
    }
    const bool dense = p->grad.defined();
    const bool sparse = p->sparse_grad.has_value() && p->sparse_grad->ids.defined() &&
                        p->sparse_grad->ids.numel() > 0;
    if (!dense && !sparse) continue;
    std::optional<tensor::SparseRows> host_rows;
    if (sparse) {
      const tensor::SparseRows& s = *p->sparse_grad;
      host_rows = tensor::SparseRows{s.ids.On(host), s.values.On(host), s.num_rows};
    }
    if (!IsEmbeddingTable(p->name)) {
      Tensor grad = dense ? p->grad.On(host) : Tensor::Zeros(p->value.shape());
      if (sparse) {
        if (grad.SharesStorageWith(p->grad)) grad = grad.Clone();
        tensor::ScatterAdd(grad, *host_rows);
      }
      requests[PsOfParameter(p->name, n)].dense.push_back({p->name, Compress(grad, compression_)});
      continue;
    }
    // An embedding table: send coalesced rows to the rows' PS.
    const int64_t dim = p->value.dim(1);
    std::vector<int64_t> ids;
    std::vector<float> values;
    if (sparse) {
      const tensor::SparseRows& s = *host_rows;
      ids.assign(s.ids.i64(), s.ids.i64() + s.ids.numel());
      values.assign(s.values.f32(), s.values.f32() + s.values.numel());
    }
    if (dense) {
      const Tensor host_grad = p->grad.On(host);
      const float* g = host_grad.f32();
      for (int64_t row = 0; row < p->value.dim(0); ++row) {
        const float* r = g + row * dim;
        if (std::any_of(r, r + dim, [](float x) { return x != 0.f; })) {
          ids.push_back(row);
          values.insert(values.end(), r, r + dim);
        }
      }
    }
    const int64_t m = static_cast<int64_t>(ids.size());
    if (m == 0) continue;
    tensor::SparseRows rows{Tensor::FromInts({m}, ids), Tensor::FromVector({m, dim}, values),
                            p->value.dim(0)};
    tensor::SparseRows merged = tensor::Coalesce(rows);
    const int64_t u = merged.ids.numel();
    std::vector<std::vector<int64_t>> positions(n);
    for (int64_t k = 0; k < u; ++k) {
      positions[PsOfId(merged.ids.i64()[k], n)].push_back(k);
    }
    for (int i = 0; i < n; ++i) {
      if (positions[i].empty()) continue;
      const int64_t c = static_cast<int64_t>(positions[i].size());
      protocol::SparseGradient g{p->name, Tensor::Empty({c}, DType::kInt64),
                                 Tensor::Empty({c, dim})};
      for (int64_t k = 0; k < c; ++k) {
        g.ids.i64()[k] = merged.ids.i64()[positions[i][k]];
        std::memcpy(g.values.f32() + k * dim, merged.values.f32() + positions[i][k] * dim,
                    dim * sizeof(float));
      }
      g.values = Compress(g.values, compression_);
      requests[i].sparse.push_back(std::move(g));
    }
  }
  return requests;
}

void PsClient::StartPush(const std::vector<nn::Parameter*>& params, int64_t worker_id,
                         bool with_dense_pull, PushId id) {
  EDL_CHECK(!push_in_flight()) << "StartPush with a push in flight";
  const int n = num_ps();
  push_ = std::make_unique<InFlightPush>();
  push_->requests = PushRequests(params, worker_id);
  for (auto& r : push_->requests) {
    r.pull_dense = with_dense_pull;
    r.pull_compression = compression_;
    r.task_id = id.task_id;
    r.minibatch = id.minibatch;
    r.settled_task = id.settled_task;
    r.settled_minibatches = id.settled_minibatches;
  }
  push_->pull_pending = with_dense_pull;
  push_->responses.resize(n);
  push_->answered.assign(n, 0);
  QueuePush();
}

Status PsClient::AwaitPush() {
  if (!push_->final_failure.ok()) return push_->final_failure;
  // A retry after Unavailable (the PS could not be reached or went away, as
  // a synchronous push would be retried) resends to the PS without an answer.
  if (!push_->calls) QueuePush();
  Status s = push_->calls->Wait();
  push_->calls.reset();
  if (!s.ok() && s.code() != StatusCode::kUnavailable) push_->final_failure = s;
  return s;
}

void PsClient::QueuePush() {
  InFlightPush* push = push_.get();
  push->calls = std::make_unique<PsCalls>(num_ps());
  // Only the PS that have not answered yet are sent the push (all of them
  // the first time).
  push->calls->Start(lanes_, [this, push](int i) -> Status {
    if (push->answered[i]) return Status::Ok();
    auto r = services_[i]->PushGradients(push->requests[i]);
    if (!r.ok()) return r.status();
    push->responses[i] = std::move(r).value();
    push->answered[i] = 1;
    return Status::Ok();
  });
}

Result<PsClient::PushResult> PsClient::FinishPush() {
  EDL_CHECK(push_in_flight()) << "FinishPush without a push in flight";
  // (answered is read only when no lane is working on the push.)
  if (push_->calls || !push_->AllAnswered()) EDL_RETURN_IF_ERROR(AwaitPush());
  const InFlightPush& push = *push_;
  const int n = num_ps();
  PushResult result;
  result.accepted_by.assign(n, false);
  result.versions.assign(n, 0);
  result.task_taken.assign(n, 0);
  for (int i = 0; i < n; ++i) {
    result.accepted_by[i] = push.responses[i].accepted;
    result.versions[i] = push.responses[i].version;
    result.task_taken[i] = push.responses[i].task_taken;
    result.duplicates += push.responses[i].duplicate ? 1 : 0;
    result.behind += push.responses[i].behind ? 1 : 0;
    result.accepted = result.accepted && push.responses[i].accepted;
  }
  push_.reset();
  return result;
}

void PsClient::AbandonPush() {
  EDL_CHECK(push_ == nullptr || push_->calls == nullptr) << "AbandonPush of a queued push";
  push_.reset();
}

Result<PsClient::PushResult> PsClient::PushGradients(const std::vector<nn::Parameter*>& params,
                                                     int64_t worker_id) {
  StartPush(params, worker_id);
  Result<PushResult> result = FinishPush();
  // The synchronous call leaves nothing behind: a caller retries it whole.
  push_.reset();
  return result;
}

}  // namespace edl::roles::ps
