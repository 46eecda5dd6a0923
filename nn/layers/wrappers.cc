#include "nn/layers/wrappers.h"

#include "nn/functional.h"
#include "nn/layers/config_reader.h"
#include "nn/layers/layer_factory.h"

namespace edl::nn::layers {
namespace {

struct Inner {
  std::string cls, name;
  const nlohmann::json* config = nullptr;
};

// Reads the wrapped layer: {"class_name": ..., "config": {...}} (Keras 3's
// extra keys ignored).
Result<Inner> ReadInner(const nlohmann::json& config) {
  const auto it = config.find("layer");
  if (it == config.end() || !it->is_object() || !it->contains("class_name") ||
      !(*it)["class_name"].is_string() || !it->contains("config") ||
      !(*it)["config"].is_object()) {
    return InvalidArgument("layer is required: {\"class_name\": ..., \"config\": {...}}");
  }
  Inner inner;
  inner.cls = (*it)["class_name"].get<std::string>();
  inner.config = &(*it)["config"];
  const auto n = inner.config->find("name");
  inner.name = n != inner.config->end() && n->is_string() ? n->get<std::string>() : inner.cls;
  return inner;
}

// "layer.<message>" for errors of the wrapped layer's config.
Status InnerError(const Status& s) { return InvalidArgument("layer: " + s.message()); }

nlohmann::json InnerConfig(const Layer& l, const std::string& cls, const std::string& name) {
  nlohmann::json c = l.Config();
  c["name"] = name;
  return {{"class_name", cls}, {"config", c}};
}

}  // namespace

// ---- Bidirectional ----------------------------------------------------------

Result<std::unique_ptr<Layer>> Bidirectional::FromConfig(const std::string& name,
                                                         const nlohmann::json& config) {
  std::unique_ptr<Bidirectional> l(new Bidirectional(name));
  ConfigReader r(config);
  const nlohmann::json* mode = r.Get("merge_mode");
  const std::string m = mode == nullptr ? "null" : mode->is_string() ? mode->get<std::string>() : "?";
  if (mode == nullptr && !config.contains("merge_mode")) {
    l->merge_ = Merge::kConcat;  // Keras' default
  } else if (m == "concat") {
    l->merge_ = Merge::kConcat;
  } else if (m == "sum") {
    l->merge_ = Merge::kSum;
  } else if (m == "mul") {
    l->merge_ = Merge::kMul;
  } else if (m == "ave") {
    l->merge_ = Merge::kAve;
  } else if (m == "null") {
    l->merge_ = Merge::kNone;
  } else {
    r.Fail("merge_mode", "must be concat, sum, mul, ave or null, got " + Describe(*mode));
  }
  r.ExpectNull("backward_layer");
  EDL_RETURN_IF_ERROR(r.status());
  EDL_ASSIGN_OR_RETURN(Inner inner, ReadInner(config));
  l->inner_class_ = inner.cls;
  l->inner_name_ = inner.name;
  for (bool backward : {false, true}) {
    auto made = CreateLayer(inner.cls, name + (backward ? "/backward_" : "/forward_") + inner.name,
                            *inner.config);
    if (!made.ok()) return InnerError(made.status());
    auto* rnn = dynamic_cast<Recurrent*>(made->get());
    if (rnn == nullptr) {
      return InvalidArgument("layer must be SimpleRNN, LSTM or GRU, got " + inner.cls);
    }
    rnn->set_zero_output_for_mask(rnn->return_sequences());
    if (backward) {
      rnn->set_go_backwards(!rnn->go_backwards());
      l->backward_ = rnn;
      l->backward_layer_ = std::move(*made);
    } else {
      l->forward_ = rnn;
      l->forward_layer_ = std::move(*made);
    }
  }
  return std::unique_ptr<Layer>(std::move(l));
}

Result<std::vector<Shape>> Bidirectional::OutputShapes(const std::vector<Shape>& in) {
  auto shapes = forward_->OutputShapesFor(in);
  if (!shapes.ok()) return Error(shapes.status().message());
  std::vector<Shape> out{shapes->front()};
  if (merge_ == Merge::kConcat) out[0].back() *= 2;
  if (merge_ == Merge::kNone) out.push_back(out[0]);
  for (int k = 0; k < 2 && forward_->return_state(); ++k) {
    for (int s = 0; s < forward_->num_states(); ++s) out.push_back({forward_->units()});
  }
  return out;
}

Status Bidirectional::CreateWeights(const std::vector<Shape>& in, std::mt19937_64& rng) {
  for (Layer* l : {forward_layer_.get(), backward_layer_.get()}) {
    auto built = l->Build(in, rng);
    if (!built.ok()) return Error(built.status().message());
  }
  if (!trainable()) set_trainable(false);
  return Status::Ok();
}

std::vector<Var> Bidirectional::Call(const std::vector<Var>& inputs, const CallContext& ctx) {
  Tensor mask;
  return CallWithMasks(inputs, {}, ctx, &mask);
}

std::vector<Var> Bidirectional::CallWithMasks(const std::vector<Var>& inputs,
                                              const std::vector<Tensor>& masks,
                                              const CallContext& ctx, Tensor* mask) {
  const Tensor in = masks.empty() ? Tensor() : masks[0];
  *mask = forward_->return_sequences() ? in : Tensor();
  std::vector<Var> f = forward_->CallMasked(inputs, in, ctx);
  std::vector<Var> b = backward_->CallMasked(inputs, in, ctx);
  // The backward copy returns its steps last first: put them in time order.
  if (backward_->return_sequences()) b[0] = fn::Reverse(b[0], 1);
  std::vector<Var> out;
  switch (merge_) {
    case Merge::kConcat:
      out.push_back(fn::Concat({f[0], b[0]}, -1));
      break;
    case Merge::kSum:
      out.push_back(fn::Add(f[0], b[0]));
      break;
    case Merge::kMul:
      out.push_back(fn::Mul(f[0], b[0]));
      break;
    case Merge::kAve:
      out.push_back(fn::Affine(fn::Add(f[0], b[0]), 0.5f));
      break;
    case Merge::kNone:
      out = {f[0], b[0]};
      break;
  }
  out.insert(out.end(), f.begin() + 1, f.end());
  out.insert(out.end(), b.begin() + 1, b.end());
  return out;
}

std::vector<Parameter*> Bidirectional::weights() {
  std::vector<Parameter*> out;
  for (Layer* l : {forward_layer_.get(), backward_layer_.get()}) {
    for (Parameter* p : l->weights()) {
      if (p->trainable) out.push_back(p);
    }
  }
  for (Layer* l : {forward_layer_.get(), backward_layer_.get()}) {
    for (Parameter* p : l->weights()) {
      if (!p->trainable) out.push_back(p);
    }
  }
  return out;
}

Var Bidirectional::RegularizationLoss() {
  Var f = forward_->RegularizationLoss(), b = backward_->RegularizationLoss();
  if (!f.defined()) return b;
  return b.defined() ? fn::Add(f, b) : f;
}

void Bidirectional::set_trainable(bool trainable) {
  Layer::set_trainable(trainable);
  forward_->set_trainable(trainable);
  backward_->set_trainable(trainable);
}

nlohmann::json Bidirectional::Config() const {
  nlohmann::json c = Layer::Config();
  static const char* const kModes[] = {"concat", "sum", "mul", "ave"};
  c["merge_mode"] = merge_ == Merge::kNone ? nlohmann::json() : nlohmann::json(kModes[int(merge_)]);
  c["layer"] = InnerConfig(*forward_, inner_class_, inner_name_);
  return c;
}

// ---- TimeDistributed --------------------------------------------------------

Result<std::unique_ptr<Layer>> TimeDistributed::FromConfig(const std::string& name,
                                                           const nlohmann::json& config) {
  std::unique_ptr<TimeDistributed> l(new TimeDistributed(name));
  EDL_ASSIGN_OR_RETURN(Inner inner, ReadInner(config));
  l->inner_class_ = inner.cls;
  l->inner_name_ = inner.name;
  // The inner layer takes the wrapper's name: its weights are "<name>/kernel".
  auto made = CreateLayer(inner.cls, name, *inner.config);
  if (!made.ok()) return InnerError(made.status());
  l->inner_ = std::move(*made);
  return std::unique_ptr<Layer>(std::move(l));
}

Result<std::vector<Shape>> TimeDistributed::OutputShapes(const std::vector<Shape>& in) {
  EDL_RETURN_IF_ERROR(ExpectInputs(in, 1));
  if (in[0].size() < 2) {
    return Error("expects input of rank >= 2 [steps, ...], got " + tensor::ShapeString(in[0]));
  }
  const Shape step(in[0].begin() + 1, in[0].end());
  auto shapes = inner_->OutputShapesFor({step});
  if (!shapes.ok()) return Error(shapes.status().message());
  if (shapes->size() != 1) return Error("the wrapped layer must have one output");
  Shape out{in[0][0]};
  out.insert(out.end(), shapes->front().begin(), shapes->front().end());
  return std::vector<Shape>{out};
}

Status TimeDistributed::CreateWeights(const std::vector<Shape>& in, std::mt19937_64& rng) {
  const Shape step(in[0].begin() + 1, in[0].end());
  auto built = inner_->Build({step}, rng);
  if (!built.ok()) return Error(built.status().message());
  step_out_ = built->front();
  if (!trainable()) set_trainable(false);
  return Status::Ok();
}

std::vector<Var> TimeDistributed::Call(const std::vector<Var>& inputs, const CallContext& ctx) {
  const Shape& shape = inputs[0].shape();
  Shape folded{shape[0] * shape[1]};
  folded.insert(folded.end(), shape.begin() + 2, shape.end());
  Var y = inner_->Call({fn::Reshape(inputs[0], folded)}, ctx).at(0);
  Shape out{shape[0], shape[1]};
  out.insert(out.end(), step_out_.begin(), step_out_.end());
  return {fn::Reshape(y, out)};
}

void TimeDistributed::set_trainable(bool trainable) {
  Layer::set_trainable(trainable);
  inner_->set_trainable(trainable);
}

nlohmann::json TimeDistributed::Config() const {
  nlohmann::json c = Layer::Config();
  c["layer"] = InnerConfig(*inner_, inner_class_, inner_name_);
  return c;
}

}  // namespace edl::nn::layers
