// ops.h: whole-sequence recurrent cells. Checks, allocates, dispatches.
#include "tensor/backend.h"
#include "tensor/ops.h"
#include "tensor/ops_util.h"

namespace edl::tensor {
namespace {

using internal::CheckFloat;
using internal::CheckSameDevice;

struct RnnDims {
  int64_t n, t, f, u;
};

RnnDims CheckRnn(RnnCell cell, const Tensor& x, const Tensor& w_x, const Tensor& w_h,
                 const Tensor& bias, const char* op) {
  CheckFloat(x, op, "x");
  CheckFloat(w_x, op, "w_x");
  CheckFloat(w_h, op, "w_h");
  CheckFloat(bias, op, "bias");
  EDL_CHECK(x.rank() == 3 && w_x.rank() == 2 && w_h.rank() == 2 && bias.rank() == 1)
      << op << ": x " << ShapeString(x.shape()) << ", w_x " << ShapeString(w_x.shape()) << ", w_h "
      << ShapeString(w_h.shape()) << ", bias " << ShapeString(bias.shape());
  const int64_t g = RnnGates(cell), u = w_h.dim(0);
  EDL_CHECK(w_x.dim(0) == x.dim(2) && w_x.dim(1) == g * u && w_h.dim(1) == g * u &&
            bias.dim(0) == (cell == RnnCell::kGRUResetAfter ? 4 : g) * u)
      << op << ": x " << ShapeString(x.shape()) << ", w_x " << ShapeString(w_x.shape()) << ", w_h "
      << ShapeString(w_h.shape()) << ", bias " << ShapeString(bias.shape());
  CheckSameDevice(x, w_x, op);
  CheckSameDevice(x, w_h, op);
  CheckSameDevice(x, bias, op);
  return {x.dim(0), x.dim(1), x.dim(2), u};
}

}  // namespace

bool RnnAvailable(Device device, RnnCell cell) { return BackendFor(device).Rnn(cell); }

RnnForwardResult RnnForward(RnnCell cell, const Tensor& x, const Tensor& w_x, const Tensor& w_h,
                            const Tensor& bias) {
  const RnnDims d = CheckRnn(cell, x, w_x, w_h, bias, "RnnForward");
  EDL_CHECK(d.n > 0 && d.t > 0) << "RnnForward: empty x " << ShapeString(x.shape());
  Backend& backend = BackendFor(x.device());
  EDL_CHECK(backend.Rnn(cell)) << "RnnForward: backend " << backend.name() << " has no RNN";
  RnnForwardResult r;
  r.y = Tensor::Empty({d.n, d.t, d.u}, DType::kFloat32, x.device());
  r.h = Tensor::Empty({d.n, d.u}, DType::kFloat32, x.device());
  if (cell == RnnCell::kLSTM) r.c = Tensor::Empty({d.n, d.u}, DType::kFloat32, x.device());
  r.workspace = backend.RnnForward(cell, x, w_x, w_h, bias, r.y, r.h, r.c);
  return r;
}

RnnGrads RnnBackward(RnnCell cell, const Tensor& x, const Tensor& w_x, const Tensor& w_h,
                     const Tensor& bias, const RnnForwardResult& forward, const Tensor& dy,
                     const Tensor& dh, const Tensor& dc) {
  CheckRnn(cell, x, w_x, w_h, bias, "RnnBackward");
  CheckFloat(dy, "RnnBackward", "dy");
  EDL_CHECK(dy.shape() == forward.y.shape()) << "RnnBackward: dy " << ShapeString(dy.shape())
                                             << " for y " << ShapeString(forward.y.shape());
  EDL_CHECK(!dh.defined() || dh.shape() == forward.h.shape()) << "RnnBackward: dh";
  EDL_CHECK(!dc.defined() || (forward.c.defined() && dc.shape() == forward.c.shape()))
      << "RnnBackward: dc";
  CheckSameDevice(x, dy, "RnnBackward");
  if (dh.defined()) CheckSameDevice(x, dh, "RnnBackward");
  if (dc.defined()) CheckSameDevice(x, dc, "RnnBackward");
  RnnGrads g;
  g.dx = Tensor::Empty(x.shape(), DType::kFloat32, x.device());
  g.dw_x = Tensor::Empty(w_x.shape(), DType::kFloat32, x.device());
  g.dw_h = Tensor::Empty(w_h.shape(), DType::kFloat32, x.device());
  g.dbias = Tensor::Empty(bias.shape(), DType::kFloat32, x.device());
  BackendFor(x.device()).RnnBackward(cell, x, w_x, w_h, bias, forward, dy, dh, dc, g);
  return g;
}

}  // namespace edl::tensor
