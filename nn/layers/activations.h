// Keras activation functions by name ("relu", "gelu", ...), applied to Vars.
// Names follow Keras: "silu" is "swish"; "gelu" is the exact erf form (Keras'
// approximate=False, TF.js "gelu"); TF.js' "gelu_new" is the tanh form.
#pragma once

#include <string>

#include "base/status.h"
#include "nn/autograd.h"

namespace edl::nn::layers {

enum class ActivationKind {
  kLinear,
  kRelu,
  kRelu6,
  kSigmoid,
  kTanh,
  kSoftmax,
  kGelu,
  kGeluTanh,
  kElu,
  kSelu,
  kSoftplus,
  kSwish,
  kSoftsign,     // x / (1 + |x|)
  kMish,         // x * tanh(softplus(x))
  kHardSigmoid,  // clip(0.2 x + 0.5, 0, 1), as Keras 2 and TF.js
};

// InvalidArgument("unsupported activation \"x\"; supported: ...") for
// unknown names. "" and "linear" are kLinear.
Result<ActivationKind> ParseActivation(const std::string& name);
// The name TF.js and Keras both understand ("swish" for kSwish).
const char* ActivationName(ActivationKind kind);
Var ApplyActivation(ActivationKind kind, const Var& x);

}  // namespace edl::nn::layers
