#include "nn/optim/optimizer.h"

#include <algorithm>
#include <cmath>
#include <nlohmann/json.hpp>
#include <numeric>

namespace edl::nn::optim {

namespace {

// Rows of a sparse gradient with unique ids in ascending order. Views the
// input when its ids are already strictly increasing.
struct UniqueRows {
  const int64_t* ids = nullptr;
  const float* values = nullptr;
  int64_t count = 0;
  std::vector<int64_t> owned_ids;
  std::vector<float> owned_values;
};

UniqueRows CoalesceRows(const tensor::SparseRows& grad, int64_t num_rows,
                        int64_t row_size) {
  UniqueRows out;
  const int64_t n = grad.ids.defined() ? grad.ids.numel() : 0;
  if (n == 0) return out;
  EDL_CHECK(grad.ids.dtype() == tensor::DType::kInt64) << "sparse ids";
  EDL_CHECK_EQ(grad.values.numel(), n * row_size)
      << "sparse gradient values " << tensor::ShapeString(grad.values.shape());
  const int64_t* ids = grad.ids.i64();
  const float* values = grad.values.f32();
  bool increasing = true;
  for (int64_t i = 0; i < n; ++i) {
    EDL_CHECK(ids[i] >= 0 && ids[i] < num_rows)
        << "sparse gradient id " << ids[i] << " outside [0, " << num_rows
        << ")";
    if (i > 0 && ids[i] <= ids[i - 1]) increasing = false;
  }
  if (increasing) {
    out.ids = ids;
    out.values = values;
    out.count = n;
    return out;
  }
  std::vector<int64_t> order(static_cast<size_t>(n));
  std::iota(order.begin(), order.end(), int64_t{0});
  std::stable_sort(order.begin(), order.end(),
                   [&](int64_t a, int64_t b) { return ids[a] < ids[b]; });
  for (int64_t k = 0; k < n; ++k) {
    const int64_t src = order[static_cast<size_t>(k)];
    const float* row = values + src * row_size;
    if (out.owned_ids.empty() || out.owned_ids.back() != ids[src]) {
      out.owned_ids.push_back(ids[src]);
      out.owned_values.insert(out.owned_values.end(), row, row + row_size);
    } else {
      float* dst = out.owned_values.data() + out.owned_values.size() - row_size;
      for (int64_t j = 0; j < row_size; ++j) dst[j] += row[j];
    }
  }
  out.ids = out.owned_ids.data();
  out.values = out.owned_values.data();
  out.count = static_cast<int64_t>(out.owned_ids.size());
  return out;
}

}  // namespace

Optimizer::Optimizer(std::string class_name, double learning_rate)
    : class_name_(std::move(class_name)), learning_rate_(learning_rate) {}

void Optimizer::set_learning_rate_schedule(
    std::unique_ptr<LearningRateSchedule> schedule) {
  schedule_ = std::move(schedule);
}

double Optimizer::CurrentLearningRate() const {
  const int64_t step = iterations();
  double lr = schedule_ ? (*schedule_)(step) : learning_rate_;
  if (UsesTimeDecay() && decay_ > 0) {
    lr /= 1.0 + decay_ * static_cast<double>(step);
  }
  return lr;
}

Optimizer::Step Optimizer::CurrentStep() const {
  return Step{CurrentLearningRate(), iterations() + 1};
}

std::vector<std::string> Optimizer::SlotNames() const {
  std::vector<std::string> names;
  for (const SlotSpec& spec : SlotSpecs()) names.push_back(spec.name);
  return names;
}

std::vector<float*> Optimizer::SlotsFor(const std::string& key,
                                        const tensor::Shape& shape) {
  const std::vector<SlotSpec> specs = SlotSpecs();
  std::lock_guard<std::mutex> lock(mu_);
  VariableSlots& state = state_[key];
  if (state.slots.empty()) {
    state.shape = shape;
    state.slots.resize(specs.size());
  }
  EDL_CHECK(tensor::NumElements(state.shape) == tensor::NumElements(shape))
      << "optimizer state of \"" << key << "\" has shape "
      << tensor::ShapeString(state.shape) << ", variable has "
      << tensor::ShapeString(shape);
  std::vector<float*> out;
  for (size_t i = 0; i < specs.size(); ++i) {
    Tensor& slot = state.slots[i];
    if (!slot.defined()) slot = Tensor::Full(shape, specs[i].initial_value);
    EDL_CHECK_EQ(slot.numel(), tensor::NumElements(shape))
        << "slot \"" << key << "/" << specs[i].name << "\" has shape "
        << tensor::ShapeString(slot.shape()) << ", variable has "
        << tensor::ShapeString(shape);
    out.push_back(slot.f32());
  }
  return out;
}

void Optimizer::Clip(float* grad, int64_t n) const {
  if (clipvalue_ > 0) {
    const float c = static_cast<float>(clipvalue_);
    for (int64_t i = 0; i < n; ++i) grad[i] = std::clamp(grad[i], -c, c);
  }
  if (clipnorm_ > 0) {
    double sum = 0;
    for (int64_t i = 0; i < n; ++i) sum += double{grad[i]} * grad[i];
    const double norm = std::sqrt(sum);
    if (norm > clipnorm_) {
      const float scale = static_cast<float>(clipnorm_ / norm);
      for (int64_t i = 0; i < n; ++i) grad[i] *= scale;
    }
  }
}

void Optimizer::ApplyDense(const std::string& key, Tensor& value,
                           const Tensor& grad) {
  EDL_CHECK(value.dtype() == tensor::DType::kFloat32) << key;
  EDL_CHECK_EQ(value.numel(), grad.numel())
      << "gradient of \"" << key << "\" has shape "
      << tensor::ShapeString(grad.shape()) << ", variable has "
      << tensor::ShapeString(value.shape());
  UpdateTarget target;
  target.value = value.f32();
  target.numel = value.numel();
  Tensor clipped;
  if (clipping()) {
    clipped = grad.Clone();
    Clip(clipped.f32(), clipped.numel());
    target.grad = clipped.f32();
  } else {
    target.grad = grad.f32();
  }
  target.slots = SlotsFor(key, value.shape());
  Update(CurrentStep(), target);
}

void Optimizer::ApplySparse(const std::string& key, Tensor& table,
                            const tensor::SparseRows& grad) {
  EDL_CHECK(table.dtype() == tensor::DType::kFloat32) << key;
  EDL_CHECK_GE(table.rank(), 1) << key;
  const int64_t num_rows = table.dim(0);
  const int64_t row_size = num_rows == 0 ? 0 : table.numel() / num_rows;
  UniqueRows rows = CoalesceRows(grad, num_rows, row_size);
  if (clipping()) {
    if (rows.owned_values.empty()) {
      rows.owned_values.assign(rows.values,
                               rows.values + rows.count * row_size);
      rows.values = rows.owned_values.data();
    }
    Clip(rows.owned_values.data(), rows.count * row_size);
  }
  UpdateTarget target;
  target.value = table.f32();
  target.numel = table.numel();
  target.grad = rows.values;
  target.ids = rows.ids;
  target.num_ids = rows.count;
  target.row_size = row_size;
  target.slots = SlotsFor(key, table.shape());
  if (rows.count > 0) Update(CurrentStep(), target);
}

void Optimizer::Apply(const std::vector<Parameter*>& params) {
  for (Parameter* p : params) {
    if (p == nullptr || !p->trainable) continue;
    const bool dense = p->grad.defined();
    const bool sparse = p->sparse_grad.has_value() &&
                        p->sparse_grad->ids.defined() &&
                        p->sparse_grad->ids.numel() > 0;
    if (dense && sparse) {
      // Sum both into one dense gradient so the variable steps once.
      Tensor sum = p->grad.Clone();
      const tensor::SparseRows& rows = *p->sparse_grad;
      const int64_t n = rows.ids.numel();
      const int64_t row_size = rows.values.numel() / n;
      const int64_t* ids = rows.ids.i64();
      const float* values = rows.values.f32();
      float* out = sum.f32();
      for (int64_t i = 0; i < n; ++i) {
        EDL_CHECK((ids[i] + 1) * row_size <= sum.numel()) << p->name;
        for (int64_t j = 0; j < row_size; ++j) {
          out[ids[i] * row_size + j] += values[i * row_size + j];
        }
      }
      ApplyDense(p->name, p->value, sum);
    } else if (dense) {
      ApplyDense(p->name, p->value, p->grad);
    } else if (sparse) {
      ApplySparse(p->name, p->value, *p->sparse_grad);
    }
  }
  FinishStep();
}

std::vector<std::pair<std::string, Tensor>> Optimizer::Slots() const {
  const std::vector<std::string> names = SlotNames();
  std::vector<std::pair<std::string, Tensor>> out;
  std::lock_guard<std::mutex> lock(mu_);
  for (const auto& [key, state] : state_) {
    for (size_t i = 0; i < state.slots.size(); ++i) {
      if (!state.slots[i].defined()) continue;
      out.emplace_back(key + "/" + names[i], state.slots[i].Clone());
    }
  }
  std::sort(out.begin(), out.end(),
            [](const auto& a, const auto& b) { return a.first < b.first; });
  return out;
}

Status Optimizer::RestoreSlots(
    const std::vector<std::pair<std::string, Tensor>>& slots) {
  const std::vector<std::string> names = SlotNames();
  std::vector<std::pair<std::string, size_t>> parsed;  // key, slot index
  for (const auto& [name, tensor] : slots) {
    const size_t slash = name.rfind('/');
    if (slash == std::string::npos) {
      return InvalidArgument("optimizer slot \"" + name +
                             "\": expected \"<variable>/<slot>\"");
    }
    const std::string slot = name.substr(slash + 1);
    auto it = std::find(names.begin(), names.end(), slot);
    if (it == names.end()) {
      std::string known;
      for (const std::string& n : names)
        known += (known.empty() ? "" : ", ") + n;
      return InvalidArgument("optimizer slot \"" + name + "\": " + class_name_ +
                             " has no slot \"" + slot + "\" (it keeps: " +
                             (known.empty() ? "none" : known) + ")");
    }
    if (!tensor.defined() || tensor.dtype() != tensor::DType::kFloat32) {
      return InvalidArgument("optimizer slot \"" + name +
                             "\": expected a float32 tensor");
    }
    parsed.emplace_back(name.substr(0, slash),
                        static_cast<size_t>(it - names.begin()));
  }
  std::lock_guard<std::mutex> lock(mu_);
  for (size_t i = 0; i < slots.size(); ++i) {
    VariableSlots& state = state_[parsed[i].first];
    if (state.slots.empty()) state.slots.resize(names.size());
    state.shape = slots[i].second.shape();
    state.slots[parsed[i].second] = slots[i].second.Clone();
  }
  return Status::Ok();
}

std::string Optimizer::ConfigJson() const {
  nlohmann::json config = nlohmann::json::object();
  config["name"] = class_name_;
  if (schedule_) {
    config["learning_rate"] = nlohmann::json::parse(schedule_->ConfigJson());
  } else {
    config["learning_rate"] = learning_rate_;
  }
  if (UsesTimeDecay()) config["decay"] = decay_;
  for (const auto& [key, value] : Hyperparameters()) {
    if (const double* d = std::get_if<double>(&value)) {
      config[key] = *d;
    } else {
      config[key] = std::get<bool>(value);
    }
  }
  if (clipnorm_ > 0) config["clipnorm"] = clipnorm_;
  if (clipvalue_ > 0) config["clipvalue"] = clipvalue_;
  nlohmann::json j = {{"class_name", class_name_}, {"config", config}};
  return j.dump();
}

}  // namespace edl::nn::optim
