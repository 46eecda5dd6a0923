// CudaBackend: whole-sequence SimpleRNN (tanh), LSTM and reset-after GRU on
// cuDNN's RNN API: one layer, one direction, fp32 with FMA math (no TF32),
// batch-major unpacked sequences ([N, T, F], every sequence T steps), so x,
// y and the states are used where they are. The weights are not: cuDNN keeps
// one matrix per gate, [U, F] row-major, in a weight space of its own, where
// Keras keeps the gates side by side in [F, G*U]. The forward packs them
// (one strided transpose per gate) into a buffer kept after cuDNN's reserve
// space in the workspace tensor it returns; the backward reads them there
// and unpacks the weight gradients the same way.
//
// Gate orders: LSTM i, f, c, o in both; GRU z, r, h in Keras, r, z, h in
// cuDNN. Biases: cuDNN has an input and a recurrent bias per gate. The
// primitive bias of tensor/ops.h goes to the input biases, and reset-after
// GRU's b'_h to the recurrent bias of h; the other recurrent biases stay 0.
#include <cudnn.h>

#include <map>
#include <memory>
#include <tuple>
#include <vector>

#include "tensor/cuda/cuda_backend.h"
#include "tensor/cuda/cudnn_descriptors.h"
#include "tensor/cuda/kernels.h"

namespace edl::tensor::cuda {
namespace {

// Where the weights go: after the reserve space, on this boundary.
constexpr size_t kAlign = 256;

// One problem's descriptors and layout, built once per (cell, N, T, F, U).
struct RnnPlan {
  int64_t f = 0, u = 0, gates = 0;
  cudnnRNNDescriptor_t rnn = nullptr;
  cudnnDropoutDescriptor_t dropout = nullptr;
  cudnnRNNDataDescriptor_t x = nullptr, y = nullptr;
  cudnnTensorDescriptor_t h = nullptr;
  int32_t* seq_lengths = nullptr;  // device: N copies of T
  size_t weight_bytes = 0, work_bytes = 0, reserve_bytes = 0;
  // Float offsets in the weight space per cuDNN linear layer id (0..G-1
  // the input matrices, G..2G-1 the recurrent ones) of its matrix and bias.
  std::vector<int64_t> matrix_at, bias_at;

