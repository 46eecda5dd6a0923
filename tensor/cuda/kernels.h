// The CUDA kernels of the CUDA backend, as host-side launchers over raw
// device pointers, element counts and a stream (tensor/cuda/*.cu). They queue
// work and return at once; none synchronizes except CoalesceRows. Semantics
// are those of tensor/reference/ (the test oracle); enum values mirror
// tensor/ops.h (checked in cuda_backend.cc).
#pragma once

#include <cuda_runtime.h>

#include <cstdint>
#include <functional>

#include "tensor/cuda/device_allocator.h"
#include "tensor/update_rules.h"

namespace edl::tensor::cuda {

inline constexpr int kMaxRank = 8;
// Dimensions or element strides of up to kMaxRank axes, passed by value.
struct Dims {
  int64_t v[kMaxRank] = {0};
};

// ---- elementwise (eltwise.cu) ----
// kind: the value of edl::tensor::Eltwise.
void EltwiseForward(int kind, const float* x, float alpha, float beta, float* y, int64_t n,
                    cudaStream_t stream);
void EltwiseBackward(int kind, const float* dy, const float* x, float alpha, float beta, float* dx,
                     int64_t n, cudaStream_t stream);
// y = alpha * x + beta.
void Affine(const float* x, float alpha, float beta, float* y, int64_t n, cudaStream_t stream);
// y += alpha * x.
void AddInPlace(float* y, const float* x, float alpha, int64_t n, cudaStream_t stream);
// y[r, c] += bias[c] for y [rows, c].
void AddBias(float* y, const float* bias, int64_t rows, int64_t c, cudaStream_t stream);

// ---- broadcasting and reductions (broadcast.cu) ----
// kind: the value of edl::tensor::Binary. a_strides/b_strides are element
// strides per output axis, 0 where broadcast (reference::BroadcastStrides).
void BinaryBroadcast(int kind, const float* a, const Dims& a_strides, const float* b,
                     const Dims& b_strides, float* y, const Dims& y_dims, int rank, int64_t n,
                     cudaStream_t stream);
// kind: the value of edl::tensor::Reduce. y_dims has x's rank, 1 on every
// reduced axis. Accumulates in double.
void ReduceToShape(int kind, const float* x, const Dims& x_dims, float* y, const Dims& y_dims,
                   int rank, cudaStream_t stream);

// ---- normalization (norm.cu); x viewed as [rows, c] ----
void BatchNormStatistics(const float* x, int64_t rows, int64_t c, float* mean, float* variance,
                         DeviceAllocator& allocator, cudaStream_t stream);
void BatchNormApply(const float* x, const float* gamma, const float* beta, const float* mean,
                    const float* variance, float epsilon, float* y, int64_t rows, int64_t c,
                    cudaStream_t stream);
void BatchNormBackward(const float* dy, const float* x, const float* gamma, const float* mean,
                       const float* variance, float epsilon, float* dx, float* dgamma, float* dbeta,
                       int64_t rows, int64_t c, DeviceAllocator& allocator, cudaStream_t stream);
void LayerNormForward(const float* x, const float* gamma, const float* beta, float epsilon,
                      float* y, float* mean, float* variance, int64_t rows, int64_t c,
                      cudaStream_t stream);
void LayerNormBackward(const float* dy, const float* x, const float* gamma, const float* mean,
                       const float* variance, float epsilon, float* dx, float* dgamma, float* dbeta,
                       int64_t rows, int64_t c, DeviceAllocator& allocator, cudaStream_t stream);
// out[c] = sum over rows of x[r, c].
void ColumnSums(const float* x, int64_t rows, int64_t c, float* out, DeviceAllocator& allocator,
                cudaStream_t stream);

// ---- pooling (pool.cu), NHWC ----
struct PoolGeometry {
  int64_t n, h, w, c;      // input
  int64_t oh, ow;          // output
  int64_t kh, kw, sh, sw;  // window and strides
  int64_t pad_top, pad_left;
};
// argmax (may be null): per output, the input index of the first maximal
// tap, or -1 for an empty window. Max only.
void MaxPoolForward(const float* x, float* y, int64_t* argmax, const PoolGeometry& g,
                    cudaStream_t stream);
void AvgPoolForward(const float* x, float* y, const PoolGeometry& g, cudaStream_t stream);
void MaxPoolBackward(const float* dy, const int64_t* argmax, float* dx, const PoolGeometry& g,
                     cudaStream_t stream);
void AvgPoolBackward(const float* dy, float* dx, const PoolGeometry& g, cudaStream_t stream);

// ---- random (random.cu) ----
// mask[i] = DropoutMaskAt(seed, i, drop_below, keep_scale) (tensor/dropout_mask.h).
void DropoutMask(float* mask, int64_t n, uint64_t seed, uint64_t drop_below, float keep_scale,
                 cudaStream_t stream);

// ---- layout and indexing (shape.cu) ----
// dtype codes: the value of edl::tensor::DType (float32, int64, uint8).
void Cast(const void* x, int from_dtype, void* y, int to_dtype, int64_t n, cudaStream_t stream);
// y [cols, rows] with y[j, i] = x[i, j] for x [rows, cols].
void Transpose2D(const float* x, float* y, int64_t rows, int64_t cols, cudaStream_t stream);
// The same between strided matrices: y[j * y_ld + i] = x[i * x_ld + j] for
// i < rows, j < cols (a column block of a wider matrix, e.g. one RNN gate).
void TransposeStrided(const float* x, int64_t x_ld, float* y, int64_t y_ld, int64_t rows,
                      int64_t cols, cudaStream_t stream);
// y [batch, cols, rows] from x [batch, rows, cols]: images between NHWC
// ([n, h * w, c]) and NCHW ([n, c, h * w]).
void BatchedTranspose(const float* x, float* y, int64_t batch, int64_t rows, int64_t cols,
                      cudaStream_t stream);
// y (y_dims, contiguous, n elements) = x with its axes permuted: axis k of y
// is x's axis perm[k], whose element stride x_strides.v[k] carries.
void Permute(const float* x, const Dims& x_strides, float* y, const Dims& y_dims, int rank,
             int64_t n, cudaStream_t stream);
// NHWC zero padding: y [n, h + top + bottom, w + left + right, c].
void PadImage(const float* x, float* y, int64_t n, int64_t h, int64_t w, int64_t c, int64_t top,
              int64_t bottom, int64_t left, int64_t right, cudaStream_t stream);
// The inverse: x [n, h, w, c] = the interior of padded y.
void CropImage(const float* y, float* x, int64_t n, int64_t h, int64_t w, int64_t c, int64_t top,
               int64_t bottom, int64_t left, int64_t right, cudaStream_t stream);
// y[i, :] = table[ids[i], :]; rows with an id outside [0, v) become zeros.
void Gather(const float* table, int64_t v, int64_t d, const int64_t* ids, int64_t n, float* y,
            cudaStream_t stream);
// table[ids[i], :] += alpha * values[i, :] (atomics); ids outside [0, v) are
// skipped.
void ScatterAdd(float* table, int64_t v, int64_t d, const int64_t* ids, const float* values,
                int64_t n, float alpha, cudaStream_t stream);

// ---- sparse rows (coalesce.cu) ----
// Sums rows with equal ids. Calls make_outputs(count) once the number of
// unique ids is known (this waits for the stream); it returns device buffers
// for count ids and count * d values, filled in ascending id order.
struct CoalesceOutputs {
  int64_t* ids;
  float* values;
};
void CoalesceRows(const int64_t* ids, const float* values, int64_t n, int64_t d,
                  const std::function<CoalesceOutputs(int64_t)>& make_outputs,
                  DeviceAllocator& allocator, cudaStream_t stream);

// ---- optimizer updates (update.cu) ----
// One kernel launch of `rule` in place. Dense (ids null): n elements of
// value, grad and slots. Sparse: grad [n / row_size, row_size] holds the
// rows ids (unique; ids outside [0, num_rows) are skipped) of value and
// slots [num_rows, row_size]. slots[k] may be null for k >=
// UpdateSlotCount(rule).
void ApplyUpdate(UpdateRule rule, const UpdateCoefficients& c, float* value, const float* grad,
                 float* const slots[kMaxUpdateSlots], const int64_t* ids, int64_t num_rows,
                 int64_t row_size, int64_t n, cudaStream_t stream);

}  // namespace edl::tensor::cuda
