// Scalar forward and backward of every Eltwise kind, in double precision:
// the definitions the backends are tested against (Keras conventions: exact
// erf gelu, selu constants from Klambauer et al. 2017, softplus log(1+e^x),
// swish x*sigmoid(x), relu/elu/clip gradients as TensorFlow's).
#pragma once

#include <algorithm>
#include <cmath>

#include "tensor/ops.h"

namespace edl::tensor::reference {

inline constexpr double kSeluScale = 1.0507009873554805;
inline constexpr double kSeluAlpha = 1.6732632423543772;

inline double Sigmoid(double x) { return 1.0 / (1.0 + std::exp(-x)); }

inline double EltwiseValue(Eltwise kind, double x, double alpha, double beta) {
  constexpr double kSqrt2OverPi = 0.7978845608028654;
  switch (kind) {
    case Eltwise::kRelu: return x > 0 ? x : alpha * x;
    case Eltwise::kSigmoid: return Sigmoid(x);
    case Eltwise::kTanh: return std::tanh(x);
    case Eltwise::kGelu: return 0.5 * x * (1.0 + std::erf(x / std::sqrt(2.0)));
    case Eltwise::kGeluTanh:
      return 0.5 * x * (1.0 + std::tanh(kSqrt2OverPi * (x + 0.044715 * x * x * x)));
    case Eltwise::kElu: return x > 0 ? x : alpha * (std::exp(x) - 1.0);
    case Eltwise::kSelu: return kSeluScale * (x > 0 ? x : kSeluAlpha * (std::exp(x) - 1.0));
    case Eltwise::kSoftplus: return std::max(x, 0.0) + std::log1p(std::exp(-std::abs(x)));
    case Eltwise::kSwish: return x * Sigmoid(x);
    case Eltwise::kLinear: return alpha * x + beta;
    case Eltwise::kExp: return std::exp(x);
    case Eltwise::kLog: return std::log(x);
    case Eltwise::kSqrt: return std::sqrt(x);
    case Eltwise::kSquare: return x * x;
    case Eltwise::kAbs: return std::abs(x);
    case Eltwise::kClip: return std::min(std::max(x, alpha), beta);
  }
  return 0;
}

// d(value)/dx at x.
inline double EltwiseDerivative(Eltwise kind, double x, double alpha, double beta) {
  constexpr double kSqrt2OverPi = 0.7978845608028654;
  constexpr double kInvSqrt2Pi = 0.3989422804014327;
  switch (kind) {
    case Eltwise::kRelu: return x > 0 ? 1.0 : alpha;
    case Eltwise::kSigmoid: {
      double s = Sigmoid(x);
      return s * (1.0 - s);
    }
    case Eltwise::kTanh: {
      double t = std::tanh(x);
      return 1.0 - t * t;
    }
    case Eltwise::kGelu:
      return 0.5 * (1.0 + std::erf(x / std::sqrt(2.0))) + x * kInvSqrt2Pi * std::exp(-0.5 * x * x);
    case Eltwise::kGeluTanh: {
      double u = kSqrt2OverPi * (x + 0.044715 * x * x * x);
      double t = std::tanh(u);
      double du = kSqrt2OverPi * (1.0 + 3.0 * 0.044715 * x * x);
      return 0.5 * (1.0 + t) + 0.5 * x * (1.0 - t * t) * du;
    }
    case Eltwise::kElu: return x > 0 ? 1.0 : alpha * std::exp(x);
    case Eltwise::kSelu: return kSeluScale * (x > 0 ? 1.0 : kSeluAlpha * std::exp(x));
    case Eltwise::kSoftplus: return Sigmoid(x);
    case Eltwise::kSwish: {
      double s = Sigmoid(x);
      return s + x * s * (1.0 - s);
    }
    case Eltwise::kLinear: return alpha;
    case Eltwise::kExp: return std::exp(x);
    case Eltwise::kLog: return 1.0 / x;
    case Eltwise::kSqrt: return 0.5 / std::sqrt(x);
    case Eltwise::kSquare: return 2.0 * x;
    case Eltwise::kAbs: return x > 0 ? 1.0 : (x < 0 ? -1.0 : 0.0);
    case Eltwise::kClip: return (x >= alpha && x <= beta) ? 1.0 : 0.0;
  }
  return 0;
}

}  // namespace edl::tensor::reference
