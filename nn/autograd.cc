// Backward() runs in two passes over the graph reachable from the output:
// the first counts, for every node, how many consumers will send it a
// gradient; the second runs closures in an order where a node runs only
// after all its consumers (Kahn's algorithm), so gradients of nodes used
// several times are summed before they propagate.
#include "nn/autograd.h"

#include <atomic>
#include <utility>

#include "nn/autograd_node.h"

namespace edl::nn {
namespace {

thread_local bool grad_enabled = true;

uint64_t NextEpoch() {
  static std::atomic<uint64_t> epoch{0};
  return epoch.fetch_add(1, std::memory_order_relaxed) + 1;
}

// Adds g into node->grad. A gradient that arrives first is kept by handle
// (it may be shared with the sender); the second makes a fresh sum that the
// node then owns and may update in place.
void AccumulateInto(Node* node, Tensor g) {
  if (!g.defined()) return;
  if (!node->grad.defined()) {
    node->grad = std::move(g);
    node->grad_owned = false;
  } else if (node->grad_owned) {
    tensor::AddInPlace(node->grad, g);
  } else {
    node->grad = tensor::Add(node->grad, g);
    node->grad_owned = true;
  }
}

// Tensors handed to Parameters during one Backward(), to keep two
// parameters (or the caller's seed) from sharing one gradient buffer.
class GradAliases {
 public:
  explicit GradAliases(const Tensor& seed) { handed_out_.push_back(seed); }

  // Returns g, copied if its storage was already handed out.
  Tensor Unshared(Tensor g) {
    for (const Tensor& t : handed_out_) {
      if (t.SharesStorageWith(g)) {
        g = g.Clone();
        break;
      }
    }
    handed_out_.push_back(g);
    return g;
  }

