// ops.h: optimizer updates. Checks, dispatches to the Backend of the value's
// device.
#include "tensor/backend.h"
#include "tensor/ops_util.h"
#include "tensor/update_rules.h"

namespace edl::tensor {

using internal::CheckFloat;
using internal::CheckSameDevice;

const char* UpdateRuleName(UpdateRule rule) {
  switch (rule) {
    case UpdateRule::kSgd: return "sgd";
    case UpdateRule::kSgdMomentum: return "sgd_momentum";
    case UpdateRule::kSgdNesterov: return "sgd_nesterov";
    case UpdateRule::kAdam: return "adam";
    case UpdateRule::kAmsgrad: return "amsgrad";
    case UpdateRule::kAdamax: return "adamax";
    case UpdateRule::kNadam: return "nadam";
    case UpdateRule::kAdagrad: return "adagrad";
    case UpdateRule::kAdadelta: return "adadelta";
    case UpdateRule::kRmsprop: return "rmsprop";
    case UpdateRule::kRmspropCentered: return "rmsprop_centered";
    case UpdateRule::kRmspropMomentum: return "rmsprop_momentum";
    case UpdateRule::kRmspropMomentumCentered: return "rmsprop_momentum_centered";
    case UpdateRule::kFtrl: return "ftrl";
    case UpdateRule::kFtrlSqrt: return "ftrl_sqrt";
  }
  return "?";
}

void ApplyUpdate(UpdateRule rule, const UpdateCoefficients& coefficients, Tensor& value,
                 const Tensor& grad, std::vector<Tensor>& slots, const Tensor& ids) {
  const char* op = UpdateRuleName(rule);
  CheckFloat(value, op, "value");
  CheckFloat(grad, op, "grad");
  CheckSameDevice(value, grad, op);
  EDL_CHECK_EQ(static_cast<int>(slots.size()), UpdateSlotCount(rule))
      << "ApplyUpdate " << op << ": slots";
  for (const Tensor& slot : slots) {
    CheckFloat(slot, op, "slot");
    CheckSameDevice(value, slot, op);
    EDL_CHECK_EQ(slot.numel(), value.numel())
        << "ApplyUpdate " << op << ": slot " << ShapeString(slot.shape()) << " for value "
        << ShapeString(value.shape());
  }
  if (!ids.defined()) {
    EDL_CHECK_EQ(grad.numel(), value.numel())
        << "ApplyUpdate " << op << ": grad " << ShapeString(grad.shape()) << " for value "
        << ShapeString(value.shape());
    if (value.numel() == 0) return;
  } else {
    EDL_CHECK(ids.dtype() == DType::kInt64 && ids.rank() == 1)
        << "ApplyUpdate " << op << ": ids must be int64 [n]";
    CheckSameDevice(value, ids, op);
    EDL_CHECK_GE(value.rank(), 1) << "ApplyUpdate " << op << ": value";
    const int64_t num_rows = value.dim(0);
    const int64_t row_size = num_rows == 0 ? 0 : value.numel() / num_rows;
    const int64_t n = ids.numel();
    EDL_CHECK_EQ(grad.numel(), n * row_size)
        << "ApplyUpdate " << op << ": grad " << ShapeString(grad.shape()) << " for " << n
        << " rows of " << row_size;
    if (n == 0 || row_size == 0) return;
    if (ids.device() == Device::kCPU) {
      const int64_t* p = ids.i64();
      for (int64_t i = 0; i < n; ++i) {
        EDL_CHECK(p[i] >= 0 && p[i] < num_rows)
            << "ApplyUpdate " << op << ": id " << p[i] << " outside [0, " << num_rows << ")";
      }
    }
  }
  BackendFor(value.device()).ApplyUpdate(rule, coefficients, value, grad, slots, ids);
}

}  // namespace edl::tensor
