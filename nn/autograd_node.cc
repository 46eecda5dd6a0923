#include "nn/autograd_node.h"

#include <utility>

namespace edl::nn {

Node::~Node() {
  if (inputs.empty()) return;
  // Unlink the chain first so that destroying it never recurses deeply: a
  // node we hold the last reference to hands its inputs to the stack before
  // it dies.
  std::vector<std::shared_ptr<Node>> stack = std::move(inputs);
  inputs.clear();
  while (!stack.empty()) {
    std::shared_ptr<Node> node = std::move(stack.back());
    stack.pop_back();
    if (node && node.use_count() == 1) {
      for (auto& input : node->inputs) stack.push_back(std::move(input));
      node->inputs.clear();
    }
  }
}

}  // namespace edl::nn
