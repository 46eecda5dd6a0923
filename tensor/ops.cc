// ops.h: elementwise, broadcasting, reductions and matrix products. Checks,
// allocates, dispatches to the Backend of the inputs' device.
#include "tensor/ops.h"

#include <algorithm>
#include <limits>

#include "tensor/backend.h"
#include "tensor/ops_util.h"

namespace edl::tensor {

using internal::CheckFloat;
using internal::CheckSameDevice;
using internal::CheckSameShape;
using internal::NormalizeAxis;

void SetNumThreads(int n) { CpuBackend().SetNumThreads(n); }

int NumThreads() { return CpuBackend().NumThreads(); }

const char* EltwiseName(Eltwise kind) {
  switch (kind) {
    case Eltwise::kRelu: return "relu";
    case Eltwise::kSigmoid: return "sigmoid";
    case Eltwise::kTanh: return "tanh";
    case Eltwise::kGelu: return "gelu";
    case Eltwise::kGeluTanh: return "gelu_tanh";
    case Eltwise::kElu: return "elu";
    case Eltwise::kSelu: return "selu";
    case Eltwise::kSoftplus: return "softplus";
    case Eltwise::kSwish: return "swish";
    case Eltwise::kLinear: return "linear";
    case Eltwise::kExp: return "exp";
    case Eltwise::kLog: return "log";
    case Eltwise::kSqrt: return "sqrt";
    case Eltwise::kSquare: return "square";
    case Eltwise::kAbs: return "abs";
    case Eltwise::kClip: return "clip";
  }
  return "?";
}

Tensor EltwiseForward(Eltwise kind, const Tensor& x, float alpha, float beta) {
  CheckFloat(x, "EltwiseForward", "x");
  Tensor y = Tensor::Empty(x.shape(), DType::kFloat32, x.device());
  if (x.numel() > 0) {
    BackendFor(x.device()).EltwiseForward(kind, x, alpha, beta, y);
  }
  return y;
}

Tensor EltwiseBackward(Eltwise kind, const Tensor& dy, const Tensor& x, float alpha, float beta) {
  CheckFloat(dy, "EltwiseBackward", "dy");
  CheckFloat(x, "EltwiseBackward", "x");
  CheckSameShape(dy, x, "EltwiseBackward");
  CheckSameDevice(dy, x, "EltwiseBackward");
  Tensor dx = Tensor::Empty(x.shape(), DType::kFloat32, x.device());
  if (x.numel() > 0) {
    BackendFor(x.device()).EltwiseBackward(kind, dy, x, alpha, beta, dx);
  }
  return dx;
}

bool BroadcastShapes(const Shape& a, const Shape& b, Shape* out) {
  size_t rank = std::max(a.size(), b.size());
  Shape result(rank);
  for (size_t i = 0; i < rank; ++i) {
    int64_t da = i < rank - a.size() ? 1 : a[i - (rank - a.size())];
    int64_t db = i < rank - b.size() ? 1 : b[i - (rank - b.size())];
    if (da == db || db == 1) {
      result[i] = da;
    } else if (da == 1) {
      result[i] = db;
    } else {
      return false;
    }
  }
  *out = std::move(result);
  return true;
}

Tensor BinaryOp(Binary kind, const Tensor& a, const Tensor& b) {
  CheckFloat(a, "BinaryOp", "a");
  CheckFloat(b, "BinaryOp", "b");
  CheckSameDevice(a, b, "BinaryOp");
  Shape shape;
  EDL_CHECK(BroadcastShapes(a.shape(), b.shape(), &shape))
      << "BinaryOp: shapes do not broadcast: " << ShapeString(a.shape()) << " vs "
      << ShapeString(b.shape());
  Tensor y = Tensor::Empty(shape, DType::kFloat32, a.device());
  if (y.numel() > 0) BackendFor(a.device()).BinaryOp(kind, a, b, y);
  return y;
}

Tensor Affine(const Tensor& x, float alpha, float beta) {
  CheckFloat(x, "Affine", "x");
  Tensor y = Tensor::Empty(x.shape(), DType::kFloat32, x.device());
  if (x.numel() > 0) BackendFor(x.device()).Affine(x, alpha, beta, y);
  return y;
}

Tensor SumToShape(const Tensor& x, const Shape& shape) {
  CheckFloat(x, "SumToShape", "x");
  Shape broadcast;
  EDL_CHECK(BroadcastShapes(shape, x.shape(), &broadcast) && broadcast == x.shape())
      << "SumToShape: " << ShapeString(shape) << " does not broadcast to "
      << ShapeString(x.shape());
  Tensor y = Tensor::Empty(shape, DType::kFloat32, x.device());
  if (y.numel() == 0) return y;
  if (x.numel() == 0) {
    y.Fill(0.f);
    return y;
  }
  BackendFor(x.device()).SumToShape(x, y);
  return y;
}

void AddInPlace(Tensor& y, const Tensor& x, float alpha) {
  CheckFloat(y, "AddInPlace", "y");
  CheckFloat(x, "AddInPlace", "x");
  CheckSameShape(y, x, "AddInPlace");
  CheckSameDevice(y, x, "AddInPlace");
  if (y.numel() > 0) BackendFor(y.device()).AddInPlace(y, x, alpha);
}

Tensor ReduceOp(Reduce kind, const Tensor& x, std::vector<int> axes, bool keepdims) {
  CheckFloat(x, "ReduceOp", "x");
  const int rank = x.rank();
  std::vector<bool> reduced(rank, axes.empty());
  for (int axis : axes) {
    int a = NormalizeAxis(axis, rank, "ReduceOp");
    EDL_CHECK(!reduced[a]) << "ReduceOp: axis " << axis << " repeated";
    reduced[a] = true;
  }
  Shape kept_shape = x.shape(), out_shape;
  for (int i = 0; i < rank; ++i) {
    if (reduced[i]) {
      kept_shape[i] = 1;
      if (keepdims) out_shape.push_back(1);
    } else {
      out_shape.push_back(x.dim(i));
    }
  }
  Tensor y = Tensor::Empty(kept_shape, DType::kFloat32, x.device());
  if (y.numel() > 0) {
    if (x.numel() == 0) {
      // Reducing nothing: the identity of the reduction (NaN for a mean).
      float identity = 0.f;
      if (kind == Reduce::kMean) identity = std::numeric_limits<float>::quiet_NaN();
      if (kind == Reduce::kMax) identity = -std::numeric_limits<float>::infinity();
      if (kind == Reduce::kMin) identity = std::numeric_limits<float>::infinity();
      y.Fill(identity);
    } else {
      BackendFor(x.device()).ReduceOp(kind, x, y);
    }
  }
  return y.Reshape(out_shape);
}

Tensor MatMul(const Tensor& a, const Tensor& b, bool transpose_a, bool transpose_b) {
  CheckFloat(a, "MatMul", "a");
  CheckFloat(b, "MatMul", "b");
  CheckSameDevice(a, b, "MatMul");
  EDL_CHECK((a.rank() == 2 && b.rank() == 2) || (a.rank() == 3 && (b.rank() == 2 || b.rank() == 3)))
      << "MatMul: unsupported ranks " << ShapeString(a.shape()) << " x " << ShapeString(b.shape());
  if (a.rank() == 3 && b.rank() == 3) {
    EDL_CHECK_EQ(a.dim(0), b.dim(0)) << "MatMul: batch sizes differ";
  }
  const int ra = a.rank(), rb = b.rank();
  int64_t m = transpose_a ? a.dim(ra - 1) : a.dim(ra - 2);
  int64_t ka = transpose_a ? a.dim(ra - 2) : a.dim(ra - 1);
  int64_t kb = transpose_b ? b.dim(rb - 1) : b.dim(rb - 2);
  int64_t n = transpose_b ? b.dim(rb - 2) : b.dim(rb - 1);
  EDL_CHECK_EQ(ka, kb) << "MatMul: inner dimensions differ: " << ShapeString(a.shape())
                       << (transpose_a ? "^T" : "") << " x " << ShapeString(b.shape())
                       << (transpose_b ? "^T" : "");
  Shape shape = ra == 3 ? Shape{a.dim(0), m, n} : Shape{m, n};
  Tensor c = Tensor::Empty(shape, DType::kFloat32, a.device());
  if (c.numel() == 0) return c;
  if (ka == 0) {
    c.Fill(0.f);
    return c;
  }
  BackendFor(a.device()).MatMul(a, b, transpose_a, transpose_b, c);
  return c;
}

Tensor DenseForward(const Tensor& x, const Tensor& w, const Tensor& bias) {
  CheckFloat(x, "DenseForward", "x");
  CheckFloat(w, "DenseForward", "w");
  CheckSameDevice(x, w, "DenseForward");
  EDL_CHECK(x.rank() >= 2 && w.rank() == 2)
      << "DenseForward: x " << ShapeString(x.shape()) << " w " << ShapeString(w.shape());
  EDL_CHECK_EQ(x.dim(-1), w.dim(0))
      << "DenseForward: x " << ShapeString(x.shape()) << " w " << ShapeString(w.shape());
  if (bias.defined()) {
    CheckFloat(bias, "DenseForward", "bias");
    EDL_CHECK(bias.rank() == 1 && bias.dim(0) == w.dim(1))
        << "DenseForward: bias " << ShapeString(bias.shape()) << " for w "
        << ShapeString(w.shape());
  }
  // Leading dimensions of x are flattened into rows, as Keras' Dense.
  Shape out_shape = x.shape();
  out_shape.back() = w.dim(1);
  Tensor y = Tensor::Empty(out_shape, DType::kFloat32, x.device());
  if (y.numel() == 0) return y;
  Tensor y2 = y.Reshape({-1, w.dim(1)});
  if (w.dim(0) == 0) {
    // No inputs: the output is the bias alone.
    for (int64_t r = 0; r < y2.dim(0); ++r) {
      Tensor row = y2.Slice(r, r + 1);
      if (bias.defined())
        row.CopyFrom(bias);
      else
        row.Fill(0.f);
    }
    return y;
  }
  Tensor x2 = x.Reshape({-1, x.dim(-1)});
  BackendFor(x.device()).DenseForward(x2, w, bias, y2);
  return y;
}

}  // namespace edl::tensor
