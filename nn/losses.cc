// The Keras losses as fused graph nodes: one pass computes the mean loss and
// its gradient with respect to y_pred; backward scales that gradient by the
// seed. Formulas follow tf.keras.backend (TF 2.x): probabilities are clipped
// to [eps, 1 - eps] and the clip passes no gradient outside that range.
//
// On the CPU each loss is one fused host loop (in double); predictions on an
// accelerator go through the same formulas composed from tensor ops
// (nn/loss_ops.h), so the loss and its gradient stay on the device.
#include "nn/losses.h"

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <vector>

#include "nn/keras_object.h"
#include "nn/loss_ops.h"

namespace edl::nn {
namespace {

constexpr double kEps = kLossEpsilon;

bool WantGrad(const Var& y_pred) { return y_pred.requires_grad() && GradEnabled(); }

bool OnDevice(const Var& y_pred) { return y_pred.value().device() != tensor::Device::kCPU; }

// A scalar Var with value r.loss whose gradient for seed s is s * r.grad,
// all on the device (the seed is multiplied in, never read on the host).
Var FusedLoss(internal::LossAndGrad r, const Var& y_pred) {
  if (!r.grad.defined()) return Var(std::move(r.loss));
  return MakeResult(std::move(r.loss), {y_pred}, [grad = std::move(r.grad)](const Tensor& dy) {
    return std::vector<Tensor>{tensor::Mul(grad, dy)};
  });
}

// A scalar Var with value `loss` whose gradient for seed s is s * grad.
Var FusedLoss(double loss, const Var& y_pred, Tensor grad) {
  if (!grad.defined()) return Var(Tensor::Scalar(static_cast<float>(loss)));
  return MakeResult(Tensor::Scalar(static_cast<float>(loss)), {y_pred},
                    [grad = std::move(grad)](const Tensor& dy) {
                      const float s = dy.item();
                      return std::vector<Tensor>{s == 1.f ? grad : tensor::Affine(grad, s, 0.f)};
                    });
}

int64_t NumClasses(const Tensor& y_pred) {
  EDL_CHECK_GE(y_pred.rank(), 1) << "loss of a scalar prediction";
  return y_pred.dim(-1);
}

// CHECKs that there is one label value per prediction.
void CheckOneLabelPerPrediction(const Tensor& y_true, const Tensor& y_pred) {
  EDL_CHECK_EQ(y_true.numel(), y_pred.numel())
      << "labels " << tensor::ShapeString(y_true.shape()) << " vs predictions "
      << tensor::ShapeString(y_pred.shape());
}

// y_true as float32 with y_pred's shape.
Tensor DenseLabels(const Tensor& y_true, const Tensor& y_pred) {
  CheckOneLabelPerPrediction(y_true, y_pred);
  const Tensor host = y_true.On(tensor::Device::kCPU);
  Tensor t =
      host.dtype() == tensor::DType::kFloat32 ? host : tensor::Cast(host, tensor::DType::kFloat32);
  return t;
}

// Class ids, one per row of y_pred.
std::vector<int64_t> SparseLabels(const Tensor& y_true, int64_t rows, int64_t classes) {
  EDL_CHECK_EQ(y_true.numel(), rows) << "sparse labels " << tensor::ShapeString(y_true.shape())
                                     << " for " << rows << " rows of predictions";
  std::vector<int64_t> ids(rows);
  const Tensor host = y_true.On(tensor::Device::kCPU);
  if (host.dtype() == tensor::DType::kInt64) {
    std::copy(host.i64(), host.i64() + rows, ids.begin());
  } else {
    const float* f = host.f32();
    for (int64_t r = 0; r < rows; ++r) ids[r] = std::lround(f[r]);
  }
  for (int64_t r = 0; r < rows; ++r) {
    EDL_CHECK(ids[r] >= 0 && ids[r] < classes)
        << "label " << ids[r] << " outside [0, " << classes << ")";
  }
  return ids;
}

class SparseCategoricalCrossentropy : public Loss {
 public:
  Status Validate(const Tensor& y_true, const Tensor& y_pred) const override {
    const int64_t classes = y_pred.rank() >= 1 ? y_pred.dim(-1) : 0;
    const int64_t rows = classes > 0 ? y_pred.numel() / classes : -1;
    if (rows < 0 || y_true.numel() != rows) {
      return InvalidArgument("loss " + name() +
                             " needs one class id per row of class "
                             "scores, but the labels are " +
                             tensor::ShapeString(y_true.shape()) + " and the model's output " +
                             tensor::ShapeString(y_pred.shape()));
    }
    const Tensor labels = y_true.On(tensor::Device::kCPU);
    for (int64_t r = 0; r < rows; ++r) {
      const double v = labels.dtype() == tensor::DType::kInt64
                           ? static_cast<double>(labels.i64()[r])
                           : static_cast<double>(labels.f32()[r]);
      if (v < 0 || v >= static_cast<double>(classes) || v != std::floor(v)) {
        char label[32];
        std::snprintf(label, sizeof label, "%g", v);
        return InvalidArgument("label " + std::string(label) +
                               " is not a class id of the model's " + std::to_string(classes) +
                               " outputs (expected 0.." + std::to_string(classes - 1) + ")");
      }
    }
    return Status::Ok();
  }
  explicit SparseCategoricalCrossentropy(bool from_logits) : from_logits_(from_logits) {}
  std::string name() const override { return "sparse_categorical_crossentropy"; }

