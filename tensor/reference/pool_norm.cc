// Reference loops: pooling, batch/layer normalization and softmax.
#include <cmath>
#include <limits>
#include <vector>

#include "tensor/reference/loop_backend.h"

namespace edl::tensor::reference {
namespace {

// Calls f(y_index, x_index) for every in-image tap of every pooling window
// (padded positions are skipped), then done(y_index, taps) per window.
template <typename F, typename G>
void ForEachWindow(const Shape& xs, const Shape& ys, const Pool2DParams& p, F f, G done) {
  const int64_t n = xs[0], h = xs[1], w = xs[2], c = xs[3];
  const int64_t oh = ys[1], ow = ys[2];
  for (int64_t b = 0; b < n; ++b)
    for (int64_t i = 0; i < oh; ++i)
      for (int64_t j = 0; j < ow; ++j)
        for (int64_t ch = 0; ch < c; ++ch) {
          int64_t yi = ((b * oh + i) * ow + j) * c + ch;
          int64_t taps = 0;
          for (int64_t u = 0; u < p.kernel[0]; ++u) {
            int64_t hi = i * p.strides[0] + u - p.padding[0];
            if (hi < 0 || hi >= h) continue;
            for (int64_t v = 0; v < p.kernel[1]; ++v) {
              int64_t wi = j * p.strides[1] + v - p.padding[2];
              if (wi < 0 || wi >= w) continue;
              f(yi, ((b * h + hi) * w + wi) * c + ch);
              ++taps;
            }
          }
          done(yi, taps);
        }
}

}  // namespace

Tensor LoopBackend::Pool2DForward(PoolKind kind, const Tensor& x, const Pool2DParams& p,
                                  Tensor& y) {
  const float* px = x.f32();
  float* py = y.f32();
  std::vector<double> acc(y.numel(),
                          kind == PoolKind::kMax ? -std::numeric_limits<double>::infinity() : 0.0);
  ForEachWindow(
      x.shape(), y.shape(), p,
      [&](int64_t yi, int64_t xi) {
        if (kind == PoolKind::kMax) {
          if (px[xi] > acc[yi]) acc[yi] = px[xi];
        } else {
          acc[yi] += px[xi];
        }
      },
      [&](int64_t yi, int64_t taps) {
        py[yi] = static_cast<float>(kind == PoolKind::kMax ? acc[yi] : acc[yi] / taps);
      });
  return Tensor();
}

void LoopBackend::Pool2DBackward(PoolKind kind, const Tensor& dy, const Tensor& x,
                                 const Tensor& workspace, const Pool2DParams& p, Tensor& dx) {
  const float* px = x.f32();
  const float* pdy = dy.f32();
  std::vector<double> acc(dx.numel(), 0.0);
  // Max: the first maximal tap of each window takes the gradient.
  std::vector<int64_t> argmax(dy.numel(), -1);
  std::vector<float> best(dy.numel(), -std::numeric_limits<float>::infinity());
  std::vector<int64_t> window;
  ForEachWindow(
      x.shape(), dy.shape(), p,
      [&](int64_t yi, int64_t xi) {
        if (kind == PoolKind::kMax) {
          if (argmax[yi] < 0 || px[xi] > best[yi]) {
            best[yi] = px[xi];
            argmax[yi] = xi;
          }
        } else {
          window.push_back(xi);
        }
      },
      [&](int64_t yi, int64_t taps) {
        if (kind == PoolKind::kMax) {
          if (argmax[yi] >= 0) acc[argmax[yi]] += pdy[yi];
        } else {
          for (int64_t xi : window) acc[xi] += static_cast<double>(pdy[yi]) / taps;
          window.clear();
        }
      });
  float* pdx = dx.f32();
  for (int64_t i = 0; i < dx.numel(); ++i) pdx[i] = static_cast<float>(acc[i]);
}

void LoopBackend::BatchNormTraining(const Tensor& x, const Tensor& gamma, const Tensor& beta,
                                    float epsilon, Tensor& y, Tensor& mean, Tensor& variance) {
  const int64_t rows = x.dim(0), c = x.dim(1);
  const float* px = x.f32();
  for (int64_t ch = 0; ch < c; ++ch) {
    double sum = 0, sq = 0;
    for (int64_t r = 0; r < rows; ++r) sum += px[r * c + ch];
    double m = sum / rows;
    for (int64_t r = 0; r < rows; ++r) {
      double d = px[r * c + ch] - m;
      sq += d * d;
    }
    mean.f32()[ch] = static_cast<float>(m);
    variance.f32()[ch] = static_cast<float>(sq / rows);
  }
  BatchNormInference(x, gamma, beta, mean, variance, epsilon, y);
}

void LoopBackend::BatchNormInference(const Tensor& x, const Tensor& gamma, const Tensor& beta,
                                     const Tensor& mean, const Tensor& variance, float epsilon,
                                     Tensor& y) {
  const int64_t c = x.dim(-1), n = x.numel();
  const float* px = x.f32();
  float* py = y.f32();
  for (int64_t i = 0; i < n; ++i) {
    int64_t ch = i % c;
    double inv = 1.0 / std::sqrt(static_cast<double>(variance.f32()[ch]) + epsilon);
    py[i] = static_cast<float>(gamma.f32()[ch] * (px[i] - mean.f32()[ch]) * inv + beta.f32()[ch]);
  }
}

void LoopBackend::BatchNormBackward(const Tensor& dy, const Tensor& x, const Tensor& gamma,
                                    const Tensor& mean, const Tensor& variance, float epsilon,
                                    Tensor& dx, Tensor& dgamma, Tensor& dbeta) {
  // dx = gamma / sigma * (dy - mean(dy) - xhat * mean(dy * xhat)).
  const int64_t rows = x.dim(0), c = x.dim(1);
  const float* px = x.f32();
  const float* pdy = dy.f32();
  for (int64_t ch = 0; ch < c; ++ch) {
    double m = mean.f32()[ch];
    double inv = 1.0 / std::sqrt(static_cast<double>(variance.f32()[ch]) + epsilon);
    double sum_dy = 0, sum_dy_xhat = 0;
    for (int64_t r = 0; r < rows; ++r) {
      double xhat = (px[r * c + ch] - m) * inv;
      sum_dy += pdy[r * c + ch];
      sum_dy_xhat += pdy[r * c + ch] * xhat;
    }
    dbeta.f32()[ch] = static_cast<float>(sum_dy);
    dgamma.f32()[ch] = static_cast<float>(sum_dy_xhat);
    for (int64_t r = 0; r < rows; ++r) {
      double xhat = (px[r * c + ch] - m) * inv;
      dx.f32()[r * c + ch] = static_cast<float>(
          gamma.f32()[ch] * inv * (pdy[r * c + ch] - sum_dy / rows - xhat * sum_dy_xhat / rows));
    }
  }
}

void LoopBackend::LayerNormForward(const Tensor& x, const Tensor& gamma, const Tensor& beta,
                                   float epsilon, Tensor& y, Tensor& mean, Tensor& variance) {
  const int64_t rows = x.dim(0), c = x.dim(1);
  const float* px = x.f32();
  float* py = y.f32();
  for (int64_t r = 0; r < rows; ++r) {
    const float* row = px + r * c;
    double sum = 0, sq = 0;
    for (int64_t i = 0; i < c; ++i) sum += row[i];
    double m = sum / c;
    for (int64_t i = 0; i < c; ++i) sq += (row[i] - m) * (row[i] - m);
    double var = sq / c, inv = 1.0 / std::sqrt(var + epsilon);
    mean.f32()[r] = static_cast<float>(m);
    variance.f32()[r] = static_cast<float>(var);
    for (int64_t i = 0; i < c; ++i) {
      py[r * c + i] = static_cast<float>(gamma.f32()[i] * (row[i] - m) * inv + beta.f32()[i]);
    }
  }
}

void LoopBackend::LayerNormBackward(const Tensor& dy, const Tensor& x, const Tensor& gamma,
                                    const Tensor& mean, const Tensor& variance, float epsilon,
                                    Tensor& dx, Tensor& dgamma, Tensor& dbeta) {
  // With g = dy * gamma: dx = inv * (g - mean(g) - xhat * mean(g * xhat)).
  const int64_t rows = x.dim(0), c = x.dim(1);
  std::vector<double> dgam(c, 0.0), dbet(c, 0.0);
  for (int64_t r = 0; r < rows; ++r) {
    const float* px = x.f32() + r * c;
    const float* pdy = dy.f32() + r * c;
    double m = mean.f32()[r];
    double inv = 1.0 / std::sqrt(static_cast<double>(variance.f32()[r]) + epsilon);
    double sum_g = 0, sum_g_xhat = 0;
    for (int64_t i = 0; i < c; ++i) {
      double xhat = (px[i] - m) * inv;
      double g = static_cast<double>(pdy[i]) * gamma.f32()[i];
      sum_g += g;
      sum_g_xhat += g * xhat;
      dgam[i] += pdy[i] * xhat;
      dbet[i] += pdy[i];
    }
    for (int64_t i = 0; i < c; ++i) {
      double xhat = (px[i] - m) * inv;
      double g = static_cast<double>(pdy[i]) * gamma.f32()[i];
      dx.f32()[r * c + i] = static_cast<float>(inv * (g - sum_g / c - xhat * sum_g_xhat / c));
    }
  }
  for (int64_t i = 0; i < c; ++i) {
    dgamma.f32()[i] = static_cast<float>(dgam[i]);
    dbeta.f32()[i] = static_cast<float>(dbet[i]);
  }
}

namespace {
// Splits a shape around axis into (outer, size, inner).
void AroundAxis(const Shape& s, int axis, int64_t* outer, int64_t* size, int64_t* inner) {
  *outer = 1;
  *inner = 1;
  for (int i = 0; i < axis; ++i) *outer *= s[i];
  *size = s[axis];
  for (size_t i = axis + 1; i < s.size(); ++i) *inner *= s[i];
}
}  // namespace

void LoopBackend::Softmax(const Tensor& x, int axis, bool log, Tensor& y) {
  int64_t outer, size, inner;
  AroundAxis(x.shape(), axis, &outer, &size, &inner);
  const float* px = x.f32();
  float* py = y.f32();
  for (int64_t o = 0; o < outer; ++o)
    for (int64_t in = 0; in < inner; ++in) {
      auto at = [&](int64_t k) { return (o * size + k) * inner + in; };
      double mx = -std::numeric_limits<double>::infinity();
      for (int64_t k = 0; k < size; ++k) mx = std::max<double>(mx, px[at(k)]);
      double sum = 0;
      for (int64_t k = 0; k < size; ++k) sum += std::exp(px[at(k)] - mx);
      for (int64_t k = 0; k < size; ++k) {
        double v = px[at(k)] - mx;
        py[at(k)] = static_cast<float>(log ? v - std::log(sum) : std::exp(v) / sum);
      }
    }
}

void LoopBackend::SoftmaxBackward(const Tensor& dy, const Tensor& y, int axis, bool log,
                                  Tensor& dx) {
  // softmax: dx = y * (dy - sum(dy * y)); log: dx = dy - exp(y) * sum(dy).
  int64_t outer, size, inner;
  AroundAxis(y.shape(), axis, &outer, &size, &inner);
  const float* py = y.f32();
  const float* pdy = dy.f32();
  float* pdx = dx.f32();
  for (int64_t o = 0; o < outer; ++o)
    for (int64_t in = 0; in < inner; ++in) {
      auto at = [&](int64_t k) { return (o * size + k) * inner + in; };
      double sum = 0;
      for (int64_t k = 0; k < size; ++k) {
        sum += log ? pdy[at(k)] : static_cast<double>(pdy[at(k)]) * py[at(k)];
      }
      for (int64_t k = 0; k < size; ++k) {
        pdx[at(k)] =
            static_cast<float>(log ? pdy[at(k)] - std::exp(static_cast<double>(py[at(k)])) * sum
                                   : py[at(k)] * (pdy[at(k)] - sum));
      }
    }
}

}  // namespace edl::tensor::reference