  size_t weights_at() const { return (reserve_bytes + kAlign - 1) / kAlign * kAlign; }
  size_t saved_bytes() const { return weights_at() + weight_bytes; }
};

using PlanKey = std::tuple<int, int64_t, int64_t, int64_t, int64_t>;

// cuDNN's gate for Keras' gate k.
int CudnnGate(RnnCell cell, int k) {
  if (cell == RnnCell::kGRUResetAfter && k < 2) return 1 - k;  // z, r -> r, z
  return k;
}

cudnnRNNMode_t ModeOf(RnnCell cell) {
  switch (cell) {
    case RnnCell::kSimpleRNN: return CUDNN_RNN_TANH;
    case RnnCell::kLSTM: return CUDNN_LSTM;
    case RnnCell::kGRUResetAfter: return CUDNN_GRU;
    case RnnCell::kGRU: break;
  }
  EDL_CHECK(false) << "cuDNN has no GRU that resets before the recurrent product";
  return CUDNN_RNN_TANH;
}

cudnnRNNDataDescriptor_t SequenceDesc(int64_t n, int64_t t, int64_t width) {
  cudnnRNNDataDescriptor_t d = nullptr;
  EDL_CUDNN_CHECK(cudnnCreateRNNDataDescriptor(&d));
  std::vector<int> lengths(n, CheckedInt(t));
  float fill = 0.f;
  EDL_CUDNN_CHECK(cudnnSetRNNDataDescriptor(
      d, CUDNN_DATA_FLOAT, CUDNN_RNN_DATA_LAYOUT_BATCH_MAJOR_UNPACKED, CheckedInt(t), CheckedInt(n),
      CheckedInt(width), lengths.data(), &fill));
  return d;
}

// Records where linear layer `id`'s matrix and bias lie in `space`,
// checking the matrix has the [rows, cols] it is packed as.
void Locate(CudaContext& ctx, RnnPlan& p, void* space, int id, int64_t rows, int64_t cols) {
  cudnnTensorDescriptor_t md = nullptr, bd = nullptr;
  EDL_CUDNN_CHECK(cudnnCreateTensorDescriptor(&md));
  EDL_CUDNN_CHECK(cudnnCreateTensorDescriptor(&bd));
  void* m = nullptr;
  void* b = nullptr;
  EDL_CUDNN_CHECK(
      cudnnGetRNNWeightParams(ctx.dnn, p.rnn, 0, p.weight_bytes, space, id, md, &m, bd, &b));
  cudnnDataType_t type;
  int rank = 0, dims[4] = {0, 0, 0, 0}, strides[4] = {0, 0, 0, 0};
  EDL_CUDNN_CHECK(cudnnGetTensorNdDescriptor(md, 4, &type, &rank, dims, strides));
  EDL_CHECK(m != nullptr && b != nullptr && rank == 3 && dims[1] == rows && dims[2] == cols &&
            strides[2] == 1 && strides[1] == cols)
      << "cuDNN RNN weight " << id << ": expected a [" << rows << ", " << cols
      << "] row-major matrix, got rank " << rank << " dims " << dims[0] << "x" << dims[1] << "x"
      << dims[2] << " strides " << strides[0] << "," << strides[1] << "," << strides[2];
  p.matrix_at[id] = static_cast<float*>(m) - static_cast<float*>(space);
  p.bias_at[id] = static_cast<float*>(b) - static_cast<float*>(space);
  cudnnDestroyTensorDescriptor(md);
  cudnnDestroyTensorDescriptor(bd);
}

// REQUIRES: ctx.dnn_mu held. Plans live as long as the process (a handful
// of sequence shapes per model).
const RnnPlan& PlanFor(CudaContext& ctx, RnnCell cell, int64_t n, int64_t t, int64_t f, int64_t u) {
  static auto* plans = new std::map<PlanKey, std::unique_ptr<RnnPlan>>;
  const PlanKey key{static_cast<int>(cell), n, t, f, u};
  if (auto it = plans->find(key); it != plans->end()) return *it->second;
  auto p = std::make_unique<RnnPlan>();
  p->f = f;
  p->u = u;
  p->gates = RnnGates(cell);
  EDL_CUDNN_CHECK(cudnnCreateDropoutDescriptor(&p->dropout));
  EDL_CUDNN_CHECK(cudnnSetDropoutDescriptor(p->dropout, ctx.dnn, 0.f, nullptr, 0, 0));
  EDL_CUDNN_CHECK(cudnnCreateRNNDescriptor(&p->rnn));
  EDL_CUDNN_CHECK(cudnnSetRNNDescriptor_v8(
      p->rnn, CUDNN_RNN_ALGO_STANDARD, ModeOf(cell), CUDNN_RNN_DOUBLE_BIAS, CUDNN_UNIDIRECTIONAL,
      CUDNN_LINEAR_INPUT, CUDNN_DATA_FLOAT, CUDNN_DATA_FLOAT, CUDNN_FMA_MATH, CheckedInt(f),
      CheckedInt(u), CheckedInt(u), 1, p->dropout, CUDNN_RNN_PADDED_IO_ENABLED));
  p->x = SequenceDesc(n, t, f);
  p->y = SequenceDesc(n, t, u);
  EDL_CUDNN_CHECK(cudnnCreateTensorDescriptor(&p->h));
  const int dims[3] = {1, CheckedInt(n), CheckedInt(u)};
  const int strides[3] = {CheckedInt(n * u), CheckedInt(u), 1};
  EDL_CUDNN_CHECK(cudnnSetTensorNdDescriptor(p->h, CUDNN_DATA_FLOAT, 3, dims, strides));
  EDL_CUDNN_CHECK(cudnnGetRNNWeightSpaceSize(ctx.dnn, p->rnn, &p->weight_bytes));
  EDL_CUDNN_CHECK(cudnnGetRNNTempSpaceSizes(ctx.dnn, p->rnn, CUDNN_FWD_MODE_TRAINING, p->x,
                                            &p->work_bytes, &p->reserve_bytes));
  p->matrix_at.assign(2 * p->gates, -1);
  p->bias_at.assign(2 * p->gates, -1);
  {
    DeviceBuffer space(ctx.allocator, p->weight_bytes);
    for (int id = 0; id < 2 * p->gates; ++id) {
      Locate(ctx, *p, space.data(), id, u, id < p->gates ? f : u);
    }
  }
  const std::vector<int32_t> lengths(n, static_cast<int32_t>(t));
  EDL_CUDA_CHECK(cudaMalloc(&p->seq_lengths, n * sizeof(int32_t)));
  EDL_CUDA_CHECK(
      cudaMemcpy(p->seq_lengths, lengths.data(), n * sizeof(int32_t), cudaMemcpyHostToDevice));
  return *plans->emplace(key, std::move(p)).first->second;
}

void CopyFloats(float* dst, const float* src, int64_t n, cudaStream_t stream) {
  EDL_CUDA_CHECK(cudaMemcpyAsync(dst, src, n * sizeof(float), cudaMemcpyDeviceToDevice, stream));
}

// Keras kernels and the primitive bias into cuDNN's weight space.
void Pack(RnnCell cell, const RnnPlan& p, const Tensor& w_x, const Tensor& w_h, const Tensor& bias,
          float* space, cudaStream_t stream) {
  const int64_t g = p.gates, u = p.u, f = p.f, width = g * u;
  EDL_CUDA_CHECK(cudaMemsetAsync(space, 0, p.weight_bytes, stream));
  for (int k = 0; k < g; ++k) {
    const int c = CudnnGate(cell, k);
    TransposeStrided(w_x.f32() + k * u, width, space + p.matrix_at[c], f, f, u, stream);
    TransposeStrided(w_h.f32() + k * u, width, space + p.matrix_at[g + c], u, u, u, stream);
    CopyFloats(space + p.bias_at[c], bias.f32() + k * u, u, stream);
  }
  if (cell == RnnCell::kGRUResetAfter) {
    CopyFloats(space + p.bias_at[g + 2], bias.f32() + 3 * u, u, stream);
  }
}

// The inverse of Pack, for gradients.
void Unpack(RnnCell cell, const RnnPlan& p, const float* space, RnnGrads& grads,
            cudaStream_t stream) {
  const int64_t g = p.gates, u = p.u, f = p.f, width = g * u;
  for (int k = 0; k < g; ++k) {
    const int c = CudnnGate(cell, k);
    TransposeStrided(space + p.matrix_at[c], f, grads.dw_x.f32() + k * u, width, u, f, stream);
    TransposeStrided(space + p.matrix_at[g + c], u, grads.dw_h.f32() + k * u, width, u, u, stream);
    CopyFloats(grads.dbias.f32() + k * u, space + p.bias_at[c], u, stream);
  }
  if (cell == RnnCell::kGRUResetAfter) {
    CopyFloats(grads.dbias.f32() + 3 * u, space + p.bias_at[g + 2], u, stream);
  }
}

}  // namespace

Tensor CudaBackend::RnnForward(RnnCell cell, const Tensor& x, const Tensor& w_x, const Tensor& w_h,
                               const Tensor& bias, Tensor& y, Tensor& h, Tensor& c) {
  std::lock_guard<std::mutex> lock(ctx_.dnn_mu);
  const RnnPlan& p = PlanFor(ctx_, cell, x.dim(0), x.dim(1), x.dim(2), w_h.dim(0));
  Tensor saved =
      Tensor::Empty({static_cast<int64_t>(p.saved_bytes())}, DType::kUInt8, Device::kCUDA);
  char* reserve = static_cast<char*>(saved.raw_data());
  float* weights = reinterpret_cast<float*>(reserve + p.weights_at());
  Pack(cell, p, w_x, w_h, bias, weights, ctx_.stream);
  DeviceBuffer work(ctx_.allocator, p.work_bytes);
  EDL_CUDNN_CHECK(cudnnRNNForward(ctx_.dnn, p.rnn, CUDNN_FWD_MODE_TRAINING, p.seq_lengths, p.x,
                                  x.f32(), p.y, y.f32(), p.h, nullptr, h.f32(), p.h, nullptr,
                                  cell == RnnCell::kLSTM ? c.f32() : nullptr, p.weight_bytes,
                                  weights, p.work_bytes, work.data(), p.reserve_bytes, reserve));
  return saved;
}

void CudaBackend::RnnBackward(RnnCell cell, const Tensor& x, const Tensor& w_x, const Tensor& w_h,
                              const Tensor& bias, const RnnForwardResult& forward, const Tensor& dy,
                              const Tensor& dh, const Tensor& dc, RnnGrads& grads) {
  std::lock_guard<std::mutex> lock(ctx_.dnn_mu);
  const RnnPlan& p = PlanFor(ctx_, cell, x.dim(0), x.dim(1), x.dim(2), w_h.dim(0));
  Tensor saved = forward.workspace;
  EDL_CHECK(saved.defined() && saved.device() == Device::kCUDA &&
            saved.numel() == static_cast<int64_t>(p.saved_bytes()))
      << "RnnBackward: the workspace is not from this RNN's forward on the GPU";
  char* reserve = static_cast<char*>(saved.raw_data());
  const float* weights = reinterpret_cast<const float*>(reserve + p.weights_at());
  const bool lstm = cell == RnnCell::kLSTM;
  DeviceBuffer work(ctx_.allocator, p.work_bytes);
  EDL_CUDNN_CHECK(cudnnRNNBackwardData_v8(
      ctx_.dnn, p.rnn, p.seq_lengths, p.y, forward.y.f32(), dy.f32(), p.x, grads.dx.f32(), p.h,
      nullptr, dh.defined() ? dh.f32() : nullptr, nullptr, p.h, nullptr,
      lstm && dc.defined() ? dc.f32() : nullptr, nullptr, p.weight_bytes, weights, p.work_bytes,
      work.data(), p.reserve_bytes, reserve));
  DeviceBuffer dweights(ctx_.allocator, p.weight_bytes);
  EDL_CUDA_CHECK(cudaMemsetAsync(dweights.data(), 0, p.weight_bytes, ctx_.stream));
  EDL_CUDNN_CHECK(cudnnRNNBackwardWeights_v8(ctx_.dnn, p.rnn, CUDNN_WGRAD_MODE_ADD, p.seq_lengths,
                                             p.x, x.f32(), p.h, nullptr, p.y, forward.y.f32(),
                                             p.weight_bytes, dweights.data(), p.work_bytes,
                                             work.data(), p.reserve_bytes, reserve));
  Unpack(cell, p, dweights.as<float>(), grads, ctx_.stream);
}

}  // namespace edl::tensor::cuda
