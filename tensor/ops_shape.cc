// ops.h: shape ops, casts and embeddings. Checks, allocates, dispatches to
// the Backend of the inputs' device.
#include "tensor/backend.h"
#include "tensor/dropout_mask.h"
#include "tensor/ops.h"
#include "tensor/ops_util.h"

namespace edl::tensor {

using internal::CheckFloat;
using internal::CheckSameDevice;
using internal::NormalizeAxis;

Tensor Concat(const std::vector<Tensor>& xs, int axis) {
  EDL_CHECK(!xs.empty()) << "Concat: no inputs";
  const Tensor& first = xs[0];
  EDL_CHECK(first.defined()) << "Concat: input 0 is undefined";
  int a = NormalizeAxis(axis, first.rank(), "Concat");
  Shape shape = first.shape();
  shape[a] = 0;
  for (size_t i = 0; i < xs.size(); ++i) {
    const Tensor& x = xs[i];
    EDL_CHECK(x.defined()) << "Concat: input " << i << " is undefined";
    EDL_CHECK(x.dtype() == first.dtype()) << "Concat: dtypes differ";
    CheckSameDevice(x, first, "Concat");
    bool agree = x.rank() == first.rank();
    for (int d = 0; agree && d < x.rank(); ++d) {
      agree = d == a || x.dim(d) == first.dim(d);
    }
    EDL_CHECK(agree) << "Concat: input " << i << " " << ShapeString(x.shape()) << " does not match "
                     << ShapeString(first.shape()) << " except along axis " << a;
    shape[a] += x.dim(a);
  }
  Tensor y = Tensor::Empty(shape, first.dtype(), first.device());
  if (y.numel() > 0) BackendFor(first.device()).Concat(xs, a, y);
  return y;
}

std::vector<Tensor> Split(const Tensor& x, int axis, const std::vector<int64_t>& sizes) {
  EDL_CHECK(x.defined()) << "Split: x is undefined";
  int a = NormalizeAxis(axis, x.rank(), "Split");
  int64_t total = 0;
  for (int64_t s : sizes) {
    EDL_CHECK_GE(s, 0) << "Split: negative size";
    total += s;
  }
  EDL_CHECK_EQ(total, x.dim(a)) << "Split: sizes do not add up to axis " << a << " of "
                                << ShapeString(x.shape());
  std::vector<Tensor> ys;
  ys.reserve(sizes.size());
  for (int64_t s : sizes) {
    Shape shape = x.shape();
    shape[a] = s;
    ys.push_back(Tensor::Empty(shape, x.dtype(), x.device()));
  }
  if (x.numel() > 0) BackendFor(x.device()).Split(x, a, ys);
  return ys;
}

bool TransposeAvailable(Device device) { return BackendFor(device).HasTranspose(); }

Tensor Transpose(const Tensor& x, const std::vector<int>& perm) {
  CheckFloat(x, "Transpose", "x");
  std::vector<bool> seen(x.rank(), false);
  EDL_CHECK_EQ(static_cast<int>(perm.size()), x.rank())
      << "Transpose: perm of " << perm.size() << " axes for rank " << x.rank();
  Shape shape;
  for (int a : perm) {
    EDL_CHECK(a >= 0 && a < x.rank() && !seen[a]) << "Transpose: perm is not a permutation";
    seen[a] = true;
    shape.push_back(x.dim(a));
  }
  Tensor y = Tensor::Empty(shape, DType::kFloat32, x.device());
  if (y.numel() > 0) BackendFor(x.device()).Transpose(x, perm, y);
  return y;
}

Tensor Cast(const Tensor& x, DType dtype) {
  EDL_CHECK(x.defined()) << "Cast: x is undefined";
  auto supported = [](DType d) {
    return d == DType::kFloat32 || d == DType::kInt64 || d == DType::kUInt8;
  };
  EDL_CHECK(supported(x.dtype()) && supported(dtype))
      << "Cast: " << DTypeName(x.dtype()) << " -> " << DTypeName(dtype) << " is not supported";
  Tensor y = Tensor::Empty(x.shape(), dtype, x.device());
  if (x.numel() > 0) BackendFor(x.device()).Cast(x, y);
  return y;
}

Tensor DropoutMask(const Shape& shape, double rate, uint64_t seed, Device device) {
  EDL_CHECK(rate >= 0.0 && rate < 1.0) << "DropoutMask: rate " << rate;
  Tensor mask = Tensor::Empty(shape, DType::kFloat32, device);
  if (mask.numel() > 0) {
    BackendFor(device).DropoutMask(seed, DropoutDropBelow(rate),
                                   static_cast<float>(1.0 / (1.0 - rate)), mask);
  }
  return mask;
}

Tensor Gather(const Tensor& table, const Tensor& ids) {
  CheckFloat(table, "Gather", "table");
  EDL_CHECK(ids.defined() && ids.dtype() == DType::kInt64) << "Gather: ids must be int64";
  EDL_CHECK_EQ(table.rank(), 2) << "Gather: table " << ShapeString(table.shape());
  CheckSameDevice(table, ids, "Gather");
  Shape shape = ids.shape();
  shape.push_back(table.dim(1));
  Tensor y = Tensor::Empty(shape, DType::kFloat32, table.device());
  if (y.numel() > 0) {
    Tensor rows = y.Reshape({ids.numel(), table.dim(1)});
    BackendFor(table.device()).Gather(table, ids, rows);
  }
  return y;
}

SparseRows GatherBackward(const Tensor& dy, const Tensor& ids, int64_t num_rows) {
  CheckFloat(dy, "GatherBackward", "dy");
  EDL_CHECK(ids.defined() && ids.dtype() == DType::kInt64) << "GatherBackward: ids must be int64";
  EDL_CHECK(dy.rank() == ids.rank() + 1) << "GatherBackward: dy " << ShapeString(dy.shape())
                                         << " for ids " << ShapeString(ids.shape());
  for (int i = 0; i < ids.rank(); ++i) {
    EDL_CHECK_EQ(dy.dim(i), ids.dim(i)) << "GatherBackward: dy " << ShapeString(dy.shape())
                                        << " for ids " << ShapeString(ids.shape());
  }
  SparseRows rows;
  rows.ids = ids.Clone().Reshape({ids.numel()});
  rows.values = dy.Clone().Reshape({ids.numel(), dy.dim(-1)});
  rows.num_rows = num_rows;
  return rows;
}

namespace {
void CheckSparseRows(const SparseRows& rows, const char* op) {
  EDL_CHECK(rows.ids.defined() && rows.ids.dtype() == DType::kInt64 && rows.ids.rank() == 1)
      << op << ": ids must be int64 [n]";
  CheckFloat(rows.values, op, "values");
  EDL_CHECK(rows.values.rank() == 2 && rows.values.dim(0) == rows.ids.dim(0))
      << op << ": values " << ShapeString(rows.values.shape()) << " for " << rows.ids.dim(0)
      << " ids";
  EDL_CHECK_GE(rows.num_rows, 0);
}
}  // namespace

SparseRows Coalesce(const SparseRows& rows) {
  CheckSparseRows(rows, "Coalesce");
  return BackendFor(rows.values.device()).Coalesce(rows);
}

Tensor Densify(const SparseRows& rows) {
  CheckSparseRows(rows, "Densify");
  Tensor table =
      Tensor::Zeros({rows.num_rows, rows.values.dim(1)}, DType::kFloat32, rows.values.device());
  ScatterAdd(table, rows, 1.f);
  return table;
}

void ScatterAdd(Tensor& table, const SparseRows& rows, float alpha) {
  CheckSparseRows(rows, "ScatterAdd");
  CheckFloat(table, "ScatterAdd", "table");
  EDL_CHECK(table.rank() == 2 && table.dim(1) == rows.values.dim(1))
      << "ScatterAdd: table " << ShapeString(table.shape()) << " values "
      << ShapeString(rows.values.shape());
  CheckSameDevice(table, rows.values, "ScatterAdd");
  if (rows.ids.numel() == 0 || table.numel() == 0) return;
  BackendFor(table.device()).ScatterAdd(table, rows, alpha);
}

}  // namespace edl::tensor
