// CPU backend: eltwise (oneDNN) and the simple streaming loops.
#include <cmath>

#include "tensor/cpu/cpu_backend.h"
#include "tensor/cpu/dnnl_common.h"
#include "tensor/cpu/parallel.h"
#include "tensor/reference/eltwise_math.h"

namespace edl::tensor::cpu {
namespace {

constexpr int64_t kGrain = 16384;

struct EltwiseAlg {
  dnnl::algorithm alg;
  float alpha, beta;
  float scale;  // applied after (selu)
};

EltwiseAlg ToDnnl(Eltwise kind, float alpha, float beta) {
  using A = dnnl::algorithm;
  switch (kind) {
    case Eltwise::kRelu: return {A::eltwise_relu, alpha, 0.f, 1.f};
    case Eltwise::kSigmoid: return {A::eltwise_logistic, 0.f, 0.f, 1.f};
    case Eltwise::kTanh: return {A::eltwise_tanh, 0.f, 0.f, 1.f};
    case Eltwise::kGelu: return {A::eltwise_gelu_erf, 0.f, 0.f, 1.f};
    case Eltwise::kGeluTanh: return {A::eltwise_gelu_tanh, 0.f, 0.f, 1.f};
    case Eltwise::kElu: return {A::eltwise_elu, alpha, 0.f, 1.f};
    case Eltwise::kSelu:
      return {A::eltwise_elu, static_cast<float>(reference::kSeluAlpha), 0.f,
              static_cast<float>(reference::kSeluScale)};
    case Eltwise::kSoftplus: return {A::eltwise_soft_relu, 0.f, 0.f, 1.f};
    case Eltwise::kSwish: return {A::eltwise_swish, 1.f, 0.f, 1.f};
    case Eltwise::kLinear: return {A::eltwise_linear, alpha, beta, 1.f};
    case Eltwise::kExp: return {A::eltwise_exp, 0.f, 0.f, 1.f};
    case Eltwise::kLog: return {A::eltwise_log, 0.f, 0.f, 1.f};
    case Eltwise::kSqrt: return {A::eltwise_sqrt, 0.f, 0.f, 1.f};
    case Eltwise::kSquare: return {A::eltwise_square, 0.f, 0.f, 1.f};
    case Eltwise::kAbs: return {A::eltwise_abs, 0.f, 0.f, 1.f};
    case Eltwise::kClip: return {A::eltwise_clip_v2, alpha, beta, 1.f};
  }
  return {A::eltwise_linear, 1.f, 0.f, 1.f};
}

struct EltwiseEntry {
  dnnl::memory::desc md;
  dnnl::eltwise_forward fwd;
  dnnl::eltwise_backward bwd;
};

std::shared_ptr<EltwiseEntry> GetEltwise(const EltwiseAlg& a, int64_t n, bool backward) {
  Key key(backward ? "eltwise_bwd" : "eltwise_fwd");
  key << static_cast<int64_t>(a.alg) << a.alpha << a.beta << n;
  return Cached<EltwiseEntry>(key.str(), [&] {
    auto e = std::make_shared<EltwiseEntry>();
    e->md = PlainMd({n});
    dnnl::eltwise_forward::primitive_desc fwd_pd(
        {dnnl::prop_kind::forward_training, a.alg, e->md, a.alpha, a.beta}, Engine());
    if (backward) {
      dnnl::eltwise_backward::primitive_desc bwd_pd({a.alg, e->md, e->md, a.alpha, a.beta},
                                                    Engine(), fwd_pd);
      e->bwd = dnnl::eltwise_backward(bwd_pd);
    } else {
      e->fwd = dnnl::eltwise_forward(fwd_pd);
    }
    return e;
  });
}

void Scale(float* p, int64_t n, float s) {
  ParallelFor(n, kGrain, [&](int64_t b, int64_t e) {
    for (int64_t i = b; i < e; ++i) p[i] *= s;
  });
}

}  // namespace

void DnnlBackend::EltwiseForward(Eltwise kind, const Tensor& x, float alpha, float beta,
                                 Tensor& y) {
  EltwiseAlg a = ToDnnl(kind, alpha, beta);
  RunDnnl("EltwiseForward", [&] {
    auto e = GetEltwise(a, x.numel(), false);
    auto src = UserMemory(e->md, x), dst = UserMemory(e->md, y);
    e->fwd.execute(ThreadStream(), {{DNNL_ARG_SRC, src}, {DNNL_ARG_DST, dst}});
  });
  if (a.scale != 1.f) Scale(y.f32(), y.numel(), a.scale);
}

void DnnlBackend::EltwiseBackward(Eltwise kind, const Tensor& dy, const Tensor& x, float alpha,
                                  float beta, Tensor& dx) {
  const int64_t n = x.numel();
  if (kind == Eltwise::kClip) {  // TensorFlow passes the bounds' gradient
    const float* px = x.f32();
    const float* pdy = dy.f32();
    float* pdx = dx.f32();
    ParallelFor(n, kGrain, [&](int64_t b, int64_t e) {
#pragma omp simd
      for (int64_t i = b; i < e; ++i) {
        const float inside = (px[i] >= alpha) & (px[i] <= beta) ? 1.f : 0.f;
        pdx[i] = inside * pdy[i];
      }
    });
    return;
  }
  EltwiseAlg a = ToDnnl(kind, alpha, beta);
  RunDnnl("EltwiseBackward", [&] {
    auto e = GetEltwise(a, n, true);
    auto src = UserMemory(e->md, x), ddst = UserMemory(e->md, dy), dsrc = UserMemory(e->md, dx);
    e->bwd.execute(ThreadStream(),
                   {{DNNL_ARG_SRC, src}, {DNNL_ARG_DIFF_DST, ddst}, {DNNL_ARG_DIFF_SRC, dsrc}});
  });
  if (a.scale != 1.f) Scale(dx.f32(), n, a.scale);
}

void DnnlBackend::Affine(const Tensor& x, float alpha, float beta, Tensor& y) {
  const float* px = x.f32();
  float* py = y.f32();
  ParallelFor(x.numel(), kGrain, [&](int64_t b, int64_t e) {
#pragma omp simd
    for (int64_t i = b; i < e; ++i) py[i] = alpha * px[i] + beta;
  });
}

void DnnlBackend::AddInPlace(Tensor& y, const Tensor& x, float alpha) {
  const float* px = x.f32();
  float* py = y.f32();
  ParallelFor(y.numel(), kGrain, [&](int64_t b, int64_t e) {
    if (alpha == 1.f) {
#pragma omp simd
      for (int64_t i = b; i < e; ++i) py[i] += px[i];
    } else {
#pragma omp simd
      for (int64_t i = b; i < e; ++i) py[i] += alpha * px[i];
    }
  });
}

}  // namespace edl::tensor::cpu
