// CPU backend: softmax and log-softmax over any axis on oneDNN (the tensor
// viewed as [outer, axis, inner]).
#include "tensor/cpu/cpu_backend.h"
#include "tensor/cpu/dnnl_common.h"

namespace edl::tensor::cpu {
namespace {

Dims AroundAxis(const Shape& s, int axis) {
  int64_t outer = 1, inner = 1;
  for (int i = 0; i < axis; ++i) outer *= s[i];
  for (size_t i = axis + 1; i < s.size(); ++i) inner *= s[i];
  return {outer, s[axis], inner};
}

struct SoftmaxEntry {
  dnnl::memory::desc md;
  dnnl::primitive prim;
};

std::shared_ptr<SoftmaxEntry> GetSoftmax(const Dims& dims, bool log, bool backward) {
  Key key("softmax");
  key << Shape(dims.begin(), dims.end()) << static_cast<int64_t>(log)
      << static_cast<int64_t>(backward);
  return Cached<SoftmaxEntry>(key.str(), [&] {
    auto e = std::make_shared<SoftmaxEntry>();
    e->md = PlainMd(dims);
    auto alg = log ? dnnl::algorithm::softmax_log : dnnl::algorithm::softmax_accurate;
    dnnl::softmax_v2_forward::primitive_desc fwd(
        {dnnl::prop_kind::forward_training, alg, e->md, e->md, 1}, Engine());
    if (backward) {
      e->prim = dnnl::softmax_v2_backward(
          dnnl::softmax_v2_backward::primitive_desc({alg, e->md, e->md, e->md, 1}, Engine(), fwd));
    } else {
      e->prim = dnnl::softmax_v2_forward(fwd);
    }
    return e;
  });
}

}  // namespace

void DnnlBackend::Softmax(const Tensor& x, int axis, bool log, Tensor& y) {
  RunDnnl(log ? "LogSoftmax" : "Softmax", [&] {
    auto e = GetSoftmax(AroundAxis(x.shape(), axis), log, false);
    e->prim.execute(ThreadStream(),
                    {{DNNL_ARG_SRC, UserMemory(e->md, x)}, {DNNL_ARG_DST, UserMemory(e->md, y)}});
  });
}

void DnnlBackend::SoftmaxBackward(const Tensor& dy, const Tensor& y, int axis, bool log,
                                  Tensor& dx) {
  RunDnnl(log ? "LogSoftmaxBackward" : "SoftmaxBackward", [&] {
    auto e = GetSoftmax(AroundAxis(y.shape(), axis), log, true);
    e->prim.execute(ThreadStream(), {{DNNL_ARG_DST, UserMemory(e->md, y)},
                                     {DNNL_ARG_DIFF_DST, UserMemory(e->md, dy)},
                                     {DNNL_ARG_DIFF_SRC, UserMemory(e->md, dx)}});
  });
}

}  // namespace edl::tensor::cpu
