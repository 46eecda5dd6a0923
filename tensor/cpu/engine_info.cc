#include "tensor/engine_info.h"

#include <oneapi/dnnl/dnnl.hpp>

#include "tensor/ops.h"

namespace edl::tensor {
namespace {
const char* IsaName(dnnl::cpu_isa isa) {
  switch (isa) {
    case dnnl::cpu_isa::sse41: return "sse41";
    case dnnl::cpu_isa::avx: return "avx";
    case dnnl::cpu_isa::avx2: return "avx2";
    case dnnl::cpu_isa::avx2_vnni: return "avx2_vnni";
    case dnnl::cpu_isa::avx512_core: return "avx512_core";
    case dnnl::cpu_isa::avx512_core_vnni: return "avx512_core_vnni";
    case dnnl::cpu_isa::avx512_core_bf16: return "avx512_core_bf16";
    case dnnl::cpu_isa::avx512_core_amx: return "avx512_core_amx";
    default: return "other";
  }
}
}  // namespace

EngineInfo GetEngineInfo() {
  EngineInfo info;
  const dnnl_version_t* v = dnnl_version();
  info.onednn_version =
      std::to_string(v->major) + "." + std::to_string(v->minor) + "." + std::to_string(v->patch);
  info.cpu_isa = IsaName(dnnl::get_effective_cpu_isa());
#ifdef EDL_CUDA
  info.cuda_compiled = true;
#endif
  info.num_threads = NumThreads();
  return info;
}

}  // namespace edl::tensor