  Var Compute(const Var& y_pred, const Tensor& y_true) const override {
    const Tensor& x = y_pred.value();
    const int64_t c = NumClasses(x);
    if (OnDevice(y_pred)) {
      return FusedLoss(internal::SparseCrossentropyOps(x, y_true, from_logits_, WantGrad(y_pred)),
                       y_pred);
    }
    const int64_t rows = x.numel() / c;
    const std::vector<int64_t> ids = SparseLabels(y_true, rows, c);
    const bool want = WantGrad(y_pred);
    Tensor grad = want ? Tensor::Empty(x.shape()) : Tensor();
    const float* px = x.f32();
    float* pg = want ? grad.f32() : nullptr;
    const float inv_rows = 1.f / static_cast<float>(rows);
    double total = 0;
    for (int64_t r = 0; r < rows; ++r) {
      const float* row = px + r * c;
      const int64_t label = ids[r];
      if (from_logits_) {
        // Fused log-softmax + pick; gradient (softmax - onehot) / rows.
        float m = row[0];
        for (int64_t j = 1; j < c; ++j) m = std::max(m, row[j]);
        double sum = 0;
        for (int64_t j = 0; j < c; ++j) sum += std::exp(static_cast<double>(row[j] - m));
        total += std::log(sum) + m - row[label];
        if (want) {
          float* g = pg + r * c;
          const double inv_sum = 1.0 / sum;
          for (int64_t j = 0; j < c; ++j) {
            g[j] =
                static_cast<float>(std::exp(static_cast<double>(row[j] - m)) * inv_sum) * inv_rows;
          }
          g[label] -= inv_rows;
        }
      } else {
        const double p = row[label];
        total -= std::log(std::clamp(p, kEps, 1 - kEps));
        if (want) {
          float* g = pg + r * c;
          std::fill(g, g + c, 0.f);
          if (p >= kEps && p <= 1 - kEps) g[label] = static_cast<float>(-1.0 / p) * inv_rows;
        }
      }
    }
    return FusedLoss(total / rows, y_pred, std::move(grad));
  }

 private:
  bool from_logits_;
};

class CategoricalCrossentropy : public Loss {
 public:
  CategoricalCrossentropy(bool from_logits, float label_smoothing)
      : from_logits_(from_logits), smoothing_(label_smoothing) {}
  std::string name() const override { return "categorical_crossentropy"; }

