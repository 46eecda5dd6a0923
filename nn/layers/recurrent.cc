#include "nn/layers/recurrent.h"

#include "nn/functional.h"
#include "nn/functional_rnn.h"

namespace edl::nn::layers {
namespace {

const char* CellName(Recurrent::Cell cell) {
  switch (cell) {
    case Recurrent::Cell::kSimpleRNN: return "SimpleRNN";
    case Recurrent::Cell::kLSTM: return "LSTM";
    case Recurrent::Cell::kGRU: return "GRU";
  }
  return "?";
}

// An inverted-dropout mask of `shape` on `device`: 0 with probability rate,
// else 1 / (1 - rate).
Tensor DropoutMask(const Shape& shape, float rate, std::mt19937_64& rng, tensor::Device device) {
  Tensor m = Tensor::Empty(shape);
  std::bernoulli_distribution keep(1.0 - rate);
  const float scale = 1.f / (1.f - rate);
  for (int64_t i = 0; i < m.numel(); ++i) m.f32()[i] = keep(rng) ? scale : 0.f;
  return m.On(device);
}

// new where the mask is 1, old where it is 0 (mask [N, 1]).
Var Blend(const Var& mask, const Var& fresh, const Var& old) {
  return fn::Add(old, fn::Mul(mask, fn::Sub(fresh, old)));
}

tensor::RnnCell PrimitiveCell(Recurrent::Cell cell, bool reset_after) {
  using tensor::RnnCell;
  using Cell = Recurrent::Cell;
  switch (cell) {
    case Cell::kLSTM: return RnnCell::kLSTM;
    case Cell::kGRU: return reset_after ? RnnCell::kGRUResetAfter : RnnCell::kGRU;
    case Cell::kSimpleRNN: break;
  }
  return RnnCell::kSimpleRNN;
}

}  // namespace

const char* Recurrent::class_name() const { return CellName(cell_); }

int Recurrent::gates() const { return cell_ == Cell::kLSTM ? 4 : cell_ == Cell::kGRU ? 3 : 1; }

Result<std::unique_ptr<Layer>> Recurrent::FromConfig(Cell cell, const std::string& name,
                                                     const nlohmann::json& config) {
  std::unique_ptr<Recurrent> l(new Recurrent(name));
  l->cell_ = cell;
  ConfigReader r(config);
  l->units_ = r.RequiredInt("units");
  if (r.status().ok() && l->units_ <= 0) r.Fail("units", "must be positive");
  EDL_ASSIGN_OR_RETURN(l->activation_, ParseActivation(r.String("activation", "tanh")));
  if (cell != Cell::kSimpleRNN) {
    EDL_ASSIGN_OR_RETURN(l->recurrent_activation_,
                         ParseActivation(r.String("recurrent_activation", "sigmoid")));
  }
  l->use_bias_ = r.Bool("use_bias", true);
  l->kernel_init_ = ReadInitializer(r, "kernel_initializer", "GlorotUniform");
  l->recurrent_init_ = ReadInitializer(r, "recurrent_initializer", "Orthogonal");
  l->bias_init_ = ReadInitializer(r, "bias_initializer", "Zeros");
  if (cell == Cell::kLSTM) l->unit_forget_bias_ = r.Bool("unit_forget_bias", true);
  // Keras 2's default is true; TF.js only has false (and writes it).
  if (cell == Cell::kGRU) l->reset_after_ = r.Bool("reset_after", true);
  l->kernel_reg_ = ReadRegularizer(r, "kernel_regularizer");
  l->recurrent_reg_ = ReadRegularizer(r, "recurrent_regularizer");
  l->bias_reg_ = ReadRegularizer(r, "bias_regularizer");
  r.ExpectNull("activity_regularizer");
  r.ExpectNull("kernel_constraint");
  r.ExpectNull("recurrent_constraint");
  r.ExpectNull("bias_constraint");
  l->dropout_ = r.Float("dropout", 0.f);
  l->recurrent_dropout_ = r.Float("recurrent_dropout", 0.f);
  for (auto [field, rate] : {std::pair<const char*, float>{"dropout", l->dropout_},
                             {"recurrent_dropout", l->recurrent_dropout_}}) {
    if (r.status().ok() && !(rate >= 0.f && rate < 1.f)) {
      r.Fail(field, "must be in [0, 1), got " + std::to_string(rate));
    }
  }
  l->return_sequences_ = r.Bool("return_sequences", false);
  l->return_state_ = r.Bool("return_state", false);
  l->go_backwards_ = r.Bool("go_backwards", false);
  if (r.Bool("stateful", false)) {
    r.Fail("stateful", "true is not supported (state carried across batches); use false");
  }
  if (r.Bool("time_major", false)) r.Fail("time_major", "true is not supported; use false");
  // implementation 1 draws a separate dropout mask per gate; 2 (and TF.js)
  // one mask. Without dropout both compute the same.
  const int64_t implementation = r.Int("implementation", 2);
  if (r.status().ok() && implementation == 1 && cell != Cell::kSimpleRNN &&
      (l->dropout_ > 0.f || l->recurrent_dropout_ > 0.f)) {
    r.Fail("implementation", "1 with dropout (a mask per gate) is not supported; use 2");
  }
  EDL_RETURN_IF_ERROR(r.status());
  return std::unique_ptr<Layer>(std::move(l));
}

Result<std::vector<Shape>> Recurrent::OutputShapes(const std::vector<Shape>& in) {
  EDL_RETURN_IF_ERROR(ExpectInputs(in, 1));
  if (in[0].size() != 2) {
    return Error("expects rank-2 input [timesteps, features], got " + tensor::ShapeString(in[0]));
  }
  if (in_dim_ >= 0 && in[0][1] != in_dim_) {
    return Error("was built for " + std::to_string(in_dim_) + " input features, got " +
                 tensor::ShapeString(in[0]));
  }
  std::vector<Shape> out;
  out.push_back(return_sequences_ ? Shape{in[0][0], units_} : Shape{units_});
  if (return_state_) {
    for (int i = 0; i < num_states(); ++i) out.push_back({units_});
  }
  return out;
}

Status Recurrent::CreateWeights(const std::vector<Shape>& in, std::mt19937_64& rng) {
  in_dim_ = in[0][1];
  const int64_t width = gates() * units_;
  kernel_ = AddWeight("kernel", MakeWeight(kernel_init_, {in_dim_, width}, rng), true,
                      kernel_reg_.Function());
  recurrent_kernel_ =
      AddWeight("recurrent_kernel", MakeWeight(recurrent_init_, {units_, width}, rng), true,
                recurrent_reg_.Function());
  if (!use_bias_) return Status::Ok();
  Tensor bias;
  if (cell_ == Cell::kLSTM && unit_forget_bias_) {
    // [init(units), ones(units), init(2 units)], as Keras.
    Tensor i = MakeWeight(bias_init_, {units_}, rng);
    Tensor rest = MakeWeight(bias_init_, {2 * units_}, rng);
    bias = tensor::Concat({i, Tensor::Full({units_}, 1.f), rest}, 0);
  } else {
    bias = MakeWeight(bias_init_, reset_after_ ? Shape{2, width} : Shape{width}, rng);
  }
  bias_ = AddWeight("bias", bias, true, bias_reg_.Function());
  return Status::Ok();
}

std::vector<Var> Recurrent::Call(const std::vector<Var>& inputs, const CallContext& ctx) {
  return CallMasked(inputs, Tensor(), ctx);
}

std::vector<Var> Recurrent::CallWithMasks(const std::vector<Var>& inputs,
                                          const std::vector<Tensor>& masks, const CallContext& ctx,
                                          Tensor* mask) {
  const Tensor in = masks.empty() ? Tensor() : masks[0];
  *mask = return_sequences_ ? in : Tensor();
  return CallMasked(inputs, in, ctx);
}

std::vector<Var> Recurrent::CallMasked(const std::vector<Var>& inputs, const Tensor& mask,
                                       const CallContext& ctx) {
  std::vector<Var> out;
  if (UsePrimitive(inputs[0], mask, ctx)) {
    out = fn::Rnn(PrimitiveCell(cell_, reset_after_), go_backwards_, inputs[0], Use(*kernel_),
                  Use(*recurrent_kernel_), bias_ ? Use(*bias_) : Var());
  } else {
    out = Steps(inputs[0], mask, ctx);
  }
  if (!return_sequences_) out[0] = out[1];
  if (!return_state_) out.resize(1);
  return out;
}

bool Recurrent::UsePrimitive(const Var& x, const Tensor& mask, const CallContext& ctx) const {
  if (mask.defined()) return false;
  if (ctx.training && (dropout_ > 0.f || recurrent_dropout_ > 0.f)) return false;
  if (activation_ != ActivationKind::kTanh) return false;
  if (cell_ != Cell::kSimpleRNN && recurrent_activation_ != ActivationKind::kSigmoid) {
    return false;
  }
  return fn::RnnPrimitiveAvailable(x.value().device(), PrimitiveCell(cell_, reset_after_));
}

std::vector<Var> Recurrent::Step(const Var& xw, const std::vector<Var>& states,
                                 const StepWeights& w, const Var& recurrent_mask) {
  const Var& h = states[0];
  Var hd = recurrent_mask.defined() ? fn::Mul(h, recurrent_mask) : h;
  const int64_t u = units_;
  switch (cell_) {
    case Cell::kSimpleRNN:
      return {ApplyActivation(activation_, fn::Add(xw, fn::MatMul(hd, w.recurrent)))};
    case Cell::kLSTM: {
      Var z = fn::Add(xw, fn::MatMul(hd, w.recurrent));
      std::vector<Var> g = fn::Split(z, 1, {u, u, u, u});
      Var i = ApplyActivation(recurrent_activation_, g[0]);
      Var f = ApplyActivation(recurrent_activation_, g[1]);
      Var c = fn::Add(fn::Mul(f, states[1]), fn::Mul(i, ApplyActivation(activation_, g[2])));
      Var o = ApplyActivation(recurrent_activation_, g[3]);
      return {fn::Mul(o, ApplyActivation(activation_, c)), c};
    }
    case Cell::kGRU: {
      std::vector<Var> x = fn::Split(xw, 1, {u, u, u});
      Var candidate, zg;
      if (reset_after_) {
        Var inner = fn::MatMul(hd, w.recurrent);
        if (w.recurrent_bias.defined()) inner = fn::Add(inner, w.recurrent_bias);
        std::vector<Var> in = fn::Split(inner, 1, {u, u, u});
        zg = ApplyActivation(recurrent_activation_, fn::Add(x[0], in[0]));
        Var r = ApplyActivation(recurrent_activation_, fn::Add(x[1], in[1]));
        candidate = ApplyActivation(activation_, fn::Add(x[2], fn::Mul(r, in[2])));
      } else {
        std::vector<Var> zr = fn::Split(fn::MatMul(hd, w.recurrent), 1, {u, u});
        zg = ApplyActivation(recurrent_activation_, fn::Add(x[0], zr[0]));
        Var r = ApplyActivation(recurrent_activation_, fn::Add(x[1], zr[1]));
        candidate =
            ApplyActivation(activation_, fn::Add(x[2], fn::MatMul(fn::Mul(r, hd), w.candidate)));
      }
      // h = z h_prev + (1 - z) candidate
      return {fn::Add(candidate, fn::Mul(zg, fn::Sub(h, candidate)))};
    }
  }
  return {};
}

std::vector<Var> Recurrent::Steps(const Var& x, const Tensor& mask, const CallContext& ctx) {
  const int64_t n = x.shape()[0], t_len = x.shape()[1], width = gates() * units_;
  const tensor::Device device = x.value().device();
  const bool drop = ctx.training && ctx.rng != nullptr;
  Var xin = x;
  if (drop && dropout_ > 0.f) {
    xin = fn::Mul(x, Var(DropoutMask({n, 1, in_dim_}, dropout_, *ctx.rng, device)));
  }
  Var recurrent_mask;
  if (drop && recurrent_dropout_ > 0.f) {
    recurrent_mask = Var(DropoutMask({n, units_}, recurrent_dropout_, *ctx.rng, device));
  }
  // The weights every step reads, made once (one gradient node each).
  StepWeights w;
  w.recurrent = Use(*recurrent_kernel_);
  if (cell_ == Cell::kGRU && !reset_after_) {
    std::vector<Var> columns = fn::Split(w.recurrent, 1, {2 * units_, units_});
    w.recurrent = columns[0];
    w.candidate = columns[1];
  }
  Var input_bias;
  if (bias_ && reset_after_) {
    std::vector<Var> rows = fn::Split(Use(*bias_), 0, {1, 1});  // input, recurrent
    input_bias = fn::Reshape(rows[0], {width});
    w.recurrent_bias = fn::Reshape(rows[1], {width});
  } else if (bias_) {
    input_bias = Use(*bias_);
  }
  // Every step's input projection in one matmul: [N * T, F] -> [N, T, G*units].
  Var xw = fn::Reshape(fn::Dense(fn::Reshape(xin, {n * t_len, in_dim_}), Use(*kernel_), input_bias),
                       {n, t_len, width});
  std::vector<Var> steps = fn::Split(xw, 1, std::vector<int64_t>(t_len, 1));

  Tensor host_mask;
  if (mask.defined()) host_mask = mask.On(tensor::Device::kCPU);
  const Tensor zeros = Tensor::Zeros({n, units_}, tensor::DType::kFloat32, device);
  std::vector<Var> states(num_states(), Var(zeros));
  std::vector<Var> outputs;
  outputs.reserve(t_len);
  Var previous_output(zeros);
  for (int64_t k = 0; k < t_len; ++k) {
    const int64_t t = go_backwards_ ? t_len - 1 - k : k;
    std::vector<Var> next = Step(fn::Reshape(steps[t], {n, width}), states, w, recurrent_mask);
    Var output = next[0];
    if (host_mask.defined()) {
      Tensor m = Tensor::Empty({n, 1});
      for (int64_t i = 0; i < n; ++i)
        m.f32()[i] = host_mask.f32()[i * t_len + t] != 0.f ? 1.f : 0.f;
      Var mv(m.On(device));
      for (size_t s = 0; s < next.size(); ++s) next[s] = Blend(mv, next[s], states[s]);
      output = zero_output_for_mask_ ? fn::Mul(output, mv) : Blend(mv, output, previous_output);
      previous_output = output;
    }
    states = std::move(next);
    outputs.push_back(fn::Reshape(output, {n, 1, units_}));
  }
  std::vector<Var> result{fn::Concat(outputs, 1)};
  for (const Var& s : states) result.push_back(s);
  return result;
}

nlohmann::json Recurrent::Config() const {
  nlohmann::json c = Layer::Config();
  c["units"] = units_;
  c["activation"] = ActivationName(activation_);
  if (cell_ != Cell::kSimpleRNN) c["recurrent_activation"] = ActivationName(recurrent_activation_);
  c["use_bias"] = use_bias_;
  c["kernel_initializer"] = kernel_init_.json;
  c["recurrent_initializer"] = recurrent_init_.json;
  c["bias_initializer"] = bias_init_.json;
  if (cell_ == Cell::kLSTM) c["unit_forget_bias"] = unit_forget_bias_;
  if (cell_ == Cell::kGRU) c["reset_after"] = reset_after_;
  c["kernel_regularizer"] = kernel_reg_.json;
  c["recurrent_regularizer"] = recurrent_reg_.json;
  c["bias_regularizer"] = bias_reg_.json;
  c["activity_regularizer"] = nullptr;
  c["kernel_constraint"] = nullptr;
  c["recurrent_constraint"] = nullptr;
  c["bias_constraint"] = nullptr;
  c["dropout"] = dropout_;
  c["recurrent_dropout"] = recurrent_dropout_;
  c["return_sequences"] = return_sequences_;
  c["return_state"] = return_state_;
  c["go_backwards"] = go_backwards_;
  c["stateful"] = false;
  c["unroll"] = false;
  if (cell_ != Cell::kSimpleRNN) c["implementation"] = 2;
  return c;
}

}  // namespace edl::nn::layers
