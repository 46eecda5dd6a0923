// CPU backend: matrix products on oneDNN matmul (transposes as strides,
// batched 3-D with a shared or per-batch right operand, fused bias).
#include "tensor/cpu/cpu_backend.h"
#include "tensor/cpu/dnnl_common.h"

namespace edl::tensor::cpu {
namespace {

// A [batch?, rows, cols] descriptor over a row-major [batch?, r, c] tensor,
// transposed by strides when `transpose`.
dnnl::memory::desc MatrixMd(const Tensor& t, bool transpose, int rank) {
  const int64_t r = t.dim(-2), c = t.dim(-1);
  const int64_t batch = t.rank() == 3 ? t.dim(0) : 1;
  const int64_t batch_stride = t.rank() == 3 ? r * c : 0;
  Dims dims = transpose ? Dims{c, r} : Dims{r, c};
  Dims strides = transpose ? Dims{1, c} : Dims{c, 1};
  if (rank == 3) {
    dims.insert(dims.begin(), batch);
    strides.insert(strides.begin(), batch_stride == 0 ? r * c : batch_stride);
  }
  return dnnl::memory::desc(dims, dt::f32, strides);
}

struct MatMulEntry {
  dnnl::memory::desc a, b, bias, c;
  dnnl::matmul prim;
};

void RunMatMul(const char* op, const Tensor& a, const Tensor& b, const Tensor& bias, bool ta,
               bool tb, Tensor& c) {
  const int rank = c.rank();
  Key key("matmul");
  key << a.shape() << b.shape() << static_cast<int64_t>(ta) << static_cast<int64_t>(tb)
      << static_cast<int64_t>(bias.defined());
  RunDnnl(op, [&] {
    auto e = Cached<MatMulEntry>(key.str(), [&] {
      auto entry = std::make_shared<MatMulEntry>();
      entry->a = MatrixMd(a, ta, rank);
      entry->b = MatrixMd(b, tb, rank);
      entry->c = PlainMd(ToDims(c.shape()));
      if (bias.defined()) {
        entry->bias = PlainMd(rank == 3 ? Dims{1, 1, c.dim(-1)} : Dims{1, c.dim(-1)});
      }
      entry->prim = dnnl::matmul(dnnl::matmul::primitive_desc(
          bias.defined() ? dnnl::matmul::desc(entry->a, entry->b, entry->bias, entry->c)
                         : dnnl::matmul::desc(entry->a, entry->b, entry->c),
          Engine()));
      return entry;
    });
    std::unordered_map<int, dnnl::memory> args{{DNNL_ARG_SRC, UserMemory(e->a, a)},
                                               {DNNL_ARG_WEIGHTS, UserMemory(e->b, b)},
                                               {DNNL_ARG_DST, UserMemory(e->c, c)}};
    if (bias.defined()) args[DNNL_ARG_BIAS] = UserMemory(e->bias, bias);
    e->prim.execute(ThreadStream(), args);
  });
}

}  // namespace

void DnnlBackend::MatMul(const Tensor& a, const Tensor& b, bool transpose_a, bool transpose_b,
                         Tensor& c) {
  RunMatMul("MatMul", a, b, Tensor(), transpose_a, transpose_b, c);
}

void DnnlBackend::DenseForward(const Tensor& x, const Tensor& w, const Tensor& bias, Tensor& y) {
  RunMatMul("DenseForward", x, w, bias, false, false, y);
}

}  // namespace edl::tensor::cpu
