// Test inputs for ApplyUpdate: every rule, coefficients that keep every rule
// finite, slots in ranges where each rule's square roots are real, and a
// dense and a sparse case (unique, unordered ids).
#pragma once

#include <vector>

#include "tensor/ops.h"
#include "tests/tensor/backend_compare.h"

namespace edl::tensor::testing {

inline const std::vector<UpdateRule>& AllUpdateRules() {
  static const std::vector<UpdateRule> rules = {UpdateRule::kSgd,
                                                UpdateRule::kSgdMomentum,
                                                UpdateRule::kSgdNesterov,
                                                UpdateRule::kAdam,
                                                UpdateRule::kAmsgrad,
                                                UpdateRule::kAdamax,
                                                UpdateRule::kNadam,
                                                UpdateRule::kAdagrad,
                                                UpdateRule::kAdadelta,
                                                UpdateRule::kRmsprop,
                                                UpdateRule::kRmspropCentered,
                                                UpdateRule::kRmspropMomentum,
                                                UpdateRule::kRmspropMomentumCentered,
                                                UpdateRule::kFtrl,
                                                UpdateRule::kFtrlSqrt};
  return rules;
}

// Every field set (a rule reads only its own).
inline UpdateCoefficients TestCoefficients() {
  UpdateCoefficients c;
  c.lr = 0.05f;
  c.epsilon = 1e-7f;
  c.momentum = 0.9f;
  c.beta_1 = 0.9f;
  c.one_minus_beta_1 = 0.1f;
  c.beta_2 = 0.999f;
  c.one_minus_beta_2 = 0.001f;
  c.rho = 0.9f;
  c.one_minus_rho = 0.1f;
  c.grad_scale = 0.5f;
  c.m_scale = 0.6f;
  c.v_scale = 1.5f;
  c.inv_lr = 20.f;
  c.l1 = 0.01f;
  c.two_l2 = 0.02f;
  c.two_shrinkage = 0.01f;
  c.power = 0.7f;
  return c;
}

// The rule's slots for a value of `shape`: the first in [0.5, 1] (a square
// accumulator), the others in [0, 0.3] (so rms - mg^2 > 0).
inline std::vector<Tensor> TestSlots(UpdateRule rule, const Shape& shape, uint32_t seed) {
  std::vector<Tensor> slots;
  for (int k = 0; k < UpdateSlotCount(rule); ++k) {
    slots.push_back(k == 0 ? Random(shape, seed + k, 0.5f, 1.f)
                           : Random(shape, seed + k, 0.f, 0.3f));
  }
  return slots;
}

// Runs `rule` twice on copies moved to `device` (dense, or the rows `ids`
// when defined) and returns the value and the slots.
inline std::vector<Tensor> RunUpdate(UpdateRule rule, const Tensor& value, const Tensor& grad,
                                     const std::vector<Tensor>& slots, const Tensor& ids,
                                     Device device) {
  Tensor v = value.To(device);
  Tensor g = grad.To(device);
  Tensor i = ids.defined() ? ids.To(device) : Tensor();
  std::vector<Tensor> s;
  for (const Tensor& slot : slots) s.push_back(slot.To(device));
  for (int step = 0; step < 2; ++step) {
    ApplyUpdate(rule, TestCoefficients(), v, g, s, i);
  }
  std::vector<Tensor> out = {v};
  out.insert(out.end(), s.begin(), s.end());
  return out;
}

}  // namespace edl::tensor::testing
