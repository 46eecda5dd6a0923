// The CUDA tests' runtime: the plugin this build made (EDL_CUDA_PLUGIN_PATH,
// a compile definition of tensor_test; tests run from build/tests/, not
// beside it) unless EDL_CUDA_PLUGIN names another, loaded once.
#pragma once

#include <cstdlib>
#include <string>

#include "tensor/device_runtime.h"

namespace edl::tensor::testing {

inline Status LoadBuiltCudaRuntime() {
  const std::string built = EDL_CUDA_PLUGIN_PATH;
  if (!built.empty()) setenv("EDL_CUDA_PLUGIN", built.c_str(), /*overwrite=*/0);
  return LoadCudaRuntime();
}

}  // namespace edl::tensor::testing
