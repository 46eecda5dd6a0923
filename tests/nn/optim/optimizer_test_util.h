// Shared test helpers: run an Optimizer for a few steps on a small vector and
// compare with a double-precision per-element reference of the documented
// formula.
#pragma once

#include <gtest/gtest.h>

#include <cmath>
#include <functional>
#include <vector>

#include "nn/optim/optimizer.h"
#include "tensor/tensor.h"

namespace edl::nn::optim::testing {

// Per-element reference update: w, g, this element's slots, t, lr.
using ReferenceStep =
    std::function<void(double& w, double g, std::vector<double>& slots, int64_t t, double lr)>;

inline const std::vector<float>& InitialWeights() {
  static const std::vector<float> w = {0.5f, -1.2f, 2.0f, 0.0f, -0.3f};
  return w;
}

inline const std::vector<std::vector<float>>& StepGradients() {
  static const std::vector<std::vector<float>> g = {{0.1f, -0.4f, 1.5f, 0.0f, -2.0f},
                                                    {-0.2f, 0.3f, 1.0f, 0.05f, -1.0f},
                                                    {0.7f, -0.1f, -0.5f, 0.2f, 0.3f},
                                                    {0.0f, 0.9f, -0.25f, -0.6f, 0.4f}};
  return g;
}

// Runs every step of StepGradients() through opt.ApplyDense + FinishStep and
// through `ref` (with slots starting at `slot_init`, learning rate lr(step)),
// and expects the weights to agree after each step.
inline void ExpectMatchesReference(Optimizer& opt, const std::vector<double>& slot_init,
                                   const ReferenceStep& ref,
                                   const std::function<double(int64_t)>& lr,
                                   double tolerance = 2e-5) {
  const std::vector<float>& w0 = InitialWeights();
  tensor::Tensor w = tensor::Tensor::FromVector({5}, w0);
  std::vector<double> ref_w(w0.begin(), w0.end());
  std::vector<std::vector<double>> ref_slots(w0.size(), slot_init);
  int64_t step = 0;
  for (const std::vector<float>& g : StepGradients()) {
    opt.ApplyDense("var", w, tensor::Tensor::FromVector({5}, g));
    opt.FinishStep();
    for (size_t i = 0; i < w0.size(); ++i) {
      ref(ref_w[i], g[i], ref_slots[i], step + 1, lr(step));
    }
    ++step;
    const std::vector<float> got = w.ToVector();
    for (size_t i = 0; i < w0.size(); ++i) {
      EXPECT_NEAR(got[i], ref_w[i], tolerance * std::max(1.0, std::fabs(ref_w[i])))
          << "step " << step << " element " << i;
    }
  }
}

inline std::function<double(int64_t)> ConstantLr(double lr) {
  return [lr](int64_t) { return lr; };
}

}  // namespace edl::nn::optim::testing
