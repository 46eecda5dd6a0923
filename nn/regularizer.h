// Regularizer: Keras' L1, L2 and L1L2 weight penalties,
// l1 * sum(|w|) + l2 * sum(w^2), added to the loss by the layers that own
// the weight.
//
// Thread-safety: immutable values.
#pragma once

#include <string>

#include "base/status.h"
#include "nn/autograd.h"

namespace edl::nn {

struct Regularizer {
  double l1 = 0;
  double l2 = 0;

  // True when the penalty is always zero (no regularizer).
  bool empty() const { return l1 == 0 && l2 == 0; }
  // A scalar Var; its gradient is l1 * sign(w) + 2 * l2 * w.
  Var Penalty(const Var& w) const;
};

// Parses a Keras regularizer: null (none), "l1" / "l2" / "l1_l2" (factor
// 0.01 each, as Keras' defaults), or {"class_name": "L2", "config":
// {"l2": 0.01}} (classes L1, L2, L1L2). Errors name `where` and the field.
Result<Regularizer> RegularizerFromJson(const std::string& json_text, const std::string& where);

}  // namespace edl::nn
