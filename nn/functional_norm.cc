// Batch and layer normalization (nn/functional.h). An undefined gamma or
// beta (Keras scale=False / center=False) stands for ones / zeros.
#include <utility>

#include "nn/functional.h"
#include "nn/functional_util.h"

namespace edl::nn::fn {
namespace {

Tensor OrOnes(const Tensor& t, int64_t c, tensor::Device device) {
  return t.defined() ? t : internal::Ones({c}, device);
}
Tensor OrZeros(const Tensor& t, int64_t c, tensor::Device device) {
  return t.defined() ? t : Tensor::Zeros({c}, tensor::DType::kFloat32, device);
}

// moving += (1 - momentum) * (batch - moving), in place.
void UpdateMoving(Tensor& moving, const Tensor& batch, float momentum) {
  EDL_CHECK(moving.defined() && moving.shape() == batch.shape())
      << "moving statistic of shape " << tensor::ShapeString(moving.shape());
  tensor::AddInPlace(moving, tensor::Sub(batch, moving), 1.f - momentum);
}

// All axes but the last.
std::vector<int> LeadingAxes(int rank) {
  std::vector<int> axes;
  for (int i = 0; i + 1 < rank; ++i) axes.push_back(i);
  return axes;
}

}  // namespace

Var BatchNorm(const Var& x, const Var& gamma, const Var& beta, Tensor& moving_mean,
              Tensor& moving_variance, float momentum, float epsilon, bool training) {
  Tensor xv = x.value();
  const int64_t c = xv.dim(-1);
  Tensor g = OrOnes(gamma.value(), c, xv.device());
  Tensor bt = OrZeros(beta.value(), c, xv.device());
  const bool need_g = gamma.requires_grad(), need_b = beta.requires_grad();

  if (training) {
    tensor::BatchNormResult r = tensor::BatchNormTraining(xv, g, bt, epsilon);
    const int64_t n = xv.numel() / c;
    // Keras updates the moving variance with the unbiased batch variance.
    Tensor unbiased =
        n > 1 ? tensor::Affine(r.variance, static_cast<float>(n) / (n - 1), 0.f) : r.variance;
    UpdateMoving(moving_mean, r.mean, momentum);
    UpdateMoving(moving_variance, unbiased, momentum);
    Tensor mean = r.mean, var = r.variance;
    return MakeResult(
        r.y, {x, gamma, beta}, [xv, g, mean, var, epsilon, need_g, need_b](const Tensor& dy) {
          tensor::NormGrads d = tensor::BatchNormBackward(dy, xv, g, mean, var, epsilon);
          return std::vector<Tensor>{d.dx, need_g ? d.dgamma : Tensor(),
                                     need_b ? d.dbeta : Tensor()};
        });
  }

  Tensor mean = moving_mean, var = moving_variance;
  Tensor y = tensor::BatchNormInference(xv, g, bt, mean, var, epsilon);
  return MakeResult(
      std::move(y), {x, gamma, beta},
      [xv, g, mean, var, epsilon, need_g, need_b](const Tensor& dy) {
        // y = gamma * (x - mean) * inv + beta, inv = 1/sqrt(var + eps).
        Tensor inv =
            tensor::Div(internal::Ones(var.shape(), var.device()),
                        tensor::EltwiseForward(Eltwise::kSqrt, tensor::Affine(var, 1.f, epsilon)));
        Tensor dx = tensor::Mul(dy, tensor::Mul(g, inv));
        const std::vector<int> axes = LeadingAxes(xv.rank());
        Tensor dg, db;
        if (need_g) {
          Tensor xhat = tensor::Mul(tensor::Sub(xv, mean), inv);
          dg = tensor::ReduceOp(Reduce::kSum, tensor::Mul(dy, xhat), axes);
        }
        if (need_b) db = tensor::ReduceOp(Reduce::kSum, dy, axes);
        return std::vector<Tensor>{dx, dg, db};
      });
}

Var LayerNorm(const Var& x, const Var& gamma, const Var& beta, float epsilon) {
  Tensor xv = x.value();
  const int64_t c = xv.dim(-1);
  Tensor g = OrOnes(gamma.value(), c, xv.device());
  Tensor bt = OrZeros(beta.value(), c, xv.device());
  const bool need_g = gamma.requires_grad(), need_b = beta.requires_grad();
  tensor::LayerNormResult r = tensor::LayerNormForward(xv, g, bt, epsilon);
  Tensor mean = r.mean, var = r.variance;
  return MakeResult(
      r.y, {x, gamma, beta}, [xv, g, mean, var, epsilon, need_g, need_b](const Tensor& dy) {
        tensor::NormGrads d = tensor::LayerNormBackward(dy, xv, g, mean, var, epsilon);
        return std::vector<Tensor>{d.dx, need_g ? d.dgamma : Tensor(), need_b ? d.dbeta : Tensor()};
      });
}

}  // namespace edl::nn::fn
