// DescribeGpus: which NVIDIA GPUs this machine has, asked of the driver
// (libcuda.so.1 through dlopen) so that it works without the CUDA plugin and
// on machines with no driver at all. For `edl version` and logs.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

namespace edl::tensor {

struct GpuDevice {
  std::string name;  // "NVIDIA H100 80GB HBM3"
  uint64_t total_bytes = 0;
};

struct GpuInfo {
  std::vector<GpuDevice> devices;  // empty when there is none
  int driver_version = 0;          // CUDA driver API version, e.g. 13000
  std::string reason;              // why devices is empty, e.g. "libcuda.so.1 not found"

  // "NVIDIA H100 80GB HBM3 (1 device, driver 13.0)" or "none (<reason>)".
  std::string Summary() const;
};

// Never fails: a missing driver or GPU is reported in GpuInfo::reason.
GpuInfo DescribeGpus();

}  // namespace edl::tensor
