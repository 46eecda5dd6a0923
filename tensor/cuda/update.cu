// Optimizer updates on the GPU: one grid-stride kernel per rule, instantiated
// from the shared element functions of tensor/update_rules.h. Dense: one
// thread per element; sparse: one thread per gradient element, which finds
// its value row through ids (unique, so no two threads write one element).
#include "tensor/cuda/kernels.h"
#include "tensor/cuda/launch.h"

namespace edl::tensor::cuda {
namespace {

template <UpdateRule R>
__global__ void UpdateKernel(UpdateCoefficients c, float* w, const float* g, float* s0, float* s1,
                             float* s2, const int64_t* ids, int64_t num_rows, int64_t row_size,
                             int64_t n) {
  EDL_GRID_STRIDE(k, n) {
    if (ids == nullptr) {
      UpdateElement<R>(c, w, g, s0, s1, s2, k, k);
    } else {
      const int64_t id = ids[k / row_size];
      if (id < 0 || id >= num_rows) continue;
      UpdateElement<R>(c, w, g, s0, s1, s2, id * row_size + k % row_size, k);
    }
  }
}

template <UpdateRule R>
void Launch(const UpdateCoefficients& c, float* value, const float* grad, float* const* slots,
            const int64_t* ids, int64_t num_rows, int64_t row_size, int64_t n,
            cudaStream_t stream) {
  UpdateKernel<R><<<BlocksFor(n), kThreads, 0, stream>>>(c, value, grad, slots[0], slots[1],
                                                         slots[2], ids, num_rows, row_size, n);
  EDL_CUDA_LAUNCHED();
}

}  // namespace

void ApplyUpdate(UpdateRule rule, const UpdateCoefficients& c, float* value, const float* grad,
                 float* const slots[kMaxUpdateSlots], const int64_t* ids, int64_t num_rows,
                 int64_t row_size, int64_t n, cudaStream_t stream) {
  if (n == 0) return;
  using U = UpdateRule;
#define EDL_UPDATE_CASE(r) \
  case r: Launch<r>(c, value, grad, slots, ids, num_rows, row_size, n, stream); return;
  switch (rule) {
    EDL_UPDATE_CASE(U::kSgd)
    EDL_UPDATE_CASE(U::kSgdMomentum)
    EDL_UPDATE_CASE(U::kSgdNesterov)
    EDL_UPDATE_CASE(U::kAdam)
    EDL_UPDATE_CASE(U::kAmsgrad)
    EDL_UPDATE_CASE(U::kAdamax)
    EDL_UPDATE_CASE(U::kNadam)
    EDL_UPDATE_CASE(U::kAdagrad)
    EDL_UPDATE_CASE(U::kAdadelta)
    EDL_UPDATE_CASE(U::kRmsprop)
    EDL_UPDATE_CASE(U::kRmspropCentered)
    EDL_UPDATE_CASE(U::kRmspropMomentum)
    EDL_UPDATE_CASE(U::kRmspropMomentumCentered)
    EDL_UPDATE_CASE(U::kFtrl)
    EDL_UPDATE_CASE(U::kFtrlSqrt)
  }
#undef EDL_UPDATE_CASE
  EDL_CHECK(false) << "ApplyUpdate: unknown rule " << static_cast<int>(rule);
}

}  // namespace edl::tensor::cuda
