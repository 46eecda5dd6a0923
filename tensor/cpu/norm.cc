// CPU backend: batch normalization (x as [rows, C], "nc") and layer
// normalization (over the last axis) on oneDNN, forward and backward.
#include "tensor/cpu/cpu_backend.h"
#include "tensor/cpu/dnnl_common.h"

namespace edl::tensor::cpu {
namespace {

using dnnl::normalization_flags;
using dnnl::prop_kind;

const normalization_flags kScaleShift =
    normalization_flags::use_scale | normalization_flags::use_shift;

// data: x, y and their gradients; stat: mean and variance (per channel for
// batch normalization, per row for layer normalization); channel: gamma,
// beta and their gradients.
struct NormEntry {
  dnnl::memory::desc data, stat, channel;
  dnnl::primitive prim;
};

dnnl::memory Mem(const dnnl::memory::desc& md, const Tensor& t) { return UserMemory(md, t); }

// Runs a forward primitive: mean and variance are outputs in training and
// inputs in inference.
void RunForward(const NormEntry& e, const Tensor& x, const Tensor& gamma, const Tensor& beta,
                Tensor& y, const Tensor& mean, const Tensor& variance) {
  e.prim.execute(ThreadStream(), {{DNNL_ARG_SRC, Mem(e.data, x)},
                                  {DNNL_ARG_DST, Mem(e.data, y)},
                                  {DNNL_ARG_SCALE, Mem(e.channel, gamma)},
                                  {DNNL_ARG_SHIFT, Mem(e.channel, beta)},
                                  {DNNL_ARG_MEAN, Mem(e.stat, mean)},
                                  {DNNL_ARG_VARIANCE, Mem(e.stat, variance)}});
}

void RunBackward(const NormEntry& e, const Tensor& dy, const Tensor& x, const Tensor& gamma,
                 const Tensor& mean, const Tensor& variance, Tensor& dx, Tensor& dgamma,
                 Tensor& dbeta) {
  e.prim.execute(ThreadStream(), {{DNNL_ARG_SRC, Mem(e.data, x)},
                                  {DNNL_ARG_DIFF_DST, Mem(e.data, dy)},
                                  {DNNL_ARG_SCALE, Mem(e.channel, gamma)},
                                  {DNNL_ARG_MEAN, Mem(e.stat, mean)},
                                  {DNNL_ARG_VARIANCE, Mem(e.stat, variance)},
                                  {DNNL_ARG_DIFF_SRC, Mem(e.data, dx)},
                                  {DNNL_ARG_DIFF_SCALE, Mem(e.channel, dgamma)},
                                  {DNNL_ARG_DIFF_SHIFT, Mem(e.channel, dbeta)},
                                  // oneDNN 2.6 insists on a shift it never reads.
                                  {DNNL_ARG_SHIFT, Mem(e.channel, gamma)}});
}

// mode: 0 training forward, 1 inference forward, 2 backward.
std::shared_ptr<NormEntry> GetBatchNorm(int64_t rows, int64_t c, float eps, int mode) {
  Key key("bnorm");
  key << rows << c << eps << static_cast<int64_t>(mode);
  return Cached<NormEntry>(key.str(), [&] {
    auto e = std::make_shared<NormEntry>();
    // [rows, C] as an NHWC image of one row of `rows` pixels: oneDNN takes a
    // 2-D "nc" for channels-first and picks its slow plain kernel.
    e->data = dnnl::memory::desc({1, c, rows, 1}, dt::f32, tag::nhwc);
    e->channel = dnnl::memory::desc({c}, dt::f32, tag::a);
    e->stat = e->channel;
    if (mode == 1) {
      e->prim = dnnl::batch_normalization_forward(dnnl::batch_normalization_forward::primitive_desc(
          {prop_kind::forward_inference, e->data, eps,
           kScaleShift | normalization_flags::use_global_stats},
          Engine()));
      return e;
    }
    dnnl::batch_normalization_forward::primitive_desc fwd(
        {prop_kind::forward_training, e->data, eps, kScaleShift}, Engine());
    if (mode == 0) {
      e->prim = dnnl::batch_normalization_forward(fwd);
    } else {
      e->prim =
          dnnl::batch_normalization_backward(dnnl::batch_normalization_backward::primitive_desc(
              {prop_kind::backward, e->data, e->data, eps, kScaleShift}, Engine(), fwd));
    }
    return e;
  });
}

std::shared_ptr<NormEntry> GetLayerNorm(int64_t rows, int64_t c, float eps, bool backward) {
  Key key("lnorm");
  key << rows << c << eps << static_cast<int64_t>(backward);
  return Cached<NormEntry>(key.str(), [&] {
    auto e = std::make_shared<NormEntry>();
    e->data = dnnl::memory::desc({rows, c}, dt::f32, tag::ab);
    e->stat = dnnl::memory::desc({rows}, dt::f32, tag::a);
    e->channel = dnnl::memory::desc({c}, dt::f32, tag::a);
    dnnl::layer_normalization_forward::primitive_desc fwd(
        {prop_kind::forward_training, e->data, e->stat, eps, kScaleShift}, Engine());
    if (!backward) {
      e->prim = dnnl::layer_normalization_forward(fwd);
    } else {
      e->prim =
          dnnl::layer_normalization_backward(dnnl::layer_normalization_backward::primitive_desc(
              {prop_kind::backward, e->data, e->data, e->stat, eps, kScaleShift}, Engine(), fwd));
    }
    return e;
  });
}

}  // namespace

void DnnlBackend::BatchNormTraining(const Tensor& x, const Tensor& gamma, const Tensor& beta,
                                    float epsilon, Tensor& y, Tensor& mean, Tensor& variance) {
  RunDnnl("BatchNormTraining", [&] {
    RunForward(*GetBatchNorm(x.dim(0), x.dim(1), epsilon, 0), x, gamma, beta, y, mean, variance);
  });
}

void DnnlBackend::BatchNormInference(const Tensor& x, const Tensor& gamma, const Tensor& beta,
                                     const Tensor& mean, const Tensor& variance, float epsilon,
                                     Tensor& y) {
  RunDnnl("BatchNormInference", [&] {
    RunForward(*GetBatchNorm(x.dim(0), x.dim(1), epsilon, 1), x, gamma, beta, y, mean, variance);
  });
}

void DnnlBackend::BatchNormBackward(const Tensor& dy, const Tensor& x, const Tensor& gamma,
                                    const Tensor& mean, const Tensor& variance, float epsilon,
                                    Tensor& dx, Tensor& dgamma, Tensor& dbeta) {
  RunDnnl("BatchNormBackward", [&] {
    RunBackward(*GetBatchNorm(x.dim(0), x.dim(1), epsilon, 2), dy, x, gamma, mean, variance, dx,
                dgamma, dbeta);
  });
}

void DnnlBackend::LayerNormForward(const Tensor& x, const Tensor& gamma, const Tensor& beta,
                                   float epsilon, Tensor& y, Tensor& mean, Tensor& variance) {
  RunDnnl("LayerNormForward", [&] {
    RunForward(*GetLayerNorm(x.dim(0), x.dim(1), epsilon, false), x, gamma, beta, y, mean,
               variance);
  });
}

void DnnlBackend::LayerNormBackward(const Tensor& dy, const Tensor& x, const Tensor& gamma,
                                    const Tensor& mean, const Tensor& variance, float epsilon,
                                    Tensor& dx, Tensor& dgamma, Tensor& dbeta) {
  RunDnnl("LayerNormBackward", [&] {
    RunBackward(*GetLayerNorm(x.dim(0), x.dim(1), epsilon, true), dy, x, gamma, mean, variance, dx,
                dgamma, dbeta);
  });
}

}  // namespace edl::tensor::cpu