 private:
  std::vector<Tensor> handed_out_;
};

void AccumulateIntoParameter(Parameter* p, Tensor g, GradAliases& aliases) {
  if (!g.defined()) return;
  EDL_CHECK(g.shape() == p->value.shape())
      << "gradient of " << p->name << " has shape " << tensor::ShapeString(g.shape())
      << ", parameter has " << tensor::ShapeString(p->value.shape());
  if (!p->grad.defined()) {
    p->grad = aliases.Unshared(std::move(g));
  } else {
    p->grad = tensor::Add(p->grad, g);
  }
}

}  // namespace

bool GradEnabled() { return grad_enabled; }

NoGradGuard::NoGradGuard() : previous_(grad_enabled) { grad_enabled = false; }
NoGradGuard::~NoGradGuard() { grad_enabled = previous_; }

Var Use(Parameter& p) {
  if (!p.trainable || !grad_enabled) return Var(p.value);
  auto node = std::make_shared<Node>();
  node->param = &p;
  return Var(p.value, std::move(node));
}

Var MakeResult(Tensor value, const std::vector<Var>& inputs,
               std::function<std::vector<Tensor>(const Tensor& dy)> backward) {
  if (!grad_enabled) return Var(std::move(value));
  bool any = false;
  for (const Var& v : inputs) any = any || v.requires_grad();
  if (!any) return Var(std::move(value));
  auto node = std::make_shared<Node>();
  node->inputs.reserve(inputs.size());
  for (const Var& v : inputs) node->inputs.push_back(v.node());
  node->backward = std::move(backward);
  return Var(std::move(value), std::move(node));
}

std::vector<Var> MakeResults(
    std::vector<Tensor> values, const std::vector<Var>& inputs,
    std::function<std::vector<Tensor>(const std::vector<Tensor>& dys)> backward) {
  std::vector<Var> out;
  out.reserve(values.size());
  bool any = false;
  for (const Var& v : inputs) any = any || v.requires_grad();
  if (!grad_enabled || !any) {
    for (Tensor& v : values) out.push_back(Var(std::move(v)));
    return out;
  }
  // Each output's node files its gradient in `dys` and hands the core node
  // a one-element token, so the core runs once, after all of them.
  auto dys = std::make_shared<std::vector<Tensor>>(values.size());
  const tensor::Device device = values.front().device();
  Var core = MakeResult(Tensor::Zeros({1}, tensor::DType::kFloat32, device), inputs,
                        [dys, backward = std::move(backward)](const Tensor&) {
                          std::vector<Tensor> taken = std::move(*dys);
                          return backward(taken);
                        });
  const Tensor token = Tensor::Zeros({1}, tensor::DType::kFloat32, device);
  for (size_t i = 0; i < values.size(); ++i) {
    out.push_back(MakeResult(std::move(values[i]), {core}, [dys, i, token](const Tensor& dy) {
      (*dys)[i] = dy;
      return std::vector<Tensor>{token};
    }));
  }
  return out;
}

Var MakeResultWithNode(Tensor value, std::shared_ptr<Node> node) {
  if (!grad_enabled || node == nullptr) return Var(std::move(value));
  return Var(std::move(value), std::move(node));
}

void Backward(const Var& loss) {
  EDL_CHECK_EQ(loss.value().numel(), 1)
      << "Backward() without a seed needs a one-element loss, got shape "
      << tensor::ShapeString(loss.shape());
  Backward(loss, Tensor::Full(loss.shape(), 1.f, loss.value().device()));
}

void Backward(const Var& output, const Tensor& seed) {
  const std::shared_ptr<Node>& root = output.node();
  if (root == nullptr) return;  // nothing in the graph needs a gradient
  EDL_CHECK(seed.shape() == output.shape())
      << "seed " << tensor::ShapeString(seed.shape()) << " for output "
      << tensor::ShapeString(output.shape());
  EDL_CHECK(!root->released) << "this graph was already back-propagated";

  // Pass 1: count the consumers of every reachable node.
  const uint64_t epoch = NextEpoch();
  std::vector<Node*> stack;
  stack.reserve(64);
  root->epoch = epoch;
  root->pending = 0;
  stack.push_back(root.get());
  while (!stack.empty()) {
    Node* node = stack.back();
    stack.pop_back();
    for (const auto& input : node->inputs) {
      if (input == nullptr) continue;
      if (input->epoch != epoch) {
        EDL_CHECK(!input->released) << "a Var from an already back-propagated graph was reused";
        input->epoch = epoch;
        input->pending = 0;
        stack.push_back(input.get());
      }
      ++input->pending;
    }
  }

  // Pass 2: propagate. `ready` holds references, since releasing a node
  // drops its references to its inputs.
  GradAliases aliases(seed);
  std::vector<std::shared_ptr<Node>> ready;
  ready.reserve(64);
  root->grad = seed;
  root->grad_owned = false;
  ready.push_back(root);
  while (!ready.empty()) {
    std::shared_ptr<Node> node = std::move(ready.back());
    ready.pop_back();
    Tensor dy = std::move(node->grad);
    node->grad = Tensor();
    node->grad_owned = false;
    if (node->param != nullptr) {
      AccumulateIntoParameter(node->param, std::move(dy), aliases);
      continue;  // leaves carry no graph and may be reused
    }
    std::vector<Tensor> grads;
    if (node->backward && dy.defined()) grads = node->backward(dy);
    EDL_CHECK(grads.empty() || grads.size() == node->inputs.size())
        << "backward returned " << grads.size() << " gradients for " << node->inputs.size()
        << " inputs";
    for (size_t i = 0; i < node->inputs.size(); ++i) {
      std::shared_ptr<Node>& input = node->inputs[i];
      if (input == nullptr) continue;
      if (!grads.empty()) AccumulateInto(input.get(), std::move(grads[i]));
      if (--input->pending == 0) ready.push_back(std::move(input));
    }
    node->backward = nullptr;
    node->inputs.clear();
    node->released = true;
  }
}

}  // namespace edl::nn
