// Reverse-mode automatic differentiation, eager, in the style of TF2's
// GradientTape: every differentiable function in nn/functional.h computes its
// value at once and, when any input requires a gradient and recording is on,
// links a node holding its backward closure to its inputs' nodes. Backward()
// walks the graph from a scalar in reverse topological order and accumulates
// gradients into the Parameters the graph reached.
//
// Thread-safety: a graph belongs to one thread. Recording is on by default
// and turned off per thread by NoGradGuard.
#pragma once

#include <functional>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "tensor/ops.h"
#include "tensor/tensor.h"

namespace edl::nn {

using tensor::Shape;
using tensor::Tensor;

// A named weight. Layers own their Parameters; optimizers update `value` from
// `grad` (dense) or `sparse_grad` (embedding tables).
struct Parameter {
  std::string name;  // unique in a model, e.g. "dense_1/kernel"
  Tensor value;
  bool trainable = true;
  // Never changes while training: a weight of a layer with trainable:
  // false (a frozen batch norm's moving statistics included, since it runs
  // in inference mode). Distributed training leaves it where it is instead
  // of syncing it as worker state.
  bool frozen = false;
  // Accumulated by Backward(); undefined until a gradient arrives.
  Tensor grad;
  // For tables read by Gather(): accumulated sparse rows, never densified
  // unless someone asks.
  std::optional<tensor::SparseRows> sparse_grad;

  void ZeroGrad() {
    grad = Tensor();
    sparse_grad.reset();
  }
};

struct Node;  // defined in nn/autograd_node.h

// A value in the graph: a tensor plus, if it depends on trainable
// parameters, the node that computes its gradient.
class Var {
 public:
  Var() = default;
  // A constant (no gradient flows into it).
  explicit Var(Tensor value) : value_(std::move(value)) {}
  Var(Tensor value, std::shared_ptr<Node> node)
      : value_(std::move(value)), node_(std::move(node)) {}

  const Tensor& value() const { return value_; }
  const Shape& shape() const { return value_.shape(); }
  bool defined() const { return value_.defined(); }
  bool requires_grad() const { return node_ != nullptr; }
  const std::shared_ptr<Node>& node() const { return node_; }

 private:
  Tensor value_;
  std::shared_ptr<Node> node_;
};

// A Var that reads p.value and whose gradient accumulates into p.grad.
// Untrainable parameters (and all parameters under NoGradGuard) give a
// constant.
Var Use(Parameter& p);

// Back-propagates from `loss` (REQUIRES: one element) with seed gradient 1,
// accumulating into every reached Parameter's grad / sparse_grad. The graph
// is released afterwards.
void Backward(const Var& loss);
// Same, with an explicit seed gradient of loss's shape.
void Backward(const Var& output, const Tensor& seed);

// True while gradients are recorded on this thread.
bool GradEnabled();

// Turns recording off for its lifetime on this thread (evaluation, predict).
class NoGradGuard {
 public:
  NoGradGuard();
  ~NoGradGuard();
  NoGradGuard(const NoGradGuard&) = delete;
  NoGradGuard& operator=(const NoGradGuard&) = delete;

 private:
  bool previous_;
};

// Builds a graph node for a new differentiable function: `inputs` are the
// function's Var inputs; `backward` receives the output's gradient and
// returns one gradient per input (undefined Tensor for "none"). Returns a
// Var with no node when recording is off or no input requires grad.
// For use by nn/functional*.cc.
Var MakeResult(Tensor value, const std::vector<Var>& inputs,
               std::function<std::vector<Tensor>(const Tensor& dy)> backward);

// As MakeResult for a function with several outputs: `backward` receives
// one gradient per output (undefined for outputs the loss does not reach)
// and runs once, after every reached output's gradient is known.
std::vector<Var> MakeResults(
    std::vector<Tensor> values, const std::vector<Var>& inputs,
    std::function<std::vector<Tensor>(const std::vector<Tensor>& dys)> backward);

}  // namespace edl::nn
