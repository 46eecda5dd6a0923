// Model::Summary and Model::ToKerasJson: the two ways a model describes
// itself.
#include <algorithm>
#include <cstdio>
#include <map>
#include <nlohmann/json.hpp>
#include <sstream>

#include "nn/keras/model.h"
#include "nn/keras/nested_model.h"
#include "nn/layers/core.h"

namespace edl::nn::keras {
namespace {

using nlohmann::json;

std::string KerasShape(const Shape& s) {
  std::string out = "(None";
  for (int64_t d : s) out += ", " + std::to_string(d);
  return out + ")";
}

std::string Pad(std::string s, size_t width) {
  if (s.size() + 1 > width) return s + " ";
  return s + std::string(width - s.size(), ' ');
}

std::string WithCommas(int64_t n) {
  std::string s = std::to_string(n);
  for (int i = static_cast<int>(s.size()) - 3; i > 0; i -= 3) s.insert(i, ",");
  return s;
}

}  // namespace

std::string Model::Summary() const {
  const bool functional = !sequential_;
  const size_t w0 = 29, w1 = 26, w2 = 11;
  const size_t total_width = functional ? 98 : 65;
  std::ostringstream out;
  out << "Model: \"" << name_ << "\"\n" << std::string(total_width, '_') << "\n";
  out << " " << Pad("Layer (type)", w0 - 1) << Pad("Output Shape", w1) << Pad("Param #", w2)
      << (functional ? "Connected to" : "") << "\n";
  out << std::string(total_width, '=') << "\n";
  int64_t trainable = 0, frozen = 0;
  for (size_t i = 0; i < layers_.size(); ++i) {
    const layers::Layer& l = *layers_[i];
    bool is_input = std::string(l.class_name()) == "InputLayer";
    if (is_input && !functional) continue;
    std::vector<const Step*> calls;
    for (const Step& s : steps_) {
      if (s.layer == &l) calls.push_back(&s);
    }
    std::string shape;
    if (is_input) {
      shape = KerasShape(static_cast<const layers::InputLayer&>(l).shape());
    } else if (!calls.empty()) {
      shape = KerasShape(slot_shapes_[calls[0]->output_slot]);
      for (const Step* c : calls) {
        if (slot_shapes_[c->output_slot] != slot_shapes_[calls[0]->output_slot]) shape = "multiple";
      }
    }
    int64_t params = 0;
    for (Parameter* p : const_cast<layers::Layer&>(l).weights()) {
      params += p->value.numel();
      (p->trainable ? trainable : frozen) += p->value.numel();
    }
    std::vector<std::string> connected;
    for (const Step* c : calls) {
      for (const TensorRef& r : c->inbound) {
        connected.push_back(r.layer + "[" + std::to_string(r.node) + "][" +
                            std::to_string(r.tensor) + "]");
      }
    }
    out << " " << Pad(l.name() + " (" + l.class_name() + ")", w0 - 1) << Pad(shape, w1)
        << Pad(WithCommas(params), w2);
    if (functional) out << (connected.empty() ? "[]" : connected[0]);
    out << "\n";
    for (size_t k = 1; k < connected.size(); ++k) {
      out << std::string(w0 + w1 + w2, ' ') << connected[k] << "\n";
    }
  }
  out << std::string(total_width, '=') << "\n";
  out << "Total params: " << WithCommas(trainable + frozen) << "\n";
  out << "Trainable params: " << WithCommas(trainable) << "\n";
  out << "Non-trainable params: " << WithCommas(frozen) << "\n";
  out << std::string(total_width, '_') << "\n";
  return out.str();
}

std::string Model::ToKerasJson() const { return KerasJson().dump(); }

json Model::KerasJson() const {
  // References to a nested model's calls: exported, it declares its inputs
  // and so keeps node 0 for itself (nn/keras/nested_model.h).
  std::map<std::string, int> shift;
  for (const auto& l : layers_) {
    if (const auto* nested = dynamic_cast<const NestedModel*>(l.get())) {
      shift[nested->name()] = 1 - nested->node_offset();
    }
  }
  auto node_of = [&shift](const TensorRef& r) {
    auto it = shift.find(r.layer);
    return r.node + (it == shift.end() ? 0 : it->second);
  };
  json layers = json::array();
  for (const auto& l : layers_) {
    json entry = {{"class_name", l->class_name()}, {"config", l->Config()}};
    if (sequential_) {
      layers.push_back(entry);
      continue;
    }
    entry["name"] = l->name();
    std::vector<const Step*> calls;
    for (const Step& s : steps_) {
      if (s.layer == l.get()) calls.push_back(&s);
    }
    std::sort(calls.begin(), calls.end(),
              [](const Step* a, const Step* b) { return a->node < b->node; });
    json nodes = json::array();
    for (const Step* c : calls) {
      json node = json::array();
      for (const TensorRef& r : c->inbound) {
        node.push_back({r.layer, node_of(r), r.tensor, json::object()});
      }
      nodes.push_back(node);
    }
    entry["inbound_nodes"] = nodes;
    layers.push_back(entry);
  }
  json config = {{"name", name_}, {"layers", layers}};
  if (!sequential_) {
    json ins = json::array(), outs = json::array();
    for (const ModelInput& in : inputs_) ins.push_back({in.name, 0, 0});
    for (const TensorRef& r : output_refs_) outs.push_back({r.layer, node_of(r), r.tensor});
    config["input_layers"] = ins;
    config["output_layers"] = outs;
  }
  json model = {{"class_name", sequential_ ? "Sequential" : "Model"},
                {"config", config},
                {"keras_version", "edl-0.1.0"},
                {"backend", "tensor_flow.js"}};
  return model;
}

}  // namespace edl::nn::keras
