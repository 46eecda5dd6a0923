// CPU backend: optimizer updates (ApplyUpdate). Contiguous spans of the
// value (the whole variable, or one row per id) run the rule's loop, which
// vectorizes; spans are spread over the backend's threads when there is
// enough work. Elementwise, so the result does not depend on the split.
#include <algorithm>

#include "tensor/cpu/cpu_backend.h"
#include "tensor/cpu/parallel.h"
#include "tensor/update_rules.h"

namespace edl::tensor::cpu {
namespace {

// Below this many elements an update runs on the calling thread.
constexpr int64_t kGrain = int64_t{1} << 15;

template <UpdateRule R>
void UpdateSpan(const UpdateCoefficients& c, float* __restrict w, const float* __restrict g,
                float* __restrict s0, float* __restrict s1, float* __restrict s2, int64_t n) {
  // A local copy: no store through w or the slots can change it, so the
  // coefficients stay in registers across the loop.
  const UpdateCoefficients k = c;
#pragma omp simd
  for (int64_t i = 0; i < n; ++i) {
    UpdateElement<R>(k, w, g, s0, s1, s2, i, i);
  }
}

// p + offset, or null for a slot the rule does not keep.
float* At(float* p, int64_t offset) { return p ? p + offset : nullptr; }

}  // namespace

void DnnlBackend::ApplyUpdate(UpdateRule rule, const UpdateCoefficients& c, Tensor& value,
                              const Tensor& grad, std::vector<Tensor>& slots, const Tensor& ids) {
  float* s[kMaxUpdateSlots] = {nullptr, nullptr, nullptr};
  for (size_t k = 0; k < slots.size(); ++k) s[k] = slots[k].f32();
  float* const w = value.f32();
  const float* const g = grad.f32();
  DispatchUpdateRule(rule, [&]<UpdateRule R>() {
    if (!ids.defined()) {
      ParallelFor(value.numel(), kGrain, [&](int64_t b, int64_t e) {
        UpdateSpan<R>(c, w + b, g + b, At(s[0], b), At(s[1], b), At(s[2], b), e - b);
      });
      return;
    }
    const int64_t n = ids.numel();
    if (n == 0) return;
    const int64_t row_size = grad.numel() / n;
    const int64_t* const pid = ids.i64();
    ParallelFor(n, std::max<int64_t>(1, kGrain / std::max<int64_t>(row_size, 1)),
                [&](int64_t b, int64_t e) {
                  for (int64_t r = b; r < e; ++r) {
                    const int64_t off = pid[r] * row_size;
                    UpdateSpan<R>(c, w + off, g + r * row_size, At(s[0], off), At(s[1], off),
                                  At(s[2], off), row_size);
                  }
                });
  });
}

}  // namespace edl::tensor::cpu
