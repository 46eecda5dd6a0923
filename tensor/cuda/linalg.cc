// CudaBackend: matrix products on cuBLAS and softmax on cuDNN.
#include <climits>

#include "tensor/cuda/cuda_backend.h"
#include "tensor/cuda/cudnn_descriptors.h"
#include "tensor/cuda/kernels.h"

namespace edl::tensor::cuda {

void CudaBackend::MatMul(const Tensor& a, const Tensor& b, bool transpose_a, bool transpose_b,
                         Tensor& c) {
  // cuBLAS is column-major, and a row-major X is the column-major X^T, so
  // C = op(A) op(B) is computed as C^T = op(B)^T op(A)^T.
  const int ra = a.rank(), rb = b.rank();
  const int64_t batch = ra == 3 ? a.dim(0) : 1;
  const int64_t a_rows = a.dim(ra - 2), a_cols = a.dim(ra - 1);
  const int64_t b_rows = b.dim(rb - 2), b_cols = b.dim(rb - 1);
  const int64_t m = c.dim(-2), n = c.dim(-1);
  const int64_t k = transpose_a ? a_rows : a_cols;
  if (m == 0 || n == 0 || batch == 0) return;
  for (int64_t v : {m, n, k, a_cols, b_cols, batch}) {
    EDL_CHECK_LE(v, INT_MAX) << "MatMul: dimension too large for cuBLAS";
  }
  const float one = 1.f, zero = 0.f;
  std::lock_guard<std::mutex> lock(ctx_.blas_mu);
  EDL_CUBLAS_CHECK(cublasSgemmStridedBatched(
      ctx_.blas, transpose_b ? CUBLAS_OP_T : CUBLAS_OP_N, transpose_a ? CUBLAS_OP_T : CUBLAS_OP_N,
      static_cast<int>(n), static_cast<int>(m), static_cast<int>(k), &one, b.f32(),
      static_cast<int>(b_cols), rb == 3 ? b_rows * b_cols : 0, a.f32(), static_cast<int>(a_cols),
      a_rows * a_cols, &zero, c.f32(), static_cast<int>(n), m * n, static_cast<int>(batch)));
}

void CudaBackend::DenseForward(const Tensor& x, const Tensor& w, const Tensor& bias, Tensor& y) {
  MatMul(x, w, false, false, y);
  if (bias.defined()) AddBias(y.f32(), bias.f32(), y.dim(0), y.dim(1), ctx_.stream);
}

namespace {
// [outer, size, inner] around axis.
TensorDesc SoftmaxDesc(const Shape& s, int axis) {
  int64_t outer = 1, inner = 1;
  for (int i = 0; i < axis; ++i) outer *= s[i];
  for (size_t i = axis + 1; i < s.size(); ++i) inner *= s[i];
  return TensorDesc::Nch(outer, s[axis], inner);
}
}  // namespace

void CudaBackend::Softmax(const Tensor& x, int axis, bool log, Tensor& y) {
  const TensorDesc desc = SoftmaxDesc(x.shape(), axis);
  const float one = 1.f, zero = 0.f;
  std::lock_guard<std::mutex> lock(ctx_.dnn_mu);
  EDL_CUDNN_CHECK(cudnnSoftmaxForward(ctx_.dnn, log ? CUDNN_SOFTMAX_LOG : CUDNN_SOFTMAX_ACCURATE,
                                      CUDNN_SOFTMAX_MODE_CHANNEL, &one, desc.get(), x.f32(), &zero,
                                      desc.get(), y.f32()));
}

void CudaBackend::SoftmaxBackward(const Tensor& dy, const Tensor& y, int axis, bool log,
                                  Tensor& dx) {
  // softmax: dx = y * (dy - sum(dy * y)); log: dx = dy - exp(y) * sum(dy).
  const TensorDesc desc = SoftmaxDesc(y.shape(), axis);
  const float one = 1.f, zero = 0.f;
  std::lock_guard<std::mutex> lock(ctx_.dnn_mu);
  EDL_CUDNN_CHECK(cudnnSoftmaxBackward(ctx_.dnn, log ? CUDNN_SOFTMAX_LOG : CUDNN_SOFTMAX_ACCURATE,
                                       CUDNN_SOFTMAX_MODE_CHANNEL, &one, desc.get(), y.f32(),
                                       desc.get(), dy.f32(), &zero, desc.get(), dx.f32()));
}

}  // namespace edl::tensor::cuda
