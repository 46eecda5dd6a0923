// SimpleRNN, LSTM and GRU (Keras semantics and weight layout) over input
// [N, T, F]. Outputs: the last state h [N, units], or every step's h
// [N, T, units] with return_sequences; with return_state the final states
// follow (h, then c for LSTM). go_backwards runs from the last step to the
// first and returns the steps in that order, as Keras.
//
// Weights: kernel [F, G*units], recurrent_kernel [units, G*units], bias
// [G*units] (GRU with reset_after: [2, 3*units], input then recurrent bias),
// where G is 1, 4 (gates i, f, c, o) or 3 (gates z, r, h).
//
// Two ways to compute: on the CPU backend, with activation tanh and
// recurrent_activation sigmoid, no dropout and no mask, the whole sequence
// runs as one oneDNN RNN primitive (nn/functional_rnn.cc); otherwise the
// steps are composed from matmuls and elementwise ops, which every backend
// and every activation supports (and which the tests hold the primitive to).
//
// A mask [N, T] (1 = real step, 0 = padding) keeps the previous state and
// output at padded steps, as Keras does for Embedding(mask_zero=True) and
// Masking.
#pragma once

#include "nn/layers/activations.h"
#include "nn/layers/layer.h"
#include "nn/layers/weight_config.h"

namespace edl::nn::layers {

class Recurrent : public Layer {
 public:
  enum class Cell { kSimpleRNN, kLSTM, kGRU };
  static Result<std::unique_ptr<Layer>> FromConfig(Cell cell, const std::string& name,
                                                   const nlohmann::json& config);
  const char* class_name() const override;
  std::vector<Var> Call(const std::vector<Var>& inputs, const CallContext& ctx) override;
  // As Call, with a mask [N, T] of 0/1 (undefined: every step is real).
  std::vector<Var> CallMasked(const std::vector<Var>& inputs, const Tensor& mask,
                              const CallContext& ctx);
  nlohmann::json Config() const override;
  MaskSupport mask_support() const override { return MaskSupport::kUse; }
  // The sequence output carries the input's mask (as Keras, also with
  // go_backwards); the last state carries none.
  bool OutputMasked(const std::vector<bool>& in) const override {
    return return_sequences_ && !in.empty() && in[0];
  }
  std::vector<Var> CallWithMasks(const std::vector<Var>& inputs, const std::vector<Tensor>& masks,
                                 const CallContext& ctx, Tensor* mask) override;

  bool return_sequences() const { return return_sequences_; }
  bool return_state() const { return return_state_; }
  bool go_backwards() const { return go_backwards_; }
  int64_t units() const { return units_; }
  // The number of state tensors (2 for LSTM, else 1).
  int num_states() const { return cell_ == Cell::kLSTM ? 2 : 1; }
  // Overrides the config's go_backwards (Bidirectional's backward copy).
  void set_go_backwards(bool b) { go_backwards_ = b; }
  // Padded steps output zeros instead of the previous output (Keras sets
  // this on Bidirectional's copies when they return sequences).
  void set_zero_output_for_mask(bool b) { zero_output_for_mask_ = b; }

 protected:
  Result<std::vector<Shape>> OutputShapes(const std::vector<Shape>& in) override;
  Status CreateWeights(const std::vector<Shape>& in, std::mt19937_64& rng) override;

 private:
  using Layer::Layer;
  int gates() const;
  // True when the oneDNN primitive may compute this call.
  bool UsePrimitive(const Var& x, const Tensor& mask, const CallContext& ctx) const;
  // The composed steps; returns {sequence or last h, states...}.
  std::vector<Var> Steps(const Var& x, const Tensor& mask, const CallContext& ctx);
  // The recurrent weights as every step reads them, made once per call.
  struct StepWeights {
    Var recurrent;       // [units, G*units]; GRU without reset_after: the z, r columns
    Var candidate;       // GRU without reset_after: the h columns [units, units]
    Var recurrent_bias;  // GRU with reset_after: [3*units]; else undefined
  };
  // One step: new states from the step's input projection xw [N, G*units]
  // and the previous states.
  std::vector<Var> Step(const Var& xw, const std::vector<Var>& states, const StepWeights& w,
                        const Var& recurrent_mask);

  Cell cell_ = Cell::kLSTM;
  int64_t units_ = 0;
  int64_t in_dim_ = -1;
  ActivationKind activation_ = ActivationKind::kTanh;
  ActivationKind recurrent_activation_ = ActivationKind::kSigmoid;
  bool use_bias_ = true;
  bool unit_forget_bias_ = true;
  bool reset_after_ = false;
  bool return_sequences_ = false;
  bool return_state_ = false;
  bool go_backwards_ = false;
  bool zero_output_for_mask_ = false;
  float dropout_ = 0.f;
  float recurrent_dropout_ = 0.f;
  WeightInit kernel_init_, recurrent_init_, bias_init_;
  WeightPenalty kernel_reg_, recurrent_reg_, bias_reg_;
  Parameter* kernel_ = nullptr;
  Parameter* recurrent_kernel_ = nullptr;
  Parameter* bias_ = nullptr;
};

}  // namespace edl::nn::layers
