// nn/ on a device: losses, penalties, dropout, extrema, reductions and
// embeddings with their inputs on Device::kCUDA, backed by the host-memory
// fake runtime (tests/testing/host_memory_device_runtime.h). Any host tensor
// that leaks into device work CHECK-fails an op; results must match the CPU
// runs (bit for bit where the same kernels run, to float rounding where the
// device composes ops that the CPU fuses in double).
#include <gtest/gtest.h>

#include <cmath>
#include <random>
#include <string>
#include <vector>

#include "nn/functional.h"
#include "nn/functional_rnn.h"
#include "nn/losses.h"
#include "nn/regularizer.h"
#include "tensor/ops.h"
#include "tests/nn/gradient_check.h"
#include "tests/testing/host_memory_device_runtime.h"

namespace edl::nn {
namespace {

using ::edl::nn::testing::RandomTensor;
using tensor::Device;

constexpr Device kDev = Device::kCUDA;

Parameter Param(const std::string& name, Tensor value) {
  Parameter p;
  p.name = name;
  p.value = std::move(value);
  return p;
}

class NnOnDevice : public ::testing::Test {
 protected:
  ::edl::testing::HostMemoryDeviceRuntime fake_;
  tensor::ScopedDeviceRuntime scope_{kDev, &fake_};
};

// |got - want| <= tol * max|want| elementwise (relative to the tensor's
// scale, so small gradients are held to the same precision as large ones).
void ExpectNear(const Tensor& got, const Tensor& want, float tol, const std::string& what) {
  ASSERT_EQ(got.shape(), want.shape()) << what;
  const std::vector<float> g = got.ToVector(), w = want.ToVector();
  float scale = 0;
  for (float v : w) scale = std::max(scale, std::abs(v));
  for (size_t i = 0; i < g.size(); ++i) {
    ASSERT_NEAR(g[i], w[i], tol * scale) << what << " [" << i << "]";
  }
}

struct LossCase {
  std::string name;
  bool from_logits;
  float smoothing;
};

std::unique_ptr<Loss> Make(const LossCase& c) {
  LossOptions o;
  o.name = c.name;
  o.from_logits = c.from_logits;
  o.label_smoothing = c.smoothing;
  auto loss = MakeLoss(o);
  EXPECT_TRUE(loss.ok()) << loss.status().message();
  return std::move(loss).value();
}

// Softmax rows of random logits: probabilities well inside (0, 1).
Tensor Probabilities(const Shape& shape, std::mt19937_64& rng) {
  return tensor::Softmax(RandomTensor(shape, rng, -2.f, 2.f), -1);
}

TEST_F(NnOnDevice, EveryLossMatchesTheHostLossAndGradientAndStaysOnTheDevice) {
  const std::vector<LossCase> cases = {
      {"sparse_categorical_crossentropy", true, 0.f},
      {"sparse_categorical_crossentropy", false, 0.f},
      {"categorical_crossentropy", true, 0.f},
      {"categorical_crossentropy", true, 0.1f},
      {"categorical_crossentropy", false, 0.2f},
      {"binary_crossentropy", true, 0.f},
      {"binary_crossentropy", false, 0.1f},
      {"mean_squared_error", false, 0.f},
      {"mean_absolute_error", false, 0.f},
      {"huber", false, 0.f},
  };
  std::mt19937_64 rng(3);
  for (const LossCase& c : cases) {
    const std::string what =
        c.name + (c.from_logits ? " logits" : "") + " smoothing " + std::to_string(c.smoothing);
    const bool sparse = c.name.rfind("sparse", 0) == 0;
    const bool probs = !c.from_logits && c.name.find("crossentropy") != std::string::npos;
    Tensor y_pred = probs ? (c.name == "binary_crossentropy"
                                 ? tensor::EltwiseForward(tensor::Eltwise::kSigmoid,
                                                          RandomTensor({6, 5}, rng, -3.f, 3.f))
                                 : Probabilities({6, 5}, rng))
                          : RandomTensor({6, 5}, rng, -2.f, 2.f);
    Tensor y_true;
    if (sparse) {
      y_true = Tensor::FromInts({6}, {0, 4, 2, 2, 1, 3});
    } else if (c.name.find("categorical") != std::string::npos) {
      y_true = Probabilities({6, 5}, rng);  // soft targets
    } else if (c.name == "binary_crossentropy") {
      y_true =
          tensor::Cast(tensor::Cast(RandomTensor({6, 5}, rng, 0.f, 1.99f), tensor::DType::kInt64),
                       tensor::DType::kFloat32);
    } else {
      y_true = RandomTensor({6, 5}, rng, -2.f, 2.f);
    }
    auto loss = Make(c);
    Parameter host = Param("p", y_pred.Clone());
    Var l_host = loss->Compute(Use(host), y_true);
    Backward(l_host);
    Parameter dev = Param("p", y_pred.To(kDev));
    Var l_dev = loss->Compute(Use(dev), y_true);  // labels stay on the host
    ASSERT_EQ(l_dev.value().device(), kDev) << what;
    ASSERT_EQ(l_dev.shape(), l_host.shape()) << what;
    Backward(l_dev);
    ASSERT_TRUE(dev.grad.defined()) << what;
    EXPECT_EQ(dev.grad.device(), kDev) << what;
    ExpectNear(l_dev.value(), l_host.value(), 1e-5f, what + " loss");
    ExpectNear(dev.grad, host.grad, 1e-5f, what + " gradient");
  }
}

TEST_F(NnOnDevice, ALossScalesItsGradientBySeedOnTheDevice) {
  std::mt19937_64 rng(4);
  auto loss = Make({"mean_squared_error", false, 0.f});
  const Tensor y_pred = RandomTensor({4, 3}, rng), y_true = RandomTensor({4, 3}, rng);
  Parameter host = Param("p", y_pred.Clone());
  Backward(loss->Compute(Use(host), y_true), Tensor::Scalar(-2.5f));
  Parameter dev = Param("p", y_pred.To(kDev));
  Backward(loss->Compute(Use(dev), y_true), Tensor::Scalar(-2.5f, kDev));
  ExpectNear(dev.grad, host.grad, 1e-6f, "seeded gradient");
}

TEST_F(NnOnDevice, TheWeightPenaltyMatchesTheHostPenaltyAndGradient) {
  std::mt19937_64 rng(5);
  const Regularizer r{0.01, 0.03};
  const Tensor w = RandomTensor({7, 3}, rng);
  Parameter host = Param("w", w.Clone());
  Var v_host = r.Penalty(Use(host));
  Backward(v_host);
  Parameter dev = Param("w", w.To(kDev));
  Var v_dev = r.Penalty(Use(dev));
  EXPECT_EQ(v_dev.value().device(), kDev);
  Backward(v_dev);
  ExpectNear(v_dev.value(), v_host.value(), 1e-6f, "penalty");
  ExpectNear(dev.grad, host.grad, 1e-6f, "penalty gradient");
}

TEST_F(NnOnDevice, DropoutDropsTheSameUnitsAsOnTheHost) {
  std::mt19937_64 data(6);
  const Tensor x = RandomTensor({5, 8}, data);
  std::mt19937_64 rng_host(42), rng_dev(42);
  Parameter host = Param("x", x.Clone());
  Parameter dev = Param("x", x.To(kDev));
  Var y_host = fn::Dropout(Use(host), 0.4f, rng_host, true);
  Var y_dev = fn::Dropout(Use(dev), 0.4f, rng_dev, true);
  ASSERT_EQ(y_dev.value().device(), kDev);
  EXPECT_EQ(y_dev.value().ToVector(), y_host.value().ToVector());
  Backward(fn::Sum(y_host));
  Backward(fn::Sum(y_dev));
  EXPECT_EQ(dev.grad.ToVector(), host.grad.ToVector());
}

TEST_F(NnOnDevice, MaximumMinimumAndMaxReductionsSendTheSameGradients) {
  std::mt19937_64 rng(7);
  const Tensor a = RandomTensor({4, 3}, rng), b = RandomTensor({3}, rng);
  for (int variant = 0; variant < 3; ++variant) {
    Parameter ha = Param("a", a.Clone());
    Parameter hb = Param("b", b.Clone());
    Parameter da = Param("a", a.To(kDev));
    Parameter db = Param("b", b.To(kDev));
    auto run = [variant](Parameter& pa, Parameter& pb) {
      if (variant == 0) return fn::Sum(fn::Maximum(Use(pa), Use(pb)));
      if (variant == 1) return fn::Sum(fn::Minimum(Use(pa), Use(pb)));
      return fn::Sum(fn::ReduceOp(tensor::Reduce::kMax, Use(pa), {1}, false));
    };
    Backward(run(ha, hb));
    Backward(run(da, db));
    EXPECT_EQ(da.grad.device(), kDev);
    EXPECT_EQ(da.grad.ToVector(), ha.grad.ToVector()) << variant;
    if (variant < 2) {
      EXPECT_EQ(db.grad.ToVector(), hb.grad.ToVector()) << variant;
    }
  }
}

TEST_F(NnOnDevice, EmbeddingSparseGradientsAccumulateOnTheDevice) {
  std::mt19937_64 rng(8);
  const Tensor table = RandomTensor({10, 4}, rng);
  const Tensor ids1 = Tensor::FromInts({2, 2}, {1, 7, 7, 3});
  const Tensor ids2 = Tensor::FromInts({3}, {0, 1, 9});
  Parameter host = Param("emb", table.Clone());
  Parameter dev = Param("emb", table.To(kDev));
  Backward(fn::Add(fn::Sum(fn::Embedding(host, ids1)),
                   fn::Sum(fn::Affine(fn::Embedding(host, ids2), 2.f))));
  Backward(fn::Add(fn::Sum(fn::Embedding(dev, ids1.To(kDev))),
                   fn::Sum(fn::Affine(fn::Embedding(dev, ids2.To(kDev)), 2.f))));
  ASSERT_TRUE(dev.sparse_grad.has_value());
  EXPECT_EQ(dev.sparse_grad->ids.device(), kDev);
  EXPECT_EQ(dev.sparse_grad->values.device(), kDev);
  EXPECT_EQ(dev.sparse_grad->ids.ToVector(), host.sparse_grad->ids.ToVector());
  EXPECT_EQ(dev.sparse_grad->values.ToVector(), host.sparse_grad->values.ToVector());
}

TEST_F(NnOnDevice, BatchNormWithoutScaleOrCenterMakesItsConstantsOnTheDevice) {
  std::mt19937_64 rng(9);
  const Tensor x = RandomTensor({6, 3}, rng);
  Tensor mean_h = Tensor::Zeros({3}), var_h = Tensor::Full({3}, 1.f);
  Tensor mean_d = mean_h.To(kDev), var_d = var_h.To(kDev);
  Parameter host = Param("x", x.Clone());
  Parameter dev = Param("x", x.To(kDev));
  for (bool training : {true, false}) {
    Backward(fn::Sum(fn::Mul(
        fn::BatchNorm(Use(host), Var(), Var(), mean_h, var_h, 0.9f, 1e-3f, training), Var(x))));
    Backward(
        fn::Sum(fn::Mul(fn::BatchNorm(Use(dev), Var(), Var(), mean_d, var_d, 0.9f, 1e-3f, training),
                        Var(x.To(kDev)))));
  }
  EXPECT_EQ(dev.grad.ToVector(), host.grad.ToVector());
  EXPECT_EQ(mean_d.ToVector(), mean_h.ToVector());
  EXPECT_EQ(var_d.ToVector(), var_h.ToVector());
}

TEST_F(NnOnDevice, WholeSequenceRecurrencesRunOnTheDeviceAndMatchTheHost) {
  using tensor::RnnCell;
  std::mt19937_64 rng(10);
  const int64_t n = 3, t = 4, f = 5, u = 2;
  for (RnnCell cell :
       {RnnCell::kSimpleRNN, RnnCell::kLSTM, RnnCell::kGRU, RnnCell::kGRUResetAfter}) {
    for (bool with_bias : {true, false}) {
      // Without a bias the sequence's gradient is left undefined, as when a
      // model reads only the last state.
      const bool whole_sequence = with_bias;
      SCOPED_TRACE(std::to_string(static_cast<int>(cell)) + (with_bias ? " bias" : " no bias"));
      ASSERT_TRUE(fn::RnnPrimitiveAvailable(kDev, cell));
      const int64_t g = tensor::RnnGates(cell);
      const Tensor x = RandomTensor({n, t, f}, rng), wx = RandomTensor({f, g * u}, rng),
                   wh = RandomTensor({u, g * u}, rng),
                   b = RandomTensor(
                       cell == RnnCell::kGRUResetAfter ? Shape{2, g * u} : Shape{g * u}, rng);
      const Tensor seed_y = RandomTensor({n, t, u}, rng), seed_h = RandomTensor({n, u}, rng);
      auto run = [&](Device d, std::vector<Parameter>& ps) {
        ps = {Param("x", x.To(d)), Param("wx", wx.To(d)), Param("wh", wh.To(d)),
              Param("b", b.To(d))};
        std::vector<Var> out = fn::Rnn(cell, /*reverse=*/true, Use(ps[0]), Use(ps[1]), Use(ps[2]),
                                       with_bias ? Use(ps[3]) : Var());
        EXPECT_EQ(out[0].value().device(), d);
        Var last = fn::Sum(fn::Mul(out[1], Var(seed_h.To(d))));
        Backward(whole_sequence ? fn::Add(fn::Sum(fn::Mul(out[0], Var(seed_y.To(d)))), last)
                                : last);
        return out;
      };
      std::vector<Parameter> host, dev;
      std::vector<Var> want = run(Device::kCPU, host), got = run(kDev, dev);
      for (size_t i = 0; i < want.size(); ++i) {
        ExpectNear(got[i].value(), want[i].value(), 1e-6f, "output " + std::to_string(i));
      }
      for (size_t i = 0; i < (with_bias ? 4u : 3u); ++i) {
        EXPECT_EQ(dev[i].grad.device(), kDev);
        ExpectNear(dev[i].grad, host[i].grad, 1e-6f, "gradient of " + host[i].name);
      }
    }
  }
}

TEST_F(NnOnDevice, AHostTensorMixedIntoDeviceWorkFailsLoudly) {
  GTEST_FLAG_SET(death_test_style, "threadsafe");
  const Tensor host = Tensor::Full({3}, 1.f);
  const Tensor dev = host.To(kDev);
  EXPECT_DEATH(tensor::Add(dev, host), "tensors on cuda and cpu");
}

}  // namespace
}  // namespace edl::nn
