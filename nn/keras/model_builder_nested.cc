// ModelBuilder's part for models nested as layers (nn/keras/nested_model.h):
// creating them, the node index of their first call, and the check that
// their weights' names do not collide with the outer model's.
#include "nn/keras/model_builder.h"
#include "nn/keras/nested_model.h"
#include "nn/layers/config_reader.h"

namespace edl::nn::keras {

using nlohmann::json;

Result<std::unique_ptr<layers::Layer>> ModelBuilder::CreateNested(const json& entry,
                                                                  const std::string& name,
                                                                  const std::string& path) {
  // Its own seed, from the outer one and its name (FNV-1a).
  uint64_t seed = model_->seed_ ^ 0xcbf29ce484222325ull;
  for (unsigned char c : name) seed = (seed ^ c) * 0x100000001b3ull;
  EDL_ASSIGN_OR_RETURN(std::unique_ptr<NestedModel> nested,
                       NestedModel::Create(name, entry, origin_, path, seed));
  layers::ConfigReader r(entry["config"]);
  const bool trainable = r.Bool("trainable", true) && entry.value("trainable", json(true)) != false;
  if (!r.status().ok()) {
    return Fail(Describe(path, entry.value("class_name", ""), name), r.status().message());
  }
  if (!trainable) nested->set_trainable(false);
  return std::unique_ptr<layers::Layer>(std::move(nested));
}

void ModelBuilder::SetNodeOffsets(const json& config, const std::vector<Pending>& pending) {
  // References to each nested model: from calls and from output_layers.
  std::map<std::string, std::vector<int>> refs;
  for (const Pending& call : pending) {
    for (const TensorRef& r : call.refs) refs[r.layer].push_back(r.node);
  }
  const json outs = config.value("output_layers", json());
  if (outs.is_array()) {
    for (const json& o : outs) {
      const json& ref = o.is_array() && !o.empty() && o[0].is_array() ? o[0] : o;
      if (ref.is_array() && ref.size() >= 2 && ref[0].is_string() && ref[1].is_number_integer()) {
        refs[ref[0].get<std::string>()].push_back(ref[1].get<int>());
      }
    }
  }
  for (auto& layer : model_->layers_) {
    auto* nested = dynamic_cast<NestedModel*>(layer.get());
    if (nested == nullptr) continue;
    int calls = 0;
    for (const Pending& call : pending) calls += model_->layers_[call.layer].get() == nested;
    const std::vector<int>& seen = refs[nested->name()];
    int offset = nested->class_name() != std::string("Sequential") || nested->model() != nullptr;
    for (int node : seen) {
      if (node == calls) offset = 1;
    }
    for (int node : seen) {
      if (node == 0) offset = 0;
    }
    nested->set_node_offset(offset);
  }
}

Status ModelBuilder::CheckUniqueWeights() const {
  std::map<std::string, std::string> owner;
  for (const auto& l : model_->layers_) {
    for (Parameter* p : l->weights()) {
      auto [it, fresh] = owner.emplace(p->name, l->name());
      if (fresh) continue;
      return Fail(json_path_, "weight \"" + p->name + "\" is made twice, by layer \"" + it->second +
                                  "\" and by layer \"" + l->name() +
                                  "\"; the layers of a nested model keep their own names "
                                  "(as TF.js names their weights), so rename one of them");
    }
  }
  return Status::Ok();
}

}  // namespace edl::nn::keras
