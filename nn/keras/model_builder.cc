#include "nn/keras/model_builder.h"

#include <cctype>

#include "nn/keras/json_text.h"
#include "nn/keras/nested_model.h"
#include "nn/layers/config_reader.h"
#include "nn/layers/core.h"
#include "nn/layers/layer_factory.h"

namespace edl::nn::keras {
namespace {

using layers::InputLayer;
using nlohmann::json;

std::string ShortJson(const json& j) { return layers::Describe(j); }

// "BatchNormalization" -> "batch_normalization" (Keras' default names).
std::string SnakeCase(const std::string& s) {
  std::string out;
  for (size_t i = 0; i < s.size(); ++i) {
    char c = s[i];
    if (std::isupper(static_cast<unsigned char>(c))) {
      bool prev_lower = i > 0 && !std::isupper(static_cast<unsigned char>(s[i - 1]));
      bool next_lower = i + 1 < s.size() && std::islower(static_cast<unsigned char>(s[i + 1]));
      if (i > 0 && (prev_lower || next_lower)) out += '_';
      out += static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
    } else {
      out += c;
    }
  }
  return out;
}

}  // namespace

ModelBuilder::ModelBuilder(std::string origin, std::string json_path, uint64_t seed)
    : origin_(std::move(origin)), json_path_(std::move(json_path)), model_(new Model()) {
  model_->seed_ = seed;
  model_->rng_.seed(seed);
}

Status ModelBuilder::Fail(const std::string& path, const std::string& message) const {
  return InvalidArgument(origin_ + ": " + (path.empty() ? "" : path + ": ") + message);
}

std::string ModelBuilder::Describe(const std::string& path, const std::string& cls,
                                   const std::string& name) {
  return path + " (" + cls + " \"" + name + "\")";
}

std::string ModelBuilder::UniqueDefaultName(const std::string& class_name) {
  std::string base = SnakeCase(class_name);
  for (;;) {
    int n = default_name_counts_[base]++;
    std::string name = n == 0 ? base : base + "_" + std::to_string(n);
    if (!by_name_.count(name)) return name;
  }
}

Result<std::unique_ptr<Model>> ModelBuilder::Build(const json& keras) {
  if (!keras.is_object()) {
    return Fail(json_path_, "a Keras model must be a JSON object, got " + ShortJson(keras));
  }
  auto cls = keras.find("class_name");
  if (cls == keras.end() || !cls->is_string()) {
    return Fail(JoinPath(json_path_, "class_name"),
                "is required (\"Sequential\", \"Functional\" or \"Model\")");
  }
  auto config = keras.find("config");
  if (config == keras.end() || !(config->is_object() || config->is_array())) {
    return Fail(JoinPath(json_path_, "config"), "is required and must be an object");
  }
  std::string path = JoinPath(json_path_, "config");
  std::string c = cls->get<std::string>();
  if (c == "Sequential") {
    model_->sequential_ = true;
    EDL_RETURN_IF_ERROR(BuildSequential(*config, path));
  } else if (c == "Functional" || c == "Model") {
    if (!config->is_object()) return Fail(path, "must be an object");
    EDL_RETURN_IF_ERROR(BuildFunctional(*config, path));
  } else {
    return Fail(JoinPath(json_path_, "class_name"),
                "unsupported model class \"" + c + "\"; supported: Sequential, Functional, Model");
  }
  EDL_RETURN_IF_ERROR(CheckUniqueWeights());
  return std::move(model_);
}

Result<size_t> ModelBuilder::AddLayer(const json& entry, const std::string& path) {
  if (!entry.is_object()) return Fail(path, "a layer must be an object, got " + ShortJson(entry));
  auto cls = entry.find("class_name");
  if (cls == entry.end() || !cls->is_string()) {
    return Fail(path, "class_name is required");
  }
  std::string class_name = cls->get<std::string>();
  auto config = entry.find("config");
  if (config == entry.end() || !config->is_object()) {
    return Fail(path + " (" + class_name + ")", "config is required and must be an object");
  }
  std::string name;
  for (const json* holder : {&entry, &*config}) {
    auto n = holder->find("name");
    if (name.empty() && n != holder->end() && n->is_string()) name = n->get<std::string>();
  }
  if (name.empty()) name = UniqueDefaultName(class_name);
  std::string where = Describe(path, class_name, name);
  if (by_name_.count(name)) {
    return Fail(where,
                "duplicate layer name \"" + name + "\" (also " + paths_[by_name_[name]] + ")");
  }
  if (name.find('/') != std::string::npos) {
    return Fail(where, "layer names must not contain '/'");
  }
  std::unique_ptr<layers::Layer> layer;
  if (first_nested_ != nullptr && first_nested_->name() == name) {
    layer = std::move(first_nested_);  // made to read a Sequential's input
  } else if (NestedModel::IsModelClass(class_name)) {
    EDL_ASSIGN_OR_RETURN(layer, CreateNested(entry, name, path));
  } else {
    Result<std::unique_ptr<layers::Layer>> made = layers::CreateLayer(class_name, name, *config);
    if (!made.ok()) {
      const std::string& m = made.status().message();
      if (m.starts_with("unsupported layer class")) return Fail(path, m);
      return Fail(where, m);
    }
    layer = std::move(*made);
  }
  by_name_[name] = model_->layers_.size();
  classes_.push_back(class_name);
  paths_.push_back(path);
  model_->layers_.push_back(std::move(layer));
  return model_->layers_.size() - 1;
}

Status ModelBuilder::AddInput(layers::Layer* layer) {
  auto* input = static_cast<InputLayer*>(layer);
  std::mt19937_64& rng = model_->rng_;
  Result<std::vector<Shape>> built = input->Build({}, rng);
  if (!built.ok()) return Fail("", built.status().message());
  int slot = static_cast<int>(model_->slot_shapes_.size());
  model_->slot_shapes_.push_back(input->shape());
  slot_of_[{input->name(), 0}] = slot;
  return Status::Ok();
}

Status ModelBuilder::Call(size_t index, int node, const std::vector<TensorRef>& refs,
                          const std::vector<int>& slots, const std::string& path) {
  layers::Layer* layer = model_->layers_[index].get();
  std::vector<Shape> shapes;
  std::vector<bool> masked;
  for (int s : slots) {
    shapes.push_back(model_->slot_shapes_[s]);
    masked.push_back(slot_masked_.count(s) > 0);
  }
  for (size_t k = 0; k < slots.size(); ++k) {
    if (masked[k] && layer->mask_support() == layers::Layer::MaskSupport::kNone) {
      return Fail(path, std::string("layer \"") + layer->name() + "\" (" + layer->class_name() +
                            ") does not take masks, but input " + std::to_string(k) +
                            " carries one (from Embedding mask_zero or Masking); "
                            "layers that do: docs/model-spec.md, \"Masks\"");
    }
  }
  Result<std::vector<Shape>> out = layer->Build(shapes, model_->rng_);
  if (!out.ok()) return Fail(path, out.status().message());
  int slot = static_cast<int>(model_->slot_shapes_.size());
  for (const Shape& s : *out) model_->slot_shapes_.push_back(s);
  slot_of_[{layer->name(), node}] = slot;
  outputs_of_[{layer->name(), node}] = static_cast<int>(out->size());
  if (layer->OutputMasked(masked)) slot_masked_.insert(slot);
  model_->steps_.push_back({layer, node, slots, slot, static_cast<int>(out->size()), refs});
  return Status::Ok();
}

Result<int> ModelBuilder::SlotOf(const Model::TensorRef& r, const std::string& path) const {
  const std::pair<std::string, int> key{r.layer, r.node};
  auto count = outputs_of_.find(key);
  const int n = count == outputs_of_.end() ? 1 : count->second;
  if (r.tensor >= n) {
    return Fail(path, "layer \"" + r.layer + "\" has " + std::to_string(n) + " output" +
                          (n == 1 ? "" : "s") + ", so tensor_index must be < " + std::to_string(n) +
                          ", got " + std::to_string(r.tensor));
  }
  return slot_of_.at(key) + r.tensor;
}

Status ModelBuilder::AddImplicitInput(const json& entry, const std::string& path) {
  const json& c = entry["config"];
  std::string cls = entry["class_name"].is_string() ? entry["class_name"].get<std::string>() : "";
  std::string name = c.value("name", entry.value("name", json())).is_string()
                         ? c.value("name", entry.value("name", json())).get<std::string>()
                         : std::string();
  std::string where = Describe(path, cls, name);
  const bool nested = NestedModel::IsModelClass(cls);
  std::optional<Shape> s;
  tensor::DType dtype = tensor::DType::kFloat32;
  if (nested) {
    // A model first: its own input. AddLayer takes the model made here.
    EDL_ASSIGN_OR_RETURN(first_nested_, CreateNested(entry, name, path));
    if (const Model* inner = static_cast<NestedModel*>(first_nested_.get())->model()) {
      s = inner->inputs()[0].shape;
      dtype = inner->inputs()[0].dtype;
    }
  } else {
    Result<std::optional<Shape>> shape = layers::ReadInputShape(c);
    if (!shape.ok()) return Fail(where, shape.status().message());
    s = *shape;
  }
  if (!s && default_input_) s = *default_input_;
  if (!s && !nested && entry.contains("build_config") && entry["build_config"].is_object()) {
    Result<std::optional<Shape>> b = layers::ReadInputShape(
        json{{"batch_shape", entry["build_config"].value("input_shape", json())}});
    if (b.ok()) s = *b;
  }
  if (!s) {
    return Fail(where, nested ? "the first layer of a Sequential model needs an input shape; this "
                                "nested Sequential declares none (start it with an InputLayer)"
                              : "the first layer of a Sequential model needs batch_input_shape "
                                "(or the model must start with an InputLayer)");
  }
  if (!nested) {
    Result<tensor::DType> declared = layers::ReadDType(c);
    if (!declared.ok()) return Fail(where, declared.status().message());
    dtype = *declared;
  }
  std::string input_name = name.empty() ? "input" : name + "_input";
  by_name_[input_name] = model_->layers_.size();
  classes_.push_back("InputLayer");
  paths_.push_back(path);
  model_->layers_.push_back(std::make_unique<InputLayer>(input_name, *s, dtype));
  return AddInput(model_->layers_.back().get());
}

Status ModelBuilder::BuildSequential(const json& config, const std::string& path) {
  const json* list = &config;
  std::string list_path = path;
  if (config.is_object()) {
    model_->name_ = config.value("name", "sequential");
    auto it = config.find("layers");
    if (it == config.end() || !it->is_array()) {
      return Fail(JoinPath(path, "layers"), "is required and must be a list of layers");
    }
    list = &*it;
    list_path = JoinPath(path, "layers");
  } else {
    model_->name_ = "sequential";
  }
  int previous = -1;
  std::string previous_name;
  for (size_t i = 0; i < list->size(); ++i) {
    std::string p = IndexPath(list_path, i);
    const json& entry = (*list)[i];
    if (previous < 0 && entry.is_object() && entry.value("class_name", json()) != "InputLayer" &&
        entry.contains("config") && entry["config"].is_object()) {
      // No InputLayer: the first layer declares the input.
      EDL_RETURN_IF_ERROR(AddImplicitInput(entry, p));
      previous = 0;
      previous_name = model_->layers_.back()->name();
    }
    EDL_ASSIGN_OR_RETURN(size_t index, AddLayer(entry, p));
    layers::Layer* layer = model_->layers_[index].get();
    std::string where = Describe(p, classes_[index], layer->name());
    if (std::string(layer->class_name()) == "InputLayer") {
      if (previous >= 0) {
        return Fail(where, "an InputLayer must be the first layer of a Sequential model");
      }
      EDL_RETURN_IF_ERROR(AddInput(layer));
    } else {
      EDL_RETURN_IF_ERROR(Call(index, 0, {{previous_name, 0, 0}}, {previous}, where));
    }
    previous = slot_of_[{layer->name(), 0}];
    previous_name = layer->name();
  }
  if (model_->steps_.empty()) {
    return Fail(JoinPath(path, "layers"),
                "a Sequential model needs at least one layer "
                "besides its InputLayer");
  }
  const auto& first = *model_->layers_.front();
  model_->inputs_ = {{first.name(), static_cast<const InputLayer&>(first).shape(),
                      static_cast<const InputLayer&>(first).dtype()}};
  model_->input_slots_ = {slot_of_[{first.name(), 0}]};
  const layers::Layer* last = model_->steps_.back().layer;
  model_->output_refs_ = {{last->name(), 0, 0}};
  model_->output_slots_ = {previous};
  return Status::Ok();
}

Status ModelBuilder::BuildFunctional(const json& config, const std::string& path) {
  model_->name_ = config.value("name", json("model")).is_string()
                      ? config.value("name", json("model")).get<std::string>()
                      : "model";
  std::string list_path = JoinPath(path, "layers");
  auto list = config.find("layers");
  if (list == config.end() || !list->is_array()) {
    return Fail(list_path, "is required and must be a list of layers");
  }
  std::vector<const json*> entries;
  for (size_t i = 0; i < list->size(); ++i) {
    EDL_ASSIGN_OR_RETURN(size_t index, AddLayer((*list)[i], IndexPath(list_path, i)));
    entries.push_back(&(*list)[i]);
    (void)index;
  }
  // Collect every call (inbound node) first, then resolve them in
  // dependency order.
  std::vector<Pending> pending;
  for (size_t i = 0; i < entries.size(); ++i) {
    layers::Layer* layer = model_->layers_[i].get();
    std::string where = Describe(paths_[i], classes_[i], layer->name());
    bool is_input = std::string(layer->class_name()) == "InputLayer";
    const json* nodes =
        entries[i]->contains("inbound_nodes") ? &(*entries[i])["inbound_nodes"] : nullptr;
    if (nodes != nullptr && !nodes->is_null() && !nodes->is_array()) {
      return Fail(where, "inbound_nodes must be a list, got " + ShortJson(*nodes));
    }
    size_t count = nodes == nullptr || nodes->is_null() ? 0 : nodes->size();
    if (is_input) {
      if (count != 0) return Fail(where, "an InputLayer has no inbound_nodes");
      EDL_RETURN_IF_ERROR(AddInput(layer));
      continue;
    }
    if (count == 0) return Fail(where, "inbound_nodes is empty: the layer is never called");
    for (size_t k = 0; k < count; ++k) {
      std::string p = IndexPath(JoinPath(paths_[i], "inbound_nodes"), k) + " (" + classes_[i] +
                      " \"" + layer->name() + "\")";
      EDL_ASSIGN_OR_RETURN(std::vector<TensorRef> refs, ParseNode((*nodes)[k], p));
      pending.push_back({i, static_cast<int>(k), std::move(refs), p});
    }
  }
  SetNodeOffsets(config, pending);
  for (Pending& call : pending) {
    if (auto* nested = dynamic_cast<NestedModel*>(model_->layers_[call.layer].get())) {
      call.node += nested->node_offset();
    }
  }
  while (!pending.empty()) {
    bool progress = false;
    for (size_t j = 0; j < pending.size();) {
      const Pending& call = pending[j];
      std::vector<int> slots;
      for (size_t k = 0; k < call.refs.size(); ++k) {
        const TensorRef& r = call.refs[k];
        if (!slot_of_.count({r.layer, r.node})) break;
        EDL_ASSIGN_OR_RETURN(int slot, SlotOf(r, IndexPath(call.path, k)));
        slots.push_back(slot);
      }
      if (slots.size() != call.refs.size()) {
        ++j;
        continue;
      }
      EDL_RETURN_IF_ERROR(Call(call.layer, call.node, call.refs, slots, call.path));
      pending.erase(pending.begin() + j);
      progress = true;
    }
    if (!progress) {
      // Name one reference that can never be resolved.
      const Pending& call = pending.front();
      for (const TensorRef& r : call.refs) {
        if (slot_of_.count({r.layer, r.node})) continue;
        size_t calls = 0;
        for (const Pending& q : pending) calls += model_->layers_[q.layer]->name() == r.layer;
        return Fail(call.path,
                    "node " + std::to_string(r.node) + " of layer \"" + r.layer + "\" " +
                        (calls == 0 && r.node > 0 ? "does not exist" : "is part of a cycle"));
      }
    }
  }
  EDL_ASSIGN_OR_RETURN(std::vector<TensorRef> ins, ParseEnds(config, "input_layers", path));
  for (size_t i = 0; i < ins.size(); ++i) {
    layers::Layer* layer = model_->layers_[by_name_[ins[i].layer]].get();
    if (std::string(layer->class_name()) != "InputLayer") {
      return Fail(IndexPath(JoinPath(path, "input_layers"), i),
                  "\"" + ins[i].layer + "\" is not an InputLayer");
    }
    auto* input = static_cast<InputLayer*>(layer);
    model_->inputs_.push_back({input->name(), input->shape(), input->dtype()});
    model_->input_slots_.push_back(slot_of_[{input->name(), 0}]);
  }
  for (size_t i = 0; i < model_->layers_.size(); ++i) {
    const layers::Layer& l = *model_->layers_[i];
    bool listed = false;
    for (const ModelInput& in : model_->inputs_) listed |= in.name == l.name();
    if (std::string(l.class_name()) == "InputLayer" && !listed) {
      return Fail(Describe(paths_[i], classes_[i], l.name()),
                  "the InputLayer is not listed in input_layers");
    }
  }
  EDL_ASSIGN_OR_RETURN(model_->output_refs_, ParseEnds(config, "output_layers", path));
  for (size_t i = 0; i < model_->output_refs_.size(); ++i) {
    const TensorRef& r = model_->output_refs_[i];
    const std::string p = IndexPath(JoinPath(path, "output_layers"), i);
    if (!slot_of_.count({r.layer, r.node})) {
      return Fail(
          p, "node " + std::to_string(r.node) + " of layer \"" + r.layer + "\" does not exist");
    }
    EDL_ASSIGN_OR_RETURN(int slot, SlotOf(r, p));
    model_->output_slots_.push_back(slot);
  }
  return Status::Ok();
}

}  // namespace edl::nn::keras
