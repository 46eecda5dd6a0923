// Every optimizer against its documented Keras formula, evaluated in double
// precision, plus hand-derived numbers for SGD with momentum and Adam.
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>

#include "nn/optim/adadelta.h"
#include "nn/optim/adagrad.h"
#include "nn/optim/adam.h"
#include "nn/optim/adamax.h"
#include "nn/optim/ftrl.h"
#include "nn/optim/nadam.h"
#include "nn/optim/rmsprop.h"
#include "nn/optim/sgd.h"
#include "tests/nn/optim/optimizer_test_util.h"

namespace edl::nn::optim {
namespace {

using tensor::Tensor;
using testing::ConstantLr;
using testing::ExpectMatchesReference;

void ExpectValues(const Tensor& t, const std::vector<double>& expected, double tolerance = 1e-6) {
  const std::vector<float> got = t.ToVector();
  ASSERT_EQ(got.size(), expected.size());
  for (size_t i = 0; i < got.size(); ++i) {
    EXPECT_NEAR(got[i], expected[i], tolerance) << "element " << i;
  }
}

TEST(SgdReference, MomentumMatchesHandDerivedValues) {
  Sgd opt({.learning_rate = 0.1, .momentum = 0.9});
  Tensor w = Tensor::FromVector({2}, {1.f, 2.f});
  const Tensor g = Tensor::FromVector({2}, {0.5f, -1.f});
  opt.ApplyDense("w", w, g);
  opt.FinishStep();
  ExpectValues(w, {0.95, 2.1});  // a = -0.05, +0.1
  opt.ApplyDense("w", w, g);
  opt.FinishStep();
  ExpectValues(w, {0.855, 2.29});  // a = 0.9 * -0.05 - 0.05 = -0.095
}

TEST(SgdReference, NesterovMomentumMatchesHandDerivedValues) {
  Sgd opt({.learning_rate = 0.1, .momentum = 0.9, .nesterov = true});
  Tensor w = Tensor::FromVector({2}, {1.f, 2.f});
  const Tensor g = Tensor::FromVector({2}, {0.5f, -1.f});
  opt.ApplyDense("w", w, g);
  opt.FinishStep();
  ExpectValues(w, {0.905, 2.19});  // w += 0.9 * -0.05 - 0.05
  opt.ApplyDense("w", w, g);
  opt.FinishStep();
  ExpectValues(w, {0.7695, 2.461});  // a = -0.095; w += -0.0855 - 0.05
}

TEST(AdamReference, FirstTwoStepsMatchHandDerivedValues) {
  // Step 1: m = 0.1 g, v = 0.001 g^2, lr_t = 0.1 * sqrt(0.001) / 0.1, so
  // w -= ~0.1 * sign(g). Step 2 with g = [-0.25, 2]: m = [0.02, 0.11],
  // v = [3.1225e-4, 4.999e-3], lr_t = 0.1 * sqrt(0.001999) / 0.19.
  Adam opt({.learning_rate = 0.1});
  Tensor w = Tensor::FromVector({2}, {1.f, 2.f});
  opt.ApplyDense("w", w, Tensor::FromVector({2}, {0.5f, -1.f}));
  opt.FinishStep();
  ExpectValues(w, {0.900000632, 2.099999684});
  opt.ApplyDense("w", w, Tensor::FromVector({2}, {-0.25f, 2.f}));
  opt.FinishStep();
  ExpectValues(w, {0.873367079, 2.063389383});
}

TEST(SgdReference, PlainSgdMatchesFormula) {
  Sgd opt({.learning_rate = 0.05});
  ExpectMatchesReference(
      opt, {}, [](double& w, double g, std::vector<double>&, int64_t, double lr) { w -= lr * g; },
      ConstantLr(0.05));
}

TEST(SgdReference, MomentumAndNesterovMatchFormula) {
  for (bool nesterov : {false, true}) {
    Sgd opt({.learning_rate = 0.05, .momentum = 0.8, .nesterov = nesterov});
    ExpectMatchesReference(
        opt, {0.0},
        [&](double& w, double g, std::vector<double>& s, int64_t, double lr) {
          s[0] = 0.8 * s[0] - lr * g;
          w += nesterov ? 0.8 * s[0] - lr * g : s[0];
        },
        ConstantLr(0.05));
  }
}

TEST(AdamReference, AdamAndAmsgradMatchFormula) {
  for (bool amsgrad : {false, true}) {
    Adam opt({.learning_rate = 0.01,
              .beta_1 = 0.8,
              .beta_2 = 0.99,
              .epsilon = 1e-3,
              .amsgrad = amsgrad});
    ExpectMatchesReference(
        opt, {0.0, 0.0, 0.0},
        [&](double& w, double g, std::vector<double>& s, int64_t t, double lr) {
          double& m = s[0];
          double& v = s[1];
          double& vhat = s[2];
          m = 0.8 * m + 0.2 * g;
          v = 0.99 * v + 0.01 * g * g;
          vhat = std::max(vhat, v);
          const double lr_t = lr * std::sqrt(1 - std::pow(0.99, t)) / (1 - std::pow(0.8, t));
          w -= lr_t * m / (std::sqrt(amsgrad ? vhat : v) + 1e-3);
        },
        ConstantLr(0.01));
  }
}

TEST(AdagradReference, MatchesFormula) {
  Adagrad opt({.learning_rate = 0.1, .initial_accumulator_value = 0.2, .epsilon = 1e-4});
  ExpectMatchesReference(
      opt, {0.2},
      [](double& w, double g, std::vector<double>& s, int64_t, double lr) {
        s[0] += g * g;
        w -= lr * g / (std::sqrt(s[0]) + 1e-4);
      },
      ConstantLr(0.1));
}

TEST(RmspropReference, AllFourVariantsMatchFormula) {
  for (double momentum : {0.0, 0.7}) {
    for (bool centered : {false, true}) {
      SCOPED_TRACE(::testing::Message() << "momentum " << momentum << " centered " << centered);
      Rmsprop opt({.learning_rate = 0.01,
                   .rho = 0.8,
                   .momentum = momentum,
                   .epsilon = 1e-3,
                   .centered = centered});
      ExpectMatchesReference(
          opt, {0.0, 0.0, 0.0},
          [&](double& w, double g, std::vector<double>& s, int64_t, double lr) {
            double& rms = s[0];
            double& mom = s[1];
            double& mg = s[2];
            rms = 0.8 * rms + 0.2 * g * g;
            mg = 0.8 * mg + 0.2 * g;
            const double denom = centered ? rms - mg * mg : rms;
            if (momentum == 0) {
              w -= lr * g / (std::sqrt(denom) + 1e-3);
            } else {
              mom = momentum * mom + lr * g / std::sqrt(denom + 1e-3);
              w -= mom;
            }
          },
          ConstantLr(0.01));
    }
  }
}

TEST(AdadeltaReference, MatchesFormula) {
  Adadelta opt({.learning_rate = 1.0, .rho = 0.9, .epsilon = 1e-4});
  ExpectMatchesReference(
      opt, {0.0, 0.0},
      [](double& w, double g, std::vector<double>& s, int64_t, double lr) {
        s[0] = 0.9 * s[0] + 0.1 * g * g;
        const double u = std::sqrt(s[1] + 1e-4) / std::sqrt(s[0] + 1e-4) * g;
        w -= lr * u;
        s[1] = 0.9 * s[1] + 0.1 * u * u;
      },
      ConstantLr(1.0));
}

TEST(AdamaxReference, MatchesFormula) {
  Adamax opt({.learning_rate = 0.02, .beta_1 = 0.85, .beta_2 = 0.95, .epsilon = 1e-3});
  ExpectMatchesReference(
      opt, {0.0, 0.0},
      [](double& w, double g, std::vector<double>& s, int64_t t, double lr) {
        s[0] = 0.85 * s[0] + 0.15 * g;
        s[1] = std::max(0.95 * s[1], std::fabs(g));
        w -= lr / (1 - std::pow(0.85, t)) * s[0] / (s[1] + 1e-3);
      },
      ConstantLr(0.02));
}

TEST(NadamReference, MatchesKerasMomentumScheduleFormula) {
  // Keras' default schedule decay, and a large one that makes mu_t vary.
  for (double decay : {0.004, 0.5}) {
    SCOPED_TRACE(decay);
    Nadam opt({.learning_rate = 0.01,
               .beta_1 = 0.9,
               .beta_2 = 0.99,
               .epsilon = 1e-3,
               .schedule_decay = decay});
    auto mu = [&](int64_t i) { return 0.9 * (1 - 0.5 * std::pow(0.96, decay * i)); };
    ExpectMatchesReference(
        opt, {0.0, 0.0},
        [&](double& w, double g, std::vector<double>& s, int64_t t, double lr) {
          double schedule = 1;
          for (int64_t i = 1; i <= t; ++i) schedule *= mu(i);
          const double schedule_next = schedule * mu(t + 1);
          s[0] = 0.9 * s[0] + 0.1 * g;
          s[1] = 0.99 * s[1] + 0.01 * g * g;
          const double g_prime = g / (1 - schedule);
          const double m_prime = s[0] / (1 - schedule_next);
          const double v_prime = s[1] / (1 - std::pow(0.99, t));
          const double m_bar = (1 - mu(t)) * g_prime + mu(t + 1) * m_prime;
          w -= lr * m_bar / (std::sqrt(v_prime) + 1e-3);
        },
        ConstantLr(0.01), 2e-6);
  }
}

// FTRL-Proximal, written from McMahan et al. 2013 Algorithm 1 with Keras'
// beta folded into l2 and the shrinkage added to the gradient.
void FtrlReference(double& w, double g, std::vector<double>& s, double lr, double power, double l1,
                   double l2, double shrinkage, double beta) {
  double& n = s[0];
  double& z = s[1];
  const double g_shrunk = g + 2 * shrinkage * w;
  const double n_new = n + g * g;
  const double sigma = (std::pow(n_new, -power) - std::pow(n, -power)) / lr;
  z += g_shrunk - sigma * w;
  const double l2_adjusted = l2 + beta / (2 * lr);
  if (std::fabs(z) <= l1) {
    w = 0;
  } else {
    const double sign = z > 0 ? 1 : -1;
    w = -(z - sign * l1) / (std::pow(n_new, -power) / lr + 2 * l2_adjusted);
  }
  n = n_new;
}

TEST(FtrlReference, DefaultsMatchFormula) {
  Ftrl opt({.learning_rate = 0.1});
  ExpectMatchesReference(
      opt, {0.1, 0.0},
      [](double& w, double g, std::vector<double>& s, int64_t, double lr) {
        FtrlReference(w, g, s, lr, -0.5, 0, 0, 0, 0);
      },
      ConstantLr(0.1));
}

TEST(FtrlReference, RegularizedWithGeneralPowerMatchesFormula) {
  Ftrl opt({.learning_rate = 0.1,
            .learning_rate_power = -0.6,
            .initial_accumulator_value = 0.3,
            .l1_regularization_strength = 0.05,
            .l2_regularization_strength = 0.2,
            .l2_shrinkage_regularization_strength = 0.1,
            .beta = 0.5});
  ExpectMatchesReference(
      opt, {0.3, 0.0},
      [](double& w, double g, std::vector<double>& s, int64_t, double lr) {
        FtrlReference(w, g, s, lr, -0.6, 0.05, 0.2, 0.1, 0.5);
      },
      ConstantLr(0.1));
}

TEST(FtrlReference, LargeL1KeepsWeightsAtZero) {
  Ftrl opt({.learning_rate = 0.1, .l1_regularization_strength = 100.0});
  Tensor w = Tensor::FromVector({3}, {0.5f, -1.f, 2.f});
  opt.ApplyDense("w", w, Tensor::FromVector({3}, {1.f, -2.f, 3.f}));
  ExpectValues(w, {0, 0, 0}, 0);
}

TEST(OptimizerReference, LargeTensorsTakeTheParallelPathAndStayElementwise) {
  // 200k elements exceed the parallel threshold; each element must still get
  // exactly the single-element update.
  const int64_t n = 200000;
  std::vector<float> w0(n), g(n);
  for (int64_t i = 0; i < n; ++i) {
    w0[i] = std::sin(0.001f * i);
    g[i] = std::cos(0.003f * i);
  }
  Adam big({.learning_rate = 0.01});
  Tensor w = Tensor::FromVector({n}, w0);
  big.ApplyDense("w", w, Tensor::FromVector({n}, g));
  const std::vector<float> got = w.ToVector();
  for (int64_t i : {int64_t{0}, int64_t{16383}, int64_t{16384}, int64_t{65537}, n - 1}) {
    Adam one({.learning_rate = 0.01});
    Tensor wi = Tensor::FromVector({1}, {w0[i]});
    one.ApplyDense("w", wi, Tensor::FromVector({1}, {g[i]}));
    EXPECT_EQ(got[i], wi.item()) << "element " << i;
  }
}

}  // namespace
}  // namespace edl::nn::optim
