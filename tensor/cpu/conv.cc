// CPU backend: 2-D convolution forward, backward data and backward weights
// (+bias) on oneDNN. Tensors are NHWC/HWIO; each primitive is created with
// format_tag::any for weights, and the user's tensors are reordered
// from/to the chosen layout only when it differs. Activations stay NHWC in
// every pass (brgemm/JIT kernels handle it as fast as blocked layouts,
// without the reorders).
#include "tensor/cpu/cpu_backend.h"
#include "tensor/cpu/dnnl_common.h"

namespace edl::tensor::cpu {
namespace {

using dnnl::algorithm;
using dnnl::prop_kind;

struct ConvGeometry {
  dnnl::memory::desc src, dst, weights, bias;  // user layouts
  Dims strides, dilates, pad_l, pad_r;
};

dnnl::memory::desc Any(const dnnl::memory::desc& md) {
  return dnnl::memory::desc(md.dims(), dt::f32, tag::any);
}

// x [N, H, W, C], w [kh, kw, C, O], y [N, OH, OW, O].
ConvGeometry Geometry(const Shape& x, const Shape& w, const Shape& y, const Conv2DParams& p) {
  ConvGeometry g;
  g.src = dnnl::memory::desc({x[0], x[3], x[1], x[2]}, dt::f32, tag::nhwc);
  g.dst = dnnl::memory::desc({y[0], y[3], y[1], y[2]}, dt::f32, tag::nhwc);
  // Keras' [kh, kw, C/G, O] with O = G x O/G is oneDNN's hwigo.
  g.weights = p.groups == 1 ? dnnl::memory::desc({w[3], w[2], w[0], w[1]}, dt::f32, tag::hwio)
                            : dnnl::memory::desc({p.groups, w[3] / p.groups, w[2], w[0], w[1]},
                                                 dt::f32, tag::hwigo);
  g.bias = dnnl::memory::desc({w[3]}, dt::f32, tag::a);
  g.strides = {p.strides[0], p.strides[1]};
  g.dilates = {p.dilations[0] - 1, p.dilations[1] - 1};
  g.pad_l = {p.padding[0], p.padding[2]};
  g.pad_r = {p.padding[1], p.padding[3]};
  return g;
}

Key ConvKey(const char* op, const Shape& x, const Shape& w, const Conv2DParams& p, bool bias) {
  Key key(op);
  key << x << w << p.strides[0] << p.strides[1] << p.dilations[0] << p.dilations[1] << p.padding[0]
      << p.padding[1] << p.padding[2] << p.padding[3] << static_cast<int64_t>(bias) << p.groups;
  return key;
}

dnnl::convolution_forward::primitive_desc ForwardPd(const ConvGeometry& g, bool bias) {
  auto w = Any(g.weights);
  return dnnl::convolution_forward::primitive_desc(
      bias ? dnnl::convolution_forward::desc(prop_kind::forward_training,
                                             algorithm::convolution_direct, g.src, w, g.bias, g.dst,
                                             g.strides, g.dilates, g.pad_l, g.pad_r)
           : dnnl::convolution_forward::desc(prop_kind::forward_training,
                                             algorithm::convolution_direct, g.src, w, g.dst,
                                             g.strides, g.dilates, g.pad_l, g.pad_r),
      Engine());
}

// A primitive with its operands: a, b inputs; c output.
struct ConvEntry {
  Operand a, b, c;
  dnnl::memory::desc bias;
  dnnl::primitive prim;
};

// Runs e.prim with a, b in and c out, binding them to the given args.
void Execute(const ConvEntry& e, int arg_a, const Tensor& a, int arg_b, const Tensor& b, int arg_c,
             Tensor& c, int arg_bias, const Tensor* bias) {
  Tensor sa, sb, sc;
  dnnl::memory ma = e.a.Bind(a, sa), mb = e.b.Bind(b, sb), mc = e.c.Bind(c, sc);
  e.a.In(a, ma);
  e.b.In(b, mb);
  std::unordered_map<int, dnnl::memory> args{{arg_a, ma}, {arg_b, mb}, {arg_c, mc}};
  if (bias != nullptr) args[arg_bias] = UserMemory(e.bias, *bias);
  e.prim.execute(ThreadStream(), args);
  e.c.Out(mc, c);
}

}  // namespace

void DnnlBackend::Conv2DForward(const Tensor& x, const Tensor& w, const Tensor& bias,
                                const Conv2DParams& p, Tensor& y) {
  const bool has_bias = bias.defined();
  Key key = ConvKey("conv_fwd", x.shape(), w.shape(), p, has_bias);
  RunDnnl("Conv2DForward", [&] {
    auto e = Cached<ConvEntry>(key.str(), [&] {
      auto entry = std::make_shared<ConvEntry>();
      ConvGeometry g = Geometry(x.shape(), w.shape(), y.shape(), p);
      auto pd = ForwardPd(g, has_bias);
      entry->a.Init(g.src, pd.src_desc(), true);
      entry->b.Init(g.weights, pd.weights_desc(), true);
      entry->c.Init(g.dst, pd.dst_desc(), false);
      entry->bias = g.bias;
      entry->prim = dnnl::convolution_forward(pd);
      return entry;
    });
    Execute(*e, DNNL_ARG_SRC, x, DNNL_ARG_WEIGHTS, w, DNNL_ARG_DST, y, DNNL_ARG_BIAS,
            has_bias ? &bias : nullptr);
  });
}

void DnnlBackend::Conv2DBackwardData(const Tensor& dy, const Tensor& w, const Conv2DParams& p,
                                     Tensor& dx) {
  Key key = ConvKey("conv_bwd_data", dx.shape(), w.shape(), p, false);
  RunDnnl("Conv2DBackwardData", [&] {
    auto e = Cached<ConvEntry>(key.str(), [&] {
      auto entry = std::make_shared<ConvEntry>();
      ConvGeometry g = Geometry(dx.shape(), w.shape(), dy.shape(), p);
      dnnl::convolution_backward_data::primitive_desc pd(
          {algorithm::convolution_direct, g.src, Any(g.weights), g.dst, g.strides, g.dilates,
           g.pad_l, g.pad_r},
          Engine(), ForwardPd(g, false));
      entry->a.Init(g.dst, pd.diff_dst_desc(), true);
      entry->b.Init(g.weights, pd.weights_desc(), true);
      entry->c.Init(g.src, pd.diff_src_desc(), false);
      entry->prim = dnnl::convolution_backward_data(pd);
      return entry;
    });
    Execute(*e, DNNL_ARG_DIFF_DST, dy, DNNL_ARG_WEIGHTS, w, DNNL_ARG_DIFF_SRC, dx, 0, nullptr);
  });
}

void DnnlBackend::Conv2DBackwardWeights(const Tensor& dy, const Tensor& x, const Conv2DParams& p,
                                        Tensor& dw, Tensor& dbias) {
  const bool has_bias = dbias.defined();
  Key key = ConvKey("conv_bwd_weights", x.shape(), dw.shape(), p, has_bias);
  RunDnnl("Conv2DBackwardWeights", [&] {
    auto e = Cached<ConvEntry>(key.str(), [&] {
      auto entry = std::make_shared<ConvEntry>();
      ConvGeometry g = Geometry(x.shape(), dw.shape(), dy.shape(), p);
      // NHWC activations as they are: blocked ones (format any) made the
      // kernel faster but cost two activation reorders per layer and step;
      // without them oneDNN's time per step fell 5 % (CNN), 7 % (ResNet)
      // and 18 % (MobileNetV2) on AVX-512 (docs/performance.md).
      auto src = g.src, dst = g.dst, w = Any(g.weights);
      dnnl::convolution_backward_weights::primitive_desc pd(
          has_bias
              ? dnnl::convolution_backward_weights::desc(algorithm::convolution_direct, src, w,
                                                         g.bias, dst, g.strides, g.dilates, g.pad_l,
                                                         g.pad_r)
              : dnnl::convolution_backward_weights::desc(algorithm::convolution_direct, src, w, dst,
                                                         g.strides, g.dilates, g.pad_l, g.pad_r),
          Engine(), ForwardPd(g, has_bias));
      entry->a.Init(g.dst, pd.diff_dst_desc(), true);
      entry->b.Init(g.src, pd.src_desc(), true);
      entry->c.Init(g.weights, pd.diff_weights_desc(), false);
      entry->bias = g.bias;
      entry->prim = dnnl::convolution_backward_weights(pd);
      return entry;
    });
    Execute(*e, DNNL_ARG_DIFF_DST, dy, DNNL_ARG_SRC, x, DNNL_ARG_DIFF_WEIGHTS, dw,
            DNNL_ARG_DIFF_BIAS, has_bias ? &dbias : nullptr);
  });
}

}  // namespace edl::tensor::cpu
