// ModelBuilder's reading of a functional model's references: a tensor
// reference ([layer, node, tensor] or Keras 3's __keras_tensor__), an
// inbound node (Keras 2 / TF.js list or Keras 3 {"args", "kwargs"}, tensors
// passed by keyword included) and input_layers / output_layers.
#include "nn/keras/json_text.h"
#include "nn/keras/model_builder.h"
#include "nn/layers/config_reader.h"

namespace edl::nn::keras {

using nlohmann::json;

namespace {

std::string ShortJson(const json& j) { return layers::Describe(j); }

}  // namespace

Result<Model::TensorRef> ModelBuilder::ParseRef(const json& ref, const std::string& path) const {
  const json* history = &ref;
  if (ref.is_object()) {  // Keras 3: {"class_name": "__keras_tensor__", ...}
    if (ref.value("class_name", json()) != "__keras_tensor__" || !ref.contains("config") ||
        !ref["config"].is_object() || !ref["config"].contains("keras_history")) {
      return Fail(path, "expected a tensor reference, got " + ShortJson(ref));
    }
    history = &ref["config"]["keras_history"];
  }
  const json& h = *history;
  if (!h.is_array() || h.size() < 3 || !h[0].is_string() || !h[1].is_number_integer() ||
      !h[2].is_number_integer()) {
    return Fail(path, "expected [layer_name, node_index, tensor_index], got " + ShortJson(h));
  }
  TensorRef r{h[0].get<std::string>(), h[1].get<int>(), h[2].get<int>()};
  if (!by_name_.count(r.layer)) {
    return Fail(path, "refers to unknown layer \"" + r.layer + "\"");
  }
  if (r.tensor < 0) return Fail(path, "tensor_index must be >= 0");
  if (r.node < 0) return Fail(path, "node_index must be >= 0");
  return r;
}

Result<std::vector<Model::TensorRef>> ModelBuilder::ParseNode(const json& node,
                                                              const std::string& path) const {
  std::vector<TensorRef> refs;
  if (node.is_array()) {  // Keras 2 / TF.js: a list of references
    for (size_t i = 0; i < node.size(); ++i) {
      EDL_ASSIGN_OR_RETURN(TensorRef r, ParseRef(node[i], IndexPath(path, i)));
      refs.push_back(r);
    }
  } else if (node.is_object() && node.contains("args")) {  // Keras 3
    std::vector<std::pair<const json*, std::string>> todo{{&node["args"], JoinPath(path, "args")}};
    while (!todo.empty()) {
      auto [j, p] = todo.front();
      todo.erase(todo.begin());
      if (j->is_object() && j->value("class_name", json()) == "__keras_tensor__") {
        EDL_ASSIGN_OR_RETURN(TensorRef r, ParseRef(*j, p));
        refs.push_back(r);
      } else if (j->is_array()) {
        for (size_t i = j->size(); i-- > 0;) {
          todo.insert(todo.begin(), {&(*j)[i], IndexPath(p, i)});
        }
      }
    }
  } else {
    return Fail(path,
                "an inbound node must be a list of [layer, node, tensor] "
                "references or {\"args\": [...]}, got " +
                    ShortJson(node));
  }
  if (refs.empty()) return Fail(path, "an inbound node must reference at least one tensor");
  // Tensors passed by keyword (MultiHeadAttention's value, key and
  // attention_mask): Keras 2 keeps them in the first reference's fourth
  // entry, Keras 3 in "kwargs". They follow the positional ones in that
  // order, key defaulting to value when a mask follows.
  const json* kwargs = nullptr;
  std::string kwargs_path;
  if (node.is_array() && node[0].is_array() && node[0].size() > 3 && node[0][3].is_object()) {
    kwargs = &node[0][3];
    kwargs_path = IndexPath(IndexPath(path, 0), 3);
  } else if (node.is_object() && node.contains("kwargs") && node["kwargs"].is_object()) {
    kwargs = &node["kwargs"];
    kwargs_path = JoinPath(path, "kwargs");
  }
  if (kwargs != nullptr) {
    std::map<std::string, TensorRef> named;
    for (const auto& [key, value] : kwargs->items()) {
      const std::string p = JoinPath(kwargs_path, key);
      const bool tensor = value.is_array() || (value.is_object() && value.contains("class_name"));
      if (key == "value" || key == "key" || key == "attention_mask") {
        if (value.is_null()) continue;
        if (!tensor) return Fail(p, "must be a tensor reference, got " + ShortJson(value));
        EDL_ASSIGN_OR_RETURN(named[key], ParseRef(value, p));
      } else if (key == "training" || key == "mask") {
        // training: decided by edl; mask: Keras masking, carried by edl itself.
      } else if (key == "use_causal_mask" || key == "return_attention_scores") {
        if (!value.is_null() && value != false) {
          return Fail(p, "is not supported; pass an explicit attention_mask instead");
        }
      } else if (tensor) {
        return Fail(p,
                    "a tensor passed by keyword is only understood for value, key and "
                    "attention_mask");
      }
    }
    for (const char* key : {"value", "key", "attention_mask"}) {
      auto it = named.find(key);
      if (it != named.end()) {
        refs.push_back(it->second);
      } else if (std::string(key) == "key" && named.count("attention_mask") && refs.size() == 2) {
        refs.push_back(refs[1]);  // key defaults to value
      }
    }
  }
  return refs;
}

Result<std::vector<Model::TensorRef>> ModelBuilder::ParseEnds(const json& config, const char* key,
                                                              const std::string& path) const {
  std::string p = JoinPath(path, key);
  auto it = config.find(key);
  if (it == config.end() || !it->is_array() || it->empty()) {
    return Fail(p, "is required: a list of [layer_name, node_index, tensor_index]");
  }
  std::vector<TensorRef> refs;
  if ((*it)[0].is_string()) {  // Keras 3 writes a single end unwrapped
    EDL_ASSIGN_OR_RETURN(TensorRef r, ParseRef(*it, p));
    refs.push_back(r);
    return refs;
  }
  for (size_t i = 0; i < it->size(); ++i) {
    EDL_ASSIGN_OR_RETURN(TensorRef r, ParseRef((*it)[i], IndexPath(p, i)));
    refs.push_back(r);
  }
  return refs;
}

}  // namespace edl::nn::keras
