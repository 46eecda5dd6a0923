// CPU backend: whole-sequence SimpleRNN, LSTM and GRU on oneDNN's RNN
// primitives (vanilla_rnn with tanh, lstm, gru, lbr_gru for Keras'
// reset_after). Keras' layouts map onto oneDNN's without copies: input and
// output sequences [N, T, C] are format ntc, kernels [F, G*U] are ldigo with
// one layer and one direction, and both libraries order the gates the same
// way (i, f, c, o and z, r, h). Weights are reordered into the layouts the
// primitives prefer (format any); weight gradients come back the same way.
// The forward and backward primitives of one shape live in one cache entry,
// since the backward needs the forward's descriptor as a hint.
#include <cstring>

#include "tensor/cpu/cpu_backend.h"
#include "tensor/cpu/dnnl_common.h"

namespace edl::tensor::cpu {
namespace {

using dnnl::algorithm;
using dnnl::prop_kind;
using Md = dnnl::memory::desc;

struct RnnGeometry {
  Md src_layer, weights_layer, weights_iter, bias, dst_layer, state;
};

RnnGeometry Geometry(RnnCell cell, int64_t n, int64_t t, int64_t f, int64_t u) {
  const int64_t g = RnnGates(cell), gb = cell == RnnCell::kGRUResetAfter ? 4 : g;
  RnnGeometry r;
  r.src_layer = Md({t, n, f}, dt::f32, tag::ntc);
  r.weights_layer = Md({1, 1, f, g, u}, dt::f32, tag::ldigo);
  r.weights_iter = Md({1, 1, u, g, u}, dt::f32, tag::ldigo);
  r.bias = Md({1, 1, gb, u}, dt::f32, tag::ldgo);
  r.dst_layer = Md({t, n, u}, dt::f32, tag::ntc);
  r.state = Md({1, 1, n, u}, dt::f32, tag::ldnc);
  return r;
}

Md Any(const Md& md) { return Md(md.dims(), dt::f32, tag::any); }

struct RnnEntry {
  RnnGeometry g;
  dnnl::primitive forward, backward;
  Operand fwd_wl, fwd_wi;    // kernels into the forward's layouts
  Operand bwd_wl, bwd_wi;    // kernels into the backward's layouts
  Operand diff_wl, diff_wi;  // kernel gradients back to ldigo
  Md workspace;
};

// Fills an entry from the forward and backward descriptors of one cell.
template <typename Fwd, typename Bwd>
std::shared_ptr<RnnEntry> MakeEntry(const RnnGeometry& g, const typename Fwd::desc& fd,
                                    const typename Bwd::desc& bd) {
  auto e = std::make_shared<RnnEntry>();
  e->g = g;
  typename Fwd::primitive_desc fpd(fd, Engine());
  typename Bwd::primitive_desc bpd(bd, Engine(), fpd);
  e->fwd_wl.Init(g.weights_layer, fpd.weights_layer_desc(), true);
  e->fwd_wi.Init(g.weights_iter, fpd.weights_iter_desc(), true);
  e->bwd_wl.Init(g.weights_layer, bpd.weights_layer_desc(), true);
  e->bwd_wi.Init(g.weights_iter, bpd.weights_iter_desc(), true);
  e->diff_wl.Init(g.weights_layer, bpd.diff_weights_layer_desc(), false);
  e->diff_wi.Init(g.weights_iter, bpd.diff_weights_iter_desc(), false);
  e->workspace = fpd.workspace_desc();
  e->forward = Fwd(fpd);
  e->backward = Bwd(bpd);
  return e;
}

std::shared_ptr<RnnEntry> Entry(RnnCell cell, const Shape& x, int64_t u) {
  Key key("rnn");
  key << static_cast<int64_t>(cell) << x << u;
  return Cached<RnnEntry>(key.str(), [&] {
    const RnnGeometry g = Geometry(cell, x[0], x[1], x[2], u);
    const auto dir = dnnl::rnn_direction::unidirectional_left2right;
    const auto train = prop_kind::forward_training, back = prop_kind::backward;
    const Md none, wl = Any(g.weights_layer), wi = Any(g.weights_iter);
    const Md &src = g.src_layer, &dst = g.dst_layer, &bias = g.bias, &s = g.state;
    switch (cell) {
      case RnnCell::kSimpleRNN:
        return MakeEntry<dnnl::vanilla_rnn_forward, dnnl::vanilla_rnn_backward>(
            g, {train, algorithm::eltwise_tanh, dir, src, none, wl, wi, bias, dst, s},
            {back, algorithm::eltwise_tanh, dir, src, none, wl, wi, bias, dst, s, src, none, wl, wi,
             bias, dst, s});
      case RnnCell::kLSTM:
        return MakeEntry<dnnl::lstm_forward, dnnl::lstm_backward>(
            g, {train, dir, src, none, none, wl, wi, bias, dst, s, s},
            {back, dir, src,  none, none, wl, wi,   bias, dst, s,
             s,    src, none, none, wl,   wi, bias, dst,  s,   s});
      case RnnCell::kGRU:
        return MakeEntry<dnnl::gru_forward, dnnl::gru_backward>(
            g, {train, dir, src, none, wl, wi, bias, dst, s},
            {back, dir, src, none, wl, wi, bias, dst, s, src, none, wl, wi, bias, dst, s});
      case RnnCell::kGRUResetAfter: break;
    }
    return MakeEntry<dnnl::lbr_gru_forward, dnnl::lbr_gru_backward>(
        g, {train, dir, src, none, wl, wi, bias, dst, s},
        {back, dir, src, none, wl, wi, bias, dst, s, src, none, wl, wi, bias, dst, s});
  });
}

void Zero(const dnnl::memory& m) { std::memset(m.get_data_handle(), 0, m.get_desc().get_size()); }

}  // namespace

bool DnnlBackend::Rnn(RnnCell) const { return true; }

Tensor DnnlBackend::RnnForward(RnnCell cell, const Tensor& x, const Tensor& w_x, const Tensor& w_h,
                               const Tensor& bias, Tensor& y, Tensor& h, Tensor& c) {
  Tensor workspace;
  RunDnnl("RnnForward", [&] {
    auto e = Entry(cell, x.shape(), w_h.dim(0));
    workspace = Tensor::Empty({static_cast<int64_t>(e->workspace.get_size())}, DType::kUInt8);
    Tensor swl, swi;
    dnnl::memory wl = e->fwd_wl.Bind(w_x, swl), wi = e->fwd_wi.Bind(w_h, swi);
    e->fwd_wl.In(w_x, wl);
    e->fwd_wi.In(w_h, wi);
    std::unordered_map<int, dnnl::memory> args{
        {DNNL_ARG_SRC_LAYER, UserMemory(e->g.src_layer, x)},
        {DNNL_ARG_WEIGHTS_LAYER, wl},
        {DNNL_ARG_WEIGHTS_ITER, wi},
        {DNNL_ARG_BIAS, UserMemory(e->g.bias, bias)},
        {DNNL_ARG_DST_LAYER, UserMemory(e->g.dst_layer, y)},
        {DNNL_ARG_DST_ITER, UserMemory(e->g.state, h)},
        {DNNL_ARG_WORKSPACE, UserMemory(e->workspace, workspace)}};
    if (cell == RnnCell::kLSTM) args[DNNL_ARG_DST_ITER_C] = UserMemory(e->g.state, c);
    e->forward.execute(ThreadStream(), args);
  });
  return workspace;
}

void DnnlBackend::RnnBackward(RnnCell cell, const Tensor& x, const Tensor& w_x, const Tensor& w_h,
                              const Tensor& bias, const RnnForwardResult& forward, const Tensor& dy,
                              const Tensor& dh, const Tensor& dc, RnnGrads& grads) {
  RunDnnl("RnnBackward", [&] {
    auto e = Entry(cell, x.shape(), w_h.dim(0));
    const Tensor zeros = (dh.defined() && (dc.defined() || cell != RnnCell::kLSTM))
                             ? Tensor()
                             : Tensor::Zeros(forward.h.shape());
    Tensor swl, swi, sdwl, sdwi;
    dnnl::memory wl = e->bwd_wl.Bind(w_x, swl), wi = e->bwd_wi.Bind(w_h, swi);
    e->bwd_wl.In(w_x, wl);
    e->bwd_wi.In(w_h, wi);
    // The primitive adds to the weight gradients.
    dnnl::memory dwl = e->diff_wl.Bind(grads.dw_x, sdwl), dwi = e->diff_wi.Bind(grads.dw_h, sdwi),
                 db = UserMemory(e->g.bias, grads.dbias);
    Zero(dwl);
    Zero(dwi);
    Zero(db);
    std::unordered_map<int, dnnl::memory> args{
        {DNNL_ARG_SRC_LAYER, UserMemory(e->g.src_layer, x)},
        {DNNL_ARG_WEIGHTS_LAYER, wl},
        {DNNL_ARG_WEIGHTS_ITER, wi},
        {DNNL_ARG_BIAS, UserMemory(e->g.bias, bias)},
        {DNNL_ARG_DST_LAYER, UserMemory(e->g.dst_layer, forward.y)},
        {DNNL_ARG_DST_ITER, UserMemory(e->g.state, forward.h)},
        {DNNL_ARG_DIFF_DST_LAYER, UserMemory(e->g.dst_layer, dy)},
        {DNNL_ARG_DIFF_DST_ITER, UserMemory(e->g.state, dh.defined() ? dh : zeros)},
        {DNNL_ARG_WORKSPACE, UserMemory(e->workspace, forward.workspace)},
        {DNNL_ARG_DIFF_SRC_LAYER, UserMemory(e->g.src_layer, grads.dx)},
        {DNNL_ARG_DIFF_WEIGHTS_LAYER, dwl},
        {DNNL_ARG_DIFF_WEIGHTS_ITER, dwi},
        {DNNL_ARG_DIFF_BIAS, db}};
    if (cell == RnnCell::kLSTM) {
      args[DNNL_ARG_DST_ITER_C] = UserMemory(e->g.state, forward.c);
      args[DNNL_ARG_DIFF_DST_ITER_C] = UserMemory(e->g.state, dc.defined() ? dc : zeros);
    }
    e->backward.execute(ThreadStream(), args);
    e->diff_wl.Out(dwl, grads.dw_x);
    e->diff_wi.Out(dwi, grads.dw_h);
    // One step from the zero state leaves the recurrent kernel no gradient;
    // oneDNN 2.6's SimpleRNN and LSTM return a nonzero one for a single
    // sequence of one step (tests/tensor/rnn_test.cc).
    if (x.dim(1) == 1) std::memset(grads.dw_h.f32(), 0, grads.dw_h.bytes());
  });
}

}  // namespace edl::tensor::cpu
