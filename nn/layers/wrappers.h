// Layer wrappers (Keras semantics and weight names, as TF.js saves them):
//
// Bidirectional: a recurrent layer (SimpleRNN, LSTM, GRU) run forwards and a
// copy run backwards over [steps, features]; the backward copy's steps are
// put back in time order before merging. merge_mode concat (default, last
// axis), sum, mul, ave, or null (two outputs: forward, backward). With
// return_state the forward then the backward final states follow. Weights
// "<name>/forward_<inner>/kernel", ..., then "<name>/backward_<inner>/...".
//
// TimeDistributed: any one-output layer applied to every step of
// [steps, ...] (the steps folded into the batch). Weights "<name>/kernel".
//
// RNN: Keras' generic recurrent layer over a cell: SimpleRNNCell, GRUCell,
// LSTMCell (computed as SimpleRNN, GRU, LSTM) or StackedRNNCells of them.
// Stacked cells run as a chain of recurrent layers, each over the sequence
// the one below returns (the same maths: no cell reads a higher one), only
// the first going backwards with go_backwards; with return_state every
// cell's final states follow the output, lowest cell first. Weights, as
// TF.js names them: "<name>/kernel", ... for one cell, "<name>/RNNCell_<i>/
// kernel", ... for stacked cells. stateful must be false.
#pragma once

#include <memory>
#include <string>

#include "nn/layers/layer.h"
#include "nn/layers/recurrent.h"

namespace edl::nn::layers {

class Bidirectional : public Layer {
 public:
  enum class Merge { kConcat, kSum, kMul, kAve, kNone };
  static Result<std::unique_ptr<Layer>> FromConfig(const std::string& name,
                                                   const nlohmann::json& config);
  const char* class_name() const override { return "Bidirectional"; }
  std::vector<Var> Call(const std::vector<Var>& inputs, const CallContext& ctx) override;
  nlohmann::json Config() const override;
  std::vector<Parameter*> weights() override;
  Var RegularizationLoss() override;
  void set_trainable(bool trainable) override;
  MaskSupport mask_support() const override { return MaskSupport::kUse; }
  bool OutputMasked(const std::vector<bool>& in) const override {
    return forward_->OutputMasked(in);
  }
  std::vector<Var> CallWithMasks(const std::vector<Var>& inputs, const std::vector<Tensor>& masks,
                                 const CallContext& ctx, Tensor* mask) override;

 protected:
  Result<std::vector<Shape>> OutputShapes(const std::vector<Shape>& in) override;
  Status CreateWeights(const std::vector<Shape>& in, std::mt19937_64& rng) override;

 private:
  using Layer::Layer;
  Merge merge_ = Merge::kConcat;
  std::string inner_class_, inner_name_;
  std::unique_ptr<Layer> forward_layer_, backward_layer_;
  Recurrent* forward_ = nullptr;
  Recurrent* backward_ = nullptr;
};

class RnnOfCells : public Layer {
 public:
  static Result<std::unique_ptr<Layer>> FromConfig(const std::string& name,
                                                   const nlohmann::json& config);
  const char* class_name() const override { return "RNN"; }
  std::vector<Var> Call(const std::vector<Var>& inputs, const CallContext& ctx) override;
  nlohmann::json Config() const override;
  std::vector<Parameter*> weights() override;
  Var RegularizationLoss() override;
  void set_trainable(bool trainable) override;
  MaskSupport mask_support() const override { return MaskSupport::kUse; }
  bool OutputMasked(const std::vector<bool>& in) const override {
    return return_sequences_ && !in.empty() && in[0];
  }
  std::vector<Var> CallWithMasks(const std::vector<Var>& inputs, const std::vector<Tensor>& masks,
                                 const CallContext& ctx, Tensor* mask) override;

 protected:
  Result<std::vector<Shape>> OutputShapes(const std::vector<Shape>& in) override;
  Status CreateWeights(const std::vector<Shape>& in, std::mt19937_64& rng) override;

 private:
  using Layer::Layer;
  struct CellLayer {
    std::string cls, name;  // the cell's class ("LSTMCell") and name
    std::unique_ptr<Layer> layer;
    Recurrent* rnn = nullptr;
  };
  std::vector<CellLayer> cells_;
  bool stacked_ = false;
  std::string stack_name_;
  bool return_sequences_ = false, return_state_ = false, go_backwards_ = false;
};

class TimeDistributed : public Layer {
 public:
  static Result<std::unique_ptr<Layer>> FromConfig(const std::string& name,
                                                   const nlohmann::json& config);
  const char* class_name() const override { return "TimeDistributed"; }
  MaskSupport mask_support() const override { return MaskSupport::kPassThrough; }
  std::vector<Var> Call(const std::vector<Var>& inputs, const CallContext& ctx) override;
  nlohmann::json Config() const override;
  std::vector<Parameter*> weights() override { return inner_->weights(); }
  Var RegularizationLoss() override { return inner_->RegularizationLoss(); }
  void set_trainable(bool trainable) override;

 protected:
  Result<std::vector<Shape>> OutputShapes(const std::vector<Shape>& in) override;
  Status CreateWeights(const std::vector<Shape>& in, std::mt19937_64& rng) override;

 private:
  using Layer::Layer;
  std::string inner_class_, inner_name_;
  std::unique_ptr<Layer> inner_;
  Shape step_out_;  // the inner layer's output shape for one step
};

}  // namespace edl::nn::layers
