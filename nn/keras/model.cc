#include "nn/keras/model.h"

#include <map>

#include "nn/functional.h"
#include "nn/keras/json_text.h"
#include "nn/keras/model_builder.h"
#include "nn/keras/nested_model.h"
#include "nn/layers/embedding.h"

namespace edl::nn::keras {

Result<std::unique_ptr<Model>> Model::FromKerasJson(const std::string& keras_json,
                                                    const std::string& origin,
                                                    const std::string& json_path, uint64_t seed) {
  EDL_ASSIGN_OR_RETURN(nlohmann::json j, ParseJsonText(keras_json, origin));
  ModelBuilder builder(origin, json_path, seed);
  return builder.Build(j);
}

Model::~Model() = default;

std::vector<std::string> Model::output_names() const {
  std::vector<std::string> out;
  for (const TensorRef& r : output_refs_) out.push_back(r.layer);
  return out;
}

std::vector<Shape> Model::output_shapes() const {
  std::vector<Shape> out;
  for (int s : output_slots_) out.push_back(slot_shapes_[s]);
  return out;
}

std::vector<Var> Model::Forward(const std::vector<Tensor>& inputs, bool training) {
  return Forward(inputs, training, {});
}

std::vector<Var> Model::Forward(const std::vector<Tensor>& inputs, bool training,
                                const std::vector<uint64_t>& record_keys) {
  EDL_CHECK_EQ(inputs.size(), inputs_.size()) << "model \"" << name_ << "\" inputs";
  std::vector<Var> vars;
  for (size_t i = 0; i < inputs.size(); ++i) {
    const Tensor& t = inputs[i];
    const ModelInput& spec = inputs_[i];
    Shape without_batch(t.shape().begin() + (t.rank() > 0 ? 1 : 0), t.shape().end());
    EDL_CHECK(t.rank() > 0 && without_batch == spec.shape)
        << "input \"" << spec.name << "\" expects [batch] + " << tensor::ShapeString(spec.shape)
        << ", got " << tensor::ShapeString(t.shape());
    vars.push_back(Var(t.dtype() == spec.dtype ? t : tensor::Cast(t, spec.dtype)));
  }
  layers::CallContext ctx{training, &rng_};
  if (!record_keys.empty()) {
    EDL_CHECK_EQ(static_cast<int64_t>(record_keys.size()), inputs[0].dim(0));
    ctx.record_keys = &record_keys;
  }
  return Run(vars, ctx);
}

std::vector<Var> Model::Run(const std::vector<Var>& inputs, const layers::CallContext& ctx) {
  EDL_CHECK_EQ(inputs.size(), inputs_.size()) << "model \"" << name_ << "\" inputs";
  std::vector<Var> slots(slot_shapes_.size());
  for (size_t i = 0; i < inputs.size(); ++i) slots[input_slots_[i]] = inputs[i];
  // Each slot's mask (docs/model-spec.md "Masks"); undefined for most.
  std::vector<Tensor> masks(slot_shapes_.size());
  for (const Step& step : steps_) {
    std::vector<Var> ins;
    std::vector<Tensor> in_masks;
    ins.reserve(step.input_slots.size());
    for (int s : step.input_slots) {
      ins.push_back(slots[s]);
      in_masks.push_back(masks[s]);
    }
    std::vector<Var> outs = step.layer->CallWithMasks(ins, in_masks, ctx, &masks[step.output_slot]);
    EDL_CHECK_EQ(static_cast<int>(outs.size()), step.num_outputs) << step.layer->name();
    for (int k = 0; k < step.num_outputs; ++k) slots[step.output_slot + k] = std::move(outs[k]);
  }
  std::vector<Var> out;
  for (int s : output_slots_) out.push_back(slots[s]);
  return out;
}

std::vector<Parameter*> Model::parameters() {
  std::vector<Parameter*> out;
  for (auto& l : layers_) {
    for (Parameter* p : l->weights()) out.push_back(p);
  }
  return out;
}

std::vector<const Parameter*> Model::parameters() const {
  std::vector<const Parameter*> out;
  for (auto& l : layers_) {
    for (Parameter* p : l->weights()) out.push_back(p);
  }
  return out;
}

Var Model::LayerPenalties() {
  Var total;
  for (auto& l : layers_) {
    Var r = l->RegularizationLoss();
    if (!r.defined()) continue;
    total = total.defined() ? fn::Add(total, r) : r;
  }
  return total;
}

Var Model::RegularizationLoss() {
  Var total = LayerPenalties();
  return total.defined() ? total : Var(Tensor::Scalar(0.f, device_));
}

void Model::Freeze() {
  for (auto& l : layers_) l->set_trainable(false);
}

void Model::MoveTo(tensor::Device device) {
  for (Parameter* p : parameters()) {
    p->value = p->value.On(device);
    p->ZeroGrad();
  }
  device_ = device;
}

namespace {

// "model/dense/kernel:0" -> "dense/kernel".
std::string LastTwo(std::string name) {
  size_t colon = name.rfind(':');
  if (colon != std::string::npos) name = name.substr(0, colon);
  size_t last = name.rfind('/');
  if (last == std::string::npos || last == 0) return name;
  size_t before = name.rfind('/', last - 1);
  return before == std::string::npos ? name : name.substr(before + 1);
}

}  // namespace

Status Model::SetWeights(const std::vector<NamedTensor>& weights) {
  std::vector<Parameter*> params = parameters();
  std::map<std::string, Parameter*> by_name;
  for (Parameter* p : params) by_name[p->name] = p;
  std::map<std::string, const NamedTensor*> assigned;
  for (const NamedTensor& w : weights) {
    auto it = by_name.find(w.name);
    if (it == by_name.end()) it = by_name.find(LastTwo(w.name));
    if (it == by_name.end()) {
      std::string known;
      for (const auto& [n, p] : by_name) known += (known.empty() ? "" : ", ") + n;
      return InvalidArgument("weight \"" + w.name + "\" matches no weight of the model (" +
                             (known.empty() ? "which has none" : "expected: " + known) + ")");
    }
    Parameter* p = it->second;
    if (assigned.count(p->name)) {
      return InvalidArgument("weights \"" + assigned[p->name]->name + "\" and \"" + w.name +
                             "\" both set \"" + p->name + "\"");
    }
    if (w.value.shape() != p->value.shape() || w.value.dtype() != tensor::DType::kFloat32) {
      return InvalidArgument("weight \"" + w.name + "\" has shape " +
                             tensor::ShapeString(w.value.shape()) + ", but \"" + p->name +
                             "\" needs float32 " + tensor::ShapeString(p->value.shape()));
    }
    assigned[p->name] = &w;
  }
  for (Parameter* p : params) {
    if (!assigned.count(p->name)) {
      return InvalidArgument("no value given for weight \"" + p->name + "\" " +
                             tensor::ShapeString(p->value.shape()));
    }
  }
  for (Parameter* p : params) p->value.CopyFrom(assigned[p->name]->value);
  return Status::Ok();
}

Model::IdLimit Model::InputIdLimit(size_t input_index) const {
  IdLimit limit;
  if (input_index >= input_slots_.size()) return limit;
  const int slot = input_slots_[input_index];
  for (const Step& step : steps_) {
    const layers::Layer& l = *step.layer;
    if (const auto* nested = dynamic_cast<const NestedModel*>(&l)) {
      // The nested model's own inputs that this one feeds.
      for (size_t k = 0; k < step.input_slots.size(); ++k) {
        if (step.input_slots[k] != slot) continue;
        IdLimit inner = nested->model()->InputIdLimit(k);
        if (inner.input_dim < 0) continue;
        if (limit.input_dim < 0 || inner.input_dim < limit.input_dim) {
          limit = inner;
          limit.description += " (inside nested model \"" + l.name() + "\")";
        }
      }
      continue;
    }
    if (l.id_limit() < 0 || step.input_slots.empty() || step.input_slots[0] != slot) continue;
    if (limit.input_dim < 0 || l.id_limit() < limit.input_dim) {
      limit.input_dim = l.id_limit();
      limit.layer = l.name();
      limit.description = std::string(l.class_name()) + " \"" + l.name() + "\" has " +
                          l.id_limit_field() + " " + std::to_string(l.id_limit());
    }
  }
  return limit;
}

std::vector<Model::EmbeddingInput> Model::EmbeddingInputs() {
  std::vector<EmbeddingInput> result;
  for (const Step& step : steps_) {
    if (auto* nested = dynamic_cast<NestedModel*>(step.layer)) {
      // Tables inside read the outer input that feeds the nested one.
      for (const EmbeddingInput& inner : nested->model()->EmbeddingInputs()) {
        const int slot = step.input_slots[inner.input_index];
        for (size_t i = 0; i < input_slots_.size(); ++i) {
          if (input_slots_[i] == slot) result.push_back({i, inner.table});
        }
      }
      continue;
    }
    auto* embedding = dynamic_cast<layers::Embedding*>(step.layer);
    if (embedding == nullptr || step.input_slots.empty()) continue;
    for (size_t i = 0; i < input_slots_.size(); ++i) {
      if (input_slots_[i] != step.input_slots[0]) continue;
      for (Parameter* p : embedding->weights()) {
        if (p->name == embedding->name() + "/embeddings") result.push_back({i, p});
      }
    }
  }
  return result;
}

}  // namespace edl::nn::keras
