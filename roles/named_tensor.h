// NamedTensor: a tensor with the name of the variable it holds
// ("dense/kernel", "dense/kernel/m"), as checkpoints and the wire carry them.
#pragma once

#include <string>

#include "tensor/tensor.h"

namespace edl::roles {

struct NamedTensor {
  std::string name;
  tensor::Tensor value;
};

}  // namespace edl::roles
