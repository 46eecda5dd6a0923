// CPU backend: max/avg 2-D pooling (NHWC) on oneDNN. Max pooling keeps the
// primitive's workspace (argmax) for the backward pass; average pooling
// excludes padding, as TensorFlow.
#include "tensor/cpu/cpu_backend.h"
#include "tensor/cpu/dnnl_common.h"

namespace edl::tensor::cpu {
namespace {

struct PoolEntry {
  dnnl::memory::desc src, dst, workspace;
  dnnl::pooling_forward fwd;
  dnnl::pooling_backward bwd;
};

std::shared_ptr<PoolEntry> GetPool(PoolKind kind, const Shape& x, const Shape& y,
                                   const Pool2DParams& p) {
  Key key("pool");
  key << static_cast<int64_t>(kind) << x << p.kernel[0] << p.kernel[1] << p.strides[0]
      << p.strides[1] << p.padding[0] << p.padding[1] << p.padding[2] << p.padding[3];
  return Cached<PoolEntry>(key.str(), [&] {
    auto e = std::make_shared<PoolEntry>();
    e->src = dnnl::memory::desc({x[0], x[3], x[1], x[2]}, dt::f32, tag::nhwc);
    e->dst = dnnl::memory::desc({y[0], y[3], y[1], y[2]}, dt::f32, tag::nhwc);
    auto alg = kind == PoolKind::kMax ? dnnl::algorithm::pooling_max
                                      : dnnl::algorithm::pooling_avg_exclude_padding;
    Dims strides{p.strides[0], p.strides[1]}, kernel{p.kernel[0], p.kernel[1]};
    Dims pad_l{p.padding[0], p.padding[2]}, pad_r{p.padding[1], p.padding[3]};
    dnnl::pooling_forward::primitive_desc fwd_pd(
        {dnnl::prop_kind::forward_training, alg, e->src, e->dst, strides, kernel, pad_l, pad_r},
        Engine());
    e->workspace = fwd_pd.workspace_desc();
    e->fwd = dnnl::pooling_forward(fwd_pd);
    e->bwd = dnnl::pooling_backward(dnnl::pooling_backward::primitive_desc(
        {alg, e->src, e->dst, strides, kernel, pad_l, pad_r}, Engine(), fwd_pd));
    return e;
  });
}

// Runs the forward primitive; returns the workspace (undefined if none).
Tensor RunForward(const PoolEntry& e, const Tensor& x, Tensor& y) {
  std::unordered_map<int, dnnl::memory> args{{DNNL_ARG_SRC, UserMemory(e.src, x)},
                                             {DNNL_ARG_DST, UserMemory(e.dst, y)}};
  Tensor workspace;
  const size_t ws_bytes = e.workspace.get_size();
  if (ws_bytes > 0) {
    workspace = Tensor::Empty({static_cast<int64_t>(ws_bytes)}, DType::kUInt8);
    args[DNNL_ARG_WORKSPACE] = UserMemory(e.workspace, workspace);
  }
  e.fwd.execute(ThreadStream(), args);
  return workspace;
}

}  // namespace

Tensor DnnlBackend::Pool2DForward(PoolKind kind, const Tensor& x, const Pool2DParams& p,
                                  Tensor& y) {
  Tensor workspace;
  RunDnnl("Pool2DForward", [&] {
    auto e = GetPool(kind, x.shape(), y.shape(), p);
    workspace = RunForward(*e, x, y);
  });
  return workspace;
}

void DnnlBackend::Pool2DBackward(PoolKind kind, const Tensor& dy, const Tensor& x,
                                 const Tensor& workspace, const Pool2DParams& p, Tensor& dx) {
  RunDnnl("Pool2DBackward", [&] {
    auto e = GetPool(kind, x.shape(), dy.shape(), p);
    std::unordered_map<int, dnnl::memory> args{{DNNL_ARG_DIFF_DST, UserMemory(e->dst, dy)},
                                               {DNNL_ARG_DIFF_SRC, UserMemory(e->src, dx)}};
    const size_t ws_bytes = e->workspace.get_size();
    Tensor ws = workspace;
    if (ws_bytes > 0) {
      // Not ours (e.g. from another backend): recompute it.
      if (!ws.defined() || ws.dtype() != DType::kUInt8 || ws.bytes() != ws_bytes) {
        Tensor y = Tensor::Empty(dy.shape());
        ws = RunForward(*e, x, y);
      }
      args[DNNL_ARG_WORKSPACE] = UserMemory(e->workspace, ws);
    }
    e->bwd.execute(ThreadStream(), args);
  });
}

}  // namespace edl::tensor::cpu