  Var Compute(const Var& y_pred, const Tensor& y_true) const override {
    const Tensor& x = y_pred.value();
    const int64_t c = NumClasses(x);
    if (OnDevice(y_pred)) {
      return FusedLoss(
          internal::CrossentropyOps(x, y_true, from_logits_, smoothing_, WantGrad(y_pred)), y_pred);
    }
    const int64_t rows = x.numel() / c;
    Tensor t = DenseLabels(y_true, x);
    const bool want = WantGrad(y_pred);
    Tensor grad = want ? Tensor::Empty(x.shape()) : Tensor();
    std::vector<double> target(c), work(c);
    const double inv_rows = 1.0 / rows;
    double total = 0;
    for (int64_t r = 0; r < rows; ++r) {
      const float* row = x.f32() + r * c;
      const float* tr = t.f32() + r * c;
      double tsum = 0;
      for (int64_t j = 0; j < c; ++j) {
        target[j] = tr[j] * (1.0 - smoothing_) + smoothing_ / static_cast<double>(c);
        tsum += target[j];
      }
      float* g = want ? grad.f32() + r * c : nullptr;
      if (from_logits_) {
        // -sum t log softmax = tsum * lse - sum t x; d/dx = tsum * softmax - t.
        double m = row[0];
        for (int64_t j = 1; j < c; ++j) m = std::max<double>(m, row[j]);
        double sum = 0;
        for (int64_t j = 0; j < c; ++j) sum += (work[j] = std::exp(row[j] - m));
        const double lse = std::log(sum) + m;
        for (int64_t j = 0; j < c; ++j) total += target[j] * (lse - row[j]);
        if (want) {
          for (int64_t j = 0; j < c; ++j) {
            g[j] = static_cast<float>((tsum * work[j] / sum - target[j]) * inv_rows);
          }
        }
      } else {
        // o = p / sum(p); loss = -sum t log clip(o).
        double s = 0;
        for (int64_t j = 0; j < c; ++j) s += row[j];
        double dot = 0;  // sum_i g_i o_i with g_i = dloss/do_i
        for (int64_t j = 0; j < c; ++j) {
          const double o = row[j] / s;
          total -= target[j] * std::log(std::clamp(o, kEps, 1 - kEps));
          work[j] = (o >= kEps && o <= 1 - kEps) ? -target[j] / o : 0.0;
          dot += work[j] * o;
        }
        if (want) {
          for (int64_t j = 0; j < c; ++j) {
            g[j] = static_cast<float>((work[j] - dot) / s * inv_rows);
          }
        }
      }
    }
    return FusedLoss(total / rows, y_pred, std::move(grad));
  }

 private:
  bool from_logits_;
  float smoothing_;
};

class BinaryCrossentropy : public Loss {
 public:
  BinaryCrossentropy(bool from_logits, float label_smoothing)
      : from_logits_(from_logits), smoothing_(label_smoothing) {}
  std::string name() const override { return "binary_crossentropy"; }

  Var Compute(const Var& y_pred, const Tensor& y_true) const override {
    const Tensor& x = y_pred.value();
    if (OnDevice(y_pred)) {
      CheckOneLabelPerPrediction(y_true, x);
      return FusedLoss(
          internal::BinaryCrossentropyOps(x, y_true, from_logits_, smoothing_, WantGrad(y_pred)),
          y_pred);
    }
    Tensor t = DenseLabels(y_true, x);
    const int64_t n = x.numel();
    const bool want = WantGrad(y_pred);
    Tensor grad = want ? Tensor::Empty(x.shape()) : Tensor();
    const double inv_n = 1.0 / n;
    double total = 0;
    for (int64_t i = 0; i < n; ++i) {
      const double z = t.f32()[i] * (1.0 - smoothing_) + 0.5 * smoothing_;
      const double v = x.f32()[i];
      double g;
      if (from_logits_) {
        // max(v, 0) - v z + log(1 + exp(-|v|)); d/dv = sigmoid(v) - z.
        total += std::max(v, 0.0) - v * z + std::log1p(std::exp(-std::abs(v)));
        g = 1.0 / (1.0 + std::exp(-v)) - z;
      } else {
        const double o = std::clamp(v, kEps, 1 - kEps);
        total -= z * std::log(o + kEps) + (1 - z) * std::log(1 - o + kEps);
        g = (v >= kEps && v <= 1 - kEps) ? -(z / (o + kEps) - (1 - z) / (1 - o + kEps)) : 0;
      }
      if (want) grad.f32()[i] = static_cast<float>(g * inv_n);
    }
    return FusedLoss(total * inv_n, y_pred, std::move(grad));
  }

 private:
  bool from_logits_;
  float smoothing_;
};

// Regression losses: the mean over all elements of f(y_pred - y_true).
class Regression : public Loss {
 public:
  enum class Kind { kSquared, kAbsolute, kHuber };
  Regression(Kind kind, float delta) : kind_(kind), delta_(delta) {}
  std::string name() const override {
    switch (kind_) {
      case Kind::kSquared: return "mean_squared_error";
      case Kind::kAbsolute: return "mean_absolute_error";
      case Kind::kHuber: return "huber";
    }
    return "";
  }

