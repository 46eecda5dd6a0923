// Reference loops: matrix products and 2-D convolution (NHWC, HWIO).
#include <vector>

#include "tensor/reference/loop_backend.h"

namespace edl::tensor::reference {

void LoopBackend::MatMul(const Tensor& a, const Tensor& b, bool transpose_a, bool transpose_b,
                         Tensor& c) {
  const int ra = a.rank(), rb = b.rank();
  const int64_t batch = ra == 3 ? a.dim(0) : 1;
  const int64_t a_rows = a.dim(ra - 2), a_cols = a.dim(ra - 1);
  const int64_t b_rows = b.dim(rb - 2), b_cols = b.dim(rb - 1);
  const int64_t m = c.dim(-2), n = c.dim(-1);
  const int64_t k = transpose_a ? a_rows : a_cols;
  for (int64_t bi = 0; bi < batch; ++bi) {
    const float* pa = a.f32() + bi * a_rows * a_cols;
    const float* pb = b.f32() + (rb == 3 ? bi * b_rows * b_cols : 0);
    float* pc = c.f32() + bi * m * n;
    for (int64_t i = 0; i < m; ++i) {
      for (int64_t j = 0; j < n; ++j) {
        double acc = 0;
        for (int64_t l = 0; l < k; ++l) {
          float u = transpose_a ? pa[l * a_cols + i] : pa[i * a_cols + l];
          float v = transpose_b ? pb[j * b_cols + l] : pb[l * b_cols + j];
          acc += static_cast<double>(u) * v;
        }
        pc[i * n + j] = static_cast<float>(acc);
      }
    }
  }
}

void LoopBackend::DenseForward(const Tensor& x, const Tensor& w, const Tensor& bias, Tensor& y) {
  MatMul(x, w, false, false, y);
  if (!bias.defined()) return;
  const int64_t n = y.dim(0), out = y.dim(1);
  float* py = y.f32();
  const float* pb = bias.f32();
  for (int64_t i = 0; i < n; ++i) {
    for (int64_t j = 0; j < out; ++j) py[i * out + j] += pb[j];
  }
}

namespace {

// Visits every (output position, kernel tap) pair of a convolution whose
// input position lies inside the image: f(y_index, x_index, w_index) for
// each output channel o and input channel c.
template <typename F>
void ForEachTap(const Shape& xs, const Shape& ws, const Shape& ys, const Conv2DParams& p, F f) {
  const int64_t n = xs[0], h = xs[1], w = xs[2], c = xs[3];
  const int64_t kh = ws[0], kw = ws[1], cg = ws[2], o = ws[3];
  const int64_t og = o / p.groups;  // output channels per group
  (void)c;
  const int64_t oh = ys[1], ow = ys[2];
  for (int64_t b = 0; b < n; ++b)
    for (int64_t i = 0; i < oh; ++i)
      for (int64_t j = 0; j < ow; ++j)
        for (int64_t u = 0; u < kh; ++u) {
          int64_t hi = i * p.strides[0] + u * p.dilations[0] - p.padding[0];
          if (hi < 0 || hi >= h) continue;
          for (int64_t v = 0; v < kw; ++v) {
            int64_t wi = j * p.strides[1] + v * p.dilations[1] - p.padding[2];
            if (wi < 0 || wi >= w) continue;
            for (int64_t oi = 0; oi < o; ++oi)
              for (int64_t ci = 0; ci < cg; ++ci) {
                f(((b * oh + i) * ow + j) * o + oi,
                  ((b * h + hi) * w + wi) * c + (oi / og) * cg + ci,
                  ((u * kw + v) * cg + ci) * o + oi);
              }
          }
        }
}

}  // namespace

void LoopBackend::Conv2DForward(const Tensor& x, const Tensor& w, const Tensor& bias,
                                const Conv2DParams& p, Tensor& y) {
  std::vector<double> acc(y.numel(), 0.0);
  const float* px = x.f32();
  const float* pw = w.f32();
  ForEachTap(x.shape(), w.shape(), y.shape(), p, [&](int64_t yi, int64_t xi, int64_t wi) {
    acc[yi] += static_cast<double>(px[xi]) * pw[wi];
  });
  const int64_t o = y.dim(3);
  float* py = y.f32();
  for (int64_t i = 0; i < y.numel(); ++i) {
    py[i] = static_cast<float>(acc[i] + (bias.defined() ? bias.f32()[i % o] : 0.f));
  }
}

void LoopBackend::Conv2DBackwardData(const Tensor& dy, const Tensor& w, const Conv2DParams& p,
                                     Tensor& dx) {
  std::vector<double> acc(dx.numel(), 0.0);
  const float* pdy = dy.f32();
  const float* pw = w.f32();
  ForEachTap(dx.shape(), w.shape(), dy.shape(), p, [&](int64_t yi, int64_t xi, int64_t wi) {
    acc[xi] += static_cast<double>(pdy[yi]) * pw[wi];
  });
  float* pdx = dx.f32();
  for (int64_t i = 0; i < dx.numel(); ++i) pdx[i] = static_cast<float>(acc[i]);
}

void LoopBackend::Conv2DBackwardWeights(const Tensor& dy, const Tensor& x, const Conv2DParams& p,
                                        Tensor& dw, Tensor& dbias) {
  std::vector<double> acc(dw.numel(), 0.0);
  const float* pdy = dy.f32();
  const float* px = x.f32();
  ForEachTap(x.shape(), dw.shape(), dy.shape(), p, [&](int64_t yi, int64_t xi, int64_t wi) {
    acc[wi] += static_cast<double>(pdy[yi]) * px[xi];
  });
  float* pdw = dw.f32();
  for (int64_t i = 0; i < dw.numel(); ++i) pdw[i] = static_cast<float>(acc[i]);
  if (!dbias.defined()) return;
  const int64_t o = dbias.dim(0);
  std::vector<double> bsum(o, 0.0);
  for (int64_t i = 0; i < dy.numel(); ++i) bsum[i % o] += pdy[i];
  for (int64_t i = 0; i < o; ++i) dbias.f32()[i] = static_cast<float>(bsum[i]);
}

}  // namespace edl::tensor::reference
