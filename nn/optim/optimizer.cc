#include "nn/optim/optimizer.h"

#include <algorithm>
#include <nlohmann/json.hpp>

#include "nn/optim/gradient_clip.h"

namespace edl::nn::optim {

namespace {

// True when ids (CPU, int64 [n]) are strictly increasing: already the
// unique ascending ids Coalesce would produce.
bool StrictlyIncreasing(const Tensor& ids) {
  const int64_t* p = ids.i64();
  for (int64_t i = 1; i < ids.numel(); ++i) {
    if (p[i] <= p[i - 1]) return false;
  }
  return true;
}

}  // namespace

Optimizer::Optimizer(std::string class_name, double learning_rate)
    : class_name_(std::move(class_name)), learning_rate_(learning_rate) {}

void Optimizer::set_learning_rate_schedule(std::unique_ptr<LearningRateSchedule> schedule) {
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

std::vector<Tensor> Optimizer::SlotsFor(const std::string& key, const Tensor& value) {
  const std::vector<SlotSpec> specs = SlotSpecs();
  const tensor::Shape& shape = value.shape();
  std::lock_guard<std::mutex> lock(mu_);
  VariableSlots& state = state_[key];
  if (state.slots.empty()) {
    state.shape = shape;
    state.slots.resize(specs.size());
  }
  EDL_CHECK(tensor::NumElements(state.shape) == tensor::NumElements(shape))
      << "optimizer state of \"" << key << "\" has shape " << tensor::ShapeString(state.shape)
      << ", variable has " << tensor::ShapeString(shape);
  for (size_t i = 0; i < specs.size(); ++i) {
    Tensor& slot = state.slots[i];
    if (!slot.defined()) slot = Tensor::Full(shape, specs[i].initial_value);
    EDL_CHECK_EQ(slot.numel(), tensor::NumElements(shape))
        << "slot \"" << key << "/" << specs[i].name << "\" has shape "
        << tensor::ShapeString(slot.shape()) << ", variable has " << tensor::ShapeString(shape);
    // New slots, and slots restored from a (host) checkpoint, move once.
    if (slot.device() != value.device()) slot = slot.To(value.device());
  }
  return state.slots;
}

void Optimizer::Update(const std::string& key, Tensor& value, const Tensor& grad,
                       const Tensor& ids) {
  std::vector<Tensor> slots = SlotsFor(key, value);
  const Rule r = RuleFor(CurrentStep());
  tensor::ApplyUpdate(r.rule, r.coefficients, value, grad, slots, ids);
}

void Optimizer::ApplyDense(const std::string& key, Tensor& value, const Tensor& grad) {
  EDL_CHECK(value.dtype() == tensor::DType::kFloat32) << key;
  EDL_CHECK_EQ(value.numel(), grad.numel())
      << "gradient of \"" << key << "\" has shape " << tensor::ShapeString(grad.shape())
      << ", variable has " << tensor::ShapeString(value.shape());
  if (clipping()) {
    Update(key, value, ClipGradient(grad, clipvalue_, clipnorm_), Tensor());
  } else {
    Update(key, value, grad, Tensor());
  }
}

void Optimizer::ApplySparse(const std::string& key, Tensor& table, const tensor::SparseRows& grad) {
  EDL_CHECK(table.dtype() == tensor::DType::kFloat32) << key;
  EDL_CHECK_GE(table.rank(), 1) << key;
  const int64_t num_rows = table.dim(0);
  const int64_t row_size = num_rows == 0 ? 0 : table.numel() / num_rows;
  const int64_t n = grad.ids.defined() ? grad.ids.numel() : 0;
  if (n == 0) {
    SlotsFor(key, table);  // the state exists after any update
    return;
  }
  EDL_CHECK(grad.ids.dtype() == tensor::DType::kInt64) << "sparse ids";
  EDL_CHECK_EQ(grad.values.numel(), n * row_size)
      << "sparse gradient values " << tensor::ShapeString(grad.values.shape());
  tensor::SparseRows rows;
  rows.ids = grad.ids.Reshape({n});
  rows.values = grad.values.Reshape({n, row_size});
  rows.num_rows = num_rows;
  if (rows.ids.device() != tensor::Device::kCPU || !StrictlyIncreasing(rows.ids)) {
    rows = tensor::Coalesce(rows);
  }
  if (clipping()) {
    rows.values = ClipGradient(rows.values, clipvalue_, clipnorm_);
  }
  Update(key, table, rows.values, rows.ids);
}

void Optimizer::Apply(const std::vector<Parameter*>& params) {
  for (Parameter* p : params) {
    if (p == nullptr || !p->trainable) continue;
    const bool dense = p->grad.defined();
    const bool sparse = p->sparse_grad.has_value() && p->sparse_grad->ids.defined() &&
                        p->sparse_grad->ids.numel() > 0;
    if (dense && sparse) {
      // Sum both into one dense gradient so the variable steps once.
      const tensor::SparseRows& rows = *p->sparse_grad;
      const int64_t n = rows.ids.numel();
      const int64_t row_size = rows.values.numel() / n;
      EDL_CHECK(row_size > 0 && p->grad.numel() % row_size == 0) << p->name;
      Tensor sum = p->grad.Clone();
      Tensor table = sum.Reshape({sum.numel() / row_size, row_size});
      tensor::SparseRows flat;
      flat.ids = rows.ids.Reshape({n});
      flat.values = rows.values.Reshape({n, row_size});
      flat.num_rows = table.dim(0);
      tensor::ScatterAdd(table, flat, 1.f);
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
  std::sort(out.begin(), out.end(), [](const auto& a, const auto& b) { return a.first < b.first; });
  return out;
}

Status Optimizer::RestoreSlots(const std::vector<std::pair<std::string, Tensor>>& slots) {
  const std::vector<std::string> names = SlotNames();
  std::vector<std::pair<std::string, size_t>> parsed;  // key, slot index
  for (const auto& [name, tensor] : slots) {
    const size_t slash = name.rfind('/');
    if (slash == std::string::npos) {
      return InvalidArgument("optimizer slot \"" + name + "\": expected \"<variable>/<slot>\"");
    }
    const std::string slot = name.substr(slash + 1);
    auto it = std::find(names.begin(), names.end(), slot);
    if (it == names.end()) {
      std::string known;
      for (const std::string& n : names) known += (known.empty() ? "" : ", ") + n;
      return InvalidArgument("optimizer slot \"" + name + "\": " + class_name_ + " has no slot \"" +
                             slot + "\" (it keeps: " + (known.empty() ? "none" : known) + ")");
    }
    if (!tensor.defined() || tensor.dtype() != tensor::DType::kFloat32) {
      return InvalidArgument("optimizer slot \"" + name + "\": expected a float32 tensor");
    }
    parsed.emplace_back(name.substr(0, slash), static_cast<size_t>(it - names.begin()));
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