  Var Compute(const Var& y_pred, const Tensor& y_true) const override {
    const Tensor& x = y_pred.value();
    if (OnDevice(y_pred)) {
      CheckOneLabelPerPrediction(y_true, x);
      const internal::RegressionKind kind =
          kind_ == Kind::kSquared    ? internal::RegressionKind::kSquared
          : kind_ == Kind::kAbsolute ? internal::RegressionKind::kAbsolute
                                     : internal::RegressionKind::kHuber;
      return FusedLoss(internal::RegressionOps(kind, delta_, x, y_true, WantGrad(y_pred)), y_pred);
    }
    Tensor t = DenseLabels(y_true, x);
    const int64_t n = x.numel();
    const bool want = WantGrad(y_pred);
    Tensor grad = want ? Tensor::Empty(x.shape()) : Tensor();
    const double inv_n = 1.0 / n, d = delta_;
    double total = 0;
    for (int64_t i = 0; i < n; ++i) {
      const double e = static_cast<double>(x.f32()[i]) - t.f32()[i];
      double g;
      switch (kind_) {
        case Kind::kSquared:
          total += e * e;
          g = 2 * e;
          break;
        case Kind::kAbsolute:
          total += std::abs(e);
          g = e > 0 ? 1 : (e < 0 ? -1 : 0);
          break;
        case Kind::kHuber:
        default:
          if (std::abs(e) <= d) {
            total += 0.5 * e * e;
            g = e;
          } else {
            total += d * (std::abs(e) - 0.5 * d);
            g = e > 0 ? d : -d;
          }
          break;
      }
      if (want) grad.f32()[i] = static_cast<float>(g * inv_n);
    }
    return FusedLoss(total * inv_n, y_pred, std::move(grad));
  }

 private:
  Kind kind_;
  float delta_;
};

}  // namespace

Loss::~Loss() = default;

Status Loss::Validate(const Tensor& y_true, const Tensor& y_pred) const {
  if (y_true.numel() == y_pred.numel()) return Status::Ok();
  return InvalidArgument(
      "loss " + name() +
      " needs one label value per prediction, but "
      "the labels are " +
      tensor::ShapeString(y_true.shape()) + " and the model's output " +
      tensor::ShapeString(y_pred.shape()) +
      (y_pred.rank() >= 2 && y_pred.dim(-1) > 1 && y_true.numel() * y_pred.dim(-1) == y_pred.numel()
           ? " (class ids need sparse_categorical_crossentropy)"
           : ""));
}

Result<std::unique_ptr<Loss>> MakeLoss(const LossOptions& o) {
  const std::string c = internal::CanonicalName(o.name);
  if (o.label_smoothing < 0 || o.label_smoothing > 1) {
    return InvalidArgument("loss " + o.name + ": label_smoothing must be in [0, 1], got " +
                           std::to_string(o.label_smoothing));
  }
  if (c == "sparsecategoricalcrossentropy") {
    if (o.label_smoothing != 0) {
      return InvalidArgument("loss " + o.name + ": label_smoothing is not supported");
    }
    return std::unique_ptr<Loss>(new SparseCategoricalCrossentropy(o.from_logits));
  }
  if (c == "categoricalcrossentropy") {
    return std::unique_ptr<Loss>(new CategoricalCrossentropy(o.from_logits, o.label_smoothing));
  }
  if (c == "binarycrossentropy") {
    return std::unique_ptr<Loss>(new BinaryCrossentropy(o.from_logits, o.label_smoothing));
  }
  if (c == "meansquarederror" || c == "mse") {
    return std::unique_ptr<Loss>(new Regression(Regression::Kind::kSquared, 0));
  }
  if (c == "meanabsoluteerror" || c == "mae") {
    return std::unique_ptr<Loss>(new Regression(Regression::Kind::kAbsolute, 0));
  }
  if (c == "huber" || c == "huberloss") {
    if (!(o.delta > 0)) {
      return InvalidArgument("loss " + o.name + ": delta must be positive");
    }
    return std::unique_ptr<Loss>(new Regression(Regression::Kind::kHuber, o.delta));
  }
  return InvalidArgument("unknown loss \"" + o.name +
                         "\" (known: sparse_categorical_crossentropy, "
                         "categorical_crossentropy, binary_crossentropy, "
                         "mean_squared_error, mean_absolute_error, huber)");
}

}  // namespace edl::nn
