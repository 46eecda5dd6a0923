// What the tensor engine is running on, for `edl version` and logs.
#pragma once

#include <string>

namespace edl::tensor {

struct EngineInfo {
  std::string onednn_version;  // "2.6.3"
  std::string cpu_isa;         // the ISA oneDNN dispatches to, e.g. "avx512_core"
  bool cuda_compiled = false;  // built with the CUDA backend
  int num_threads = 1;
};

EngineInfo GetEngineInfo();

}  // namespace edl::tensor
