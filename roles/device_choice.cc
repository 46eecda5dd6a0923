#include "roles/device_choice.h"

#include "base/logging.h"
#include "tensor/device_runtime.h"
#include "tensor/gpu_info.h"

namespace edl::roles {

Result<tensor::Device> ChooseDevice(const std::string& flag) {
  if (flag.empty() || flag == "cpu") return tensor::Device::kCPU;
  if (flag != "cuda" && flag != "auto") {
    return InvalidArgument("--device: expected cpu, cuda or auto, got \"" + flag + "\"");
  }
  Status loaded = tensor::RuntimeFor(tensor::Device::kCUDA) != nullptr ? Status::Ok()
                                                                       : tensor::LoadCudaRuntime();
  if (loaded.ok()) {
    EDL_LOG(INFO) << "--device=" << flag << ": training on "
                  << tensor::RuntimeFor(tensor::Device::kCUDA)->Describe();
    return tensor::Device::kCUDA;
  }
  const std::string why =
      loaded.message() + " (GPUs on this machine: " + tensor::DescribeGpus().Summary() + ")";
  if (flag == "auto") {
    EDL_LOG(INFO) << "--device=auto: no usable GPU, training on the CPU: " << why;
    return tensor::Device::kCPU;
  }
  return Unavailable("--device=cuda: cannot use the GPU: " + why);
}

}  // namespace edl::roles
