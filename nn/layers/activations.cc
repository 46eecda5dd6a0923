#include "nn/layers/activations.h"

#include <utility>
#include <vector>

#include "nn/functional.h"

namespace edl::nn::layers {
namespace {

const std::vector<std::pair<const char*, ActivationKind>>& Names() {
  static const auto* names = new std::vector<std::pair<const char*, ActivationKind>>{
      {"linear", ActivationKind::kLinear},     {"relu", ActivationKind::kRelu},
      {"relu6", ActivationKind::kRelu6},       {"sigmoid", ActivationKind::kSigmoid},
      {"tanh", ActivationKind::kTanh},         {"softmax", ActivationKind::kSoftmax},
      {"gelu", ActivationKind::kGelu},         {"gelu_new", ActivationKind::kGeluTanh},
      {"elu", ActivationKind::kElu},           {"selu", ActivationKind::kSelu},
      {"softplus", ActivationKind::kSoftplus}, {"swish", ActivationKind::kSwish},
      {"silu", ActivationKind::kSwish},        {"softsign", ActivationKind::kSoftsign},
      {"mish", ActivationKind::kMish},         {"hard_sigmoid", ActivationKind::kHardSigmoid},
  };
  return *names;
}

}  // namespace

Result<ActivationKind> ParseActivation(const std::string& name) {
  if (name.empty()) return ActivationKind::kLinear;
  std::string list;
  for (const auto& [n, kind] : Names()) {
    if (name == n) return kind;
    list += (list.empty() ? "" : ", ") + std::string(n);
  }
  return InvalidArgument("unsupported activation \"" + name + "\"; supported: " + list);
}

const char* ActivationName(ActivationKind kind) {
  for (const auto& [n, k] : Names()) {
    if (k == kind) return n;
  }
  return "linear";
}

Var ApplyActivation(ActivationKind kind, const Var& x) {
  using tensor::Eltwise;
  switch (kind) {
    case ActivationKind::kLinear: return x;
    case ActivationKind::kRelu: return fn::Activation(Eltwise::kRelu, x);
    case ActivationKind::kRelu6: return fn::Activation(Eltwise::kClip, x, 0.f, 6.f);
    case ActivationKind::kSigmoid: return fn::Activation(Eltwise::kSigmoid, x);
    case ActivationKind::kTanh: return fn::Activation(Eltwise::kTanh, x);
    case ActivationKind::kSoftmax: return fn::Softmax(x, -1);
    case ActivationKind::kGelu: return fn::Activation(Eltwise::kGelu, x);
    case ActivationKind::kGeluTanh: return fn::Activation(Eltwise::kGeluTanh, x);
    case ActivationKind::kElu: return fn::Activation(Eltwise::kElu, x, 1.f);
    case ActivationKind::kSelu: return fn::Activation(Eltwise::kSelu, x);
    case ActivationKind::kSoftplus: return fn::Activation(Eltwise::kSoftplus, x);
    case ActivationKind::kSwish: return fn::Activation(Eltwise::kSwish, x);
    case ActivationKind::kSoftsign:
      return fn::Div(x, fn::Affine(fn::Activation(Eltwise::kAbs, x), 1.f, 1.f));
    case ActivationKind::kMish:
      return fn::Mul(x, fn::Activation(Eltwise::kTanh, fn::Activation(Eltwise::kSoftplus, x)));
    case ActivationKind::kHardSigmoid:
      return fn::Activation(Eltwise::kClip, fn::Affine(x, 0.2f, 0.5f), 0.f, 1.f);
  }
  return x;
}

}  // namespace edl::nn::layers
