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

// {"class_name": ..., "config": {...}} or an error naming `field`.
Result<std::pair<std::string, const nlohmann::json*>> ReadClassAndConfig(const nlohmann::json& v,
                                                                         const std::string& field) {
  if (!v.is_object() || !v.contains("class_name") || !v["class_name"].is_string() ||
      !v.contains("config") || !v["config"].is_object()) {
    return InvalidArgument(field + " must be {\"class_name\": ..., \"config\": {...}}, got " +
                           Describe(v));
  }
  return std::make_pair(v["class_name"].get<std::string>(), &v["config"]);
}

// config's "name" when it is a string, else `fallback`.
std::string NameIn(const nlohmann::json& config, const std::string& fallback) {
  const auto n = config.find("name");
  return n != config.end() && n->is_string() ? n->get<std::string>() : fallback;
}

// Reads the wrapped layer: {"class_name": ..., "config": {...}} (Keras 3's
// extra keys ignored).
Result<Inner> ReadInner(const nlohmann::json& config) {
  const auto it = config.find("layer");
  if (it == config.end()) {
    return InvalidArgument("layer is required: {\"class_name\": ..., \"config\": {...}}");
  }
  auto read = ReadClassAndConfig(*it, "layer");
  if (!read.ok()) {
    return InvalidArgument("layer is required: {\"class_name\": ..., \"config\": {...}}");
  }
  Inner inner;
  inner.cls = read->first;
  inner.config = read->second;
  inner.name = NameIn(*inner.config, inner.cls);
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
  const std::string m = mode == nullptr     ? "null"
                        : mode->is_string() ? mode->get<std::string>()
                                            : "?";
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
    case Merge::kConcat: out.push_back(fn::Concat({f[0], b[0]}, -1)); break;
    case Merge::kSum: out.push_back(fn::Add(f[0], b[0])); break;
    case Merge::kMul: out.push_back(fn::Mul(f[0], b[0])); break;
    case Merge::kAve: out.push_back(fn::Affine(fn::Add(f[0], b[0]), 0.5f)); break;
    case Merge::kNone: out = {f[0], b[0]}; break;
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

// ---- RNN ----------------------------------------------------------------------

namespace {

// The layer class computing a cell class, or "" for an unknown cell.
std::string LayerForCell(const std::string& cell) {
  if (cell == "SimpleRNNCell") return "SimpleRNN";
  if (cell == "GRUCell") return "GRU";
  if (cell == "LSTMCell") return "LSTM";
  return "";
}

// Keys a recurrent layer's config has beyond its cell's.
constexpr const char* kLayerOnlyKeys[] = {"return_sequences", "return_state", "go_backwards",
                                          "stateful",         "unroll",       "trainable"};

}  // namespace

Result<std::unique_ptr<Layer>> RnnOfCells::FromConfig(const std::string& name,
                                                      const nlohmann::json& config) {
  std::unique_ptr<RnnOfCells> l(new RnnOfCells(name));
  ConfigReader r(config);
  l->return_sequences_ = r.Bool("return_sequences", false);
  l->return_state_ = r.Bool("return_state", false);
  l->go_backwards_ = r.Bool("go_backwards", false);
  if (r.Bool("stateful", false))
    r.Fail("stateful", "true is not supported (state kept across batches)");
  if (r.Bool("time_major", false)) r.Fail("time_major", "true is not supported");
  r.ExpectNull("constants");
  EDL_RETURN_IF_ERROR(r.status());
  const auto it = config.find("cell");
  if (it == config.end()) return InvalidArgument("cell is required");
  EDL_ASSIGN_OR_RETURN(auto cell, ReadClassAndConfig(*it, "cell"));
  std::vector<std::pair<std::string, const nlohmann::json*>> cells;
  if (cell.first == "StackedRNNCells") {
    l->stacked_ = true;
    l->stack_name_ = NameIn(*cell.second, "stacked_rnn_cells");
    const auto list = cell.second->find("cells");
    if (list == cell.second->end() || !list->is_array() || list->empty()) {
      return InvalidArgument("cell.config.cells must be a non-empty list of cells");
    }
    for (size_t i = 0; i < list->size(); ++i) {
      EDL_ASSIGN_OR_RETURN(
          auto c, ReadClassAndConfig((*list)[i], "cell.config.cells[" + std::to_string(i) + "]"));
      cells.push_back(c);
    }
  } else {
    cells.push_back(cell);
  }
  for (size_t i = 0; i < cells.size(); ++i) {
    const std::string& cls = cells[i].first;
    const std::string layer_class = LayerForCell(cls);
    const std::string where = l->stacked_ ? "cell.config.cells[" + std::to_string(i) + "]" : "cell";
    if (layer_class.empty()) {
      return InvalidArgument(where + ": " + cls +
                             " is not supported (SimpleRNNCell, GRUCell, LSTMCell or "
                             "StackedRNNCells of them)");
    }
    nlohmann::json c = *cells[i].second;
    for (const char* key : kLayerOnlyKeys) c.erase(key);
    const bool last = i + 1 == cells.size();
    c["return_sequences"] = last ? l->return_sequences_ : true;
    c["return_state"] = l->return_state_;
    c["go_backwards"] = i == 0 && l->go_backwards_;
    const std::string layer_name = l->stacked_ ? name + "/RNNCell_" + std::to_string(i) : name;
    auto made = CreateLayer(layer_class, layer_name, c);
    if (!made.ok()) return InvalidArgument(where + ": " + made.status().message());
    CellLayer cl;
    cl.cls = cls;
    cl.name = NameIn(*cells[i].second, cls);
    cl.rnn = dynamic_cast<Recurrent*>(made->get());
    cl.layer = std::move(*made);
    l->cells_.push_back(std::move(cl));
  }
  return std::unique_ptr<Layer>(std::move(l));
}

Result<std::vector<Shape>> RnnOfCells::OutputShapes(const std::vector<Shape>& in) {
  std::vector<Shape> shapes = in;
  std::vector<Shape> states;
  for (CellLayer& c : cells_) {
    auto out = c.rnn->OutputShapesFor(shapes);
    if (!out.ok()) return Error(out.status().message());
    states.insert(states.end(), out->begin() + 1, out->end());
    shapes = {out->front()};
  }
  shapes.insert(shapes.end(), states.begin(), states.end());
  return shapes;
}

Status RnnOfCells::CreateWeights(const std::vector<Shape>& in, std::mt19937_64& rng) {
  std::vector<Shape> shapes = in;
  for (CellLayer& c : cells_) {
    auto built = c.layer->Build(shapes, rng);
    if (!built.ok()) return Error(built.status().message());
    shapes = {c.rnn->OutputShapesFor(shapes).value().front()};
  }
  if (!trainable()) set_trainable(false);
  return Status::Ok();
}

std::vector<Var> RnnOfCells::Call(const std::vector<Var>& inputs, const CallContext& ctx) {
  Tensor mask;
  return CallWithMasks(inputs, {}, ctx, &mask);
}

std::vector<Var> RnnOfCells::CallWithMasks(const std::vector<Var>& inputs,
                                           const std::vector<Tensor>& masks, const CallContext& ctx,
                                           Tensor* mask) {
  const Tensor in = masks.empty() ? Tensor() : masks[0];
  *mask = return_sequences_ ? in : Tensor();
  std::vector<Var> x = inputs;
  std::vector<Var> states;
  for (CellLayer& c : cells_) {
    std::vector<Var> out = c.rnn->CallMasked(x, in, ctx);
    states.insert(states.end(), out.begin() + 1, out.end());
    x = {out.front()};
  }
  x.insert(x.end(), states.begin(), states.end());
  return x;
}

std::vector<Parameter*> RnnOfCells::weights() {
  std::vector<Parameter*> out;
  for (bool trainable : {true, false}) {
    for (CellLayer& c : cells_) {
      for (Parameter* p : c.layer->weights()) {
        if (p->trainable == trainable) out.push_back(p);
      }
    }
  }
  return out;
}

Var RnnOfCells::RegularizationLoss() {
  Var total;
  for (CellLayer& c : cells_) {
    Var v = c.layer->RegularizationLoss();
    if (v.defined()) total = total.defined() ? fn::Add(total, v) : v;
  }
  return total;
}

void RnnOfCells::set_trainable(bool trainable) {
  Layer::set_trainable(trainable);
  for (CellLayer& c : cells_) c.layer->set_trainable(trainable);
}

nlohmann::json RnnOfCells::Config() const {
  nlohmann::json c = Layer::Config();
  c["return_sequences"] = return_sequences_;
  c["return_state"] = return_state_;
  c["go_backwards"] = go_backwards_;
  c["stateful"] = false;
  c["unroll"] = false;
  std::vector<nlohmann::json> cells;
  for (const CellLayer& cl : cells_) {
    nlohmann::json cc = cl.layer->Config();
    for (const char* key : kLayerOnlyKeys) cc.erase(key);
    cc["name"] = cl.name;
    cells.push_back({{"class_name", cl.cls}, {"config", cc}});
  }
  if (stacked_) {
    c["cell"] = {{"class_name", "StackedRNNCells"},
                 {"config", {{"name", stack_name_}, {"cells", cells}}}};
  } else {
    c["cell"] = cells[0];
  }
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
