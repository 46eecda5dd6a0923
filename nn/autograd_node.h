// Node: one recorded step of the autograd graph (nn/autograd.h). A node
// either runs a backward closure that maps its output's gradient to one
// gradient per input node, or is a leaf that accumulates into a Parameter.
// Nodes are owned by the Vars that refer to them and by their consumers'
// `inputs`; Backward() releases closures and inputs as it goes, so a graph
// can be back-propagated once.
//
// Thread-safety: a graph belongs to one thread.
#pragma once

#include <cstdint>
#include <functional>
#include <memory>
#include <vector>

#include "nn/autograd.h"

namespace edl::nn {

using BackwardFn = std::function<std::vector<Tensor>(const Tensor& dy)>;

struct Node {
  Node() = default;
  // Destroys long chains iteratively (no recursion through shared_ptrs).
  ~Node();
  Node(const Node&) = delete;
  Node& operator=(const Node&) = delete;

  // Interior nodes: the closure and its inputs (an entry is null where that
  // input needs no gradient; the closure's result has inputs.size() entries
  // or is empty for "nothing to propagate").
  BackwardFn backward;
  std::vector<std::shared_ptr<Node>> inputs;
  // Leaves: the parameter whose grad receives this node's gradient.
  Parameter* param = nullptr;

  // Backward() bookkeeping.
  Tensor grad;              // gradient of the output, summed over consumers
  bool grad_owned = false;  // grad's storage belongs to this node alone
  bool released = false;    // backward already ran through this node
  int pending = 0;          // consumers whose gradient has not arrived yet
  uint64_t epoch = 0;       // last traversal that visited this node
};

// Wraps a raw node (for functions, such as Embedding, whose gradient goes
// somewhere other than an input Var). Returns a constant Var when recording
// is off.
Var MakeResultWithNode(Tensor value, std::shared_ptr<Node> node);

}  // namespace edl::nn
