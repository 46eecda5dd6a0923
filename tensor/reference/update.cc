// Reference loops: optimizer updates (ApplyUpdate), one element at a time
// through the rules of tensor/update_rules.h.
#include "tensor/reference/loop_backend.h"
#include "tensor/update_rules.h"

namespace edl::tensor::reference {

void LoopBackend::ApplyUpdate(UpdateRule rule, const UpdateCoefficients& c, Tensor& value,
                              const Tensor& grad, std::vector<Tensor>& slots, const Tensor& ids) {
  float* s[kMaxUpdateSlots] = {nullptr, nullptr, nullptr};
  for (size_t k = 0; k < slots.size(); ++k) s[k] = slots[k].f32();
  float* w = value.f32();
  const float* g = grad.f32();
  DispatchUpdateRule(rule, [&]<UpdateRule R>() {
    if (!ids.defined()) {
      for (int64_t i = 0; i < value.numel(); ++i) {
        UpdateElement<R>(c, w, g, s[0], s[1], s[2], i, i);
      }
      return;
    }
    const int64_t n = ids.numel();
    const int64_t row_size = n == 0 ? 0 : grad.numel() / n;
    for (int64_t r = 0; r < n; ++r) {
      const int64_t id = ids.i64()[r];
      for (int64_t j = 0; j < row_size; ++j) {
        UpdateElement<R>(c, w, g, s[0], s[1], s[2], id * row_size + j, r * row_size + j);
      }
    }
  });
}

}  // namespace edl::tensor::reference
