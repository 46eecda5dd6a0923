#include "tensor/gpu_info.h"

#include <dlfcn.h>

#include <cstdio>

namespace edl::tensor {
namespace {

// The few driver API entry points used, declared here so that this file
// needs no CUDA header (cuda.h: CUresult is an int enum, CUdevice an int).
using CuInit = int (*)(unsigned int);
using CuDriverGetVersion = int (*)(int*);
using CuDeviceGetCount = int (*)(int*);
using CuDeviceGet = int (*)(int*, int);
using CuDeviceGetName = int (*)(char*, int, int);
using CuDeviceTotalMem = int (*)(size_t*, int);

template <typename F>
F Symbol(void* lib, const char* name) {
  return reinterpret_cast<F>(dlsym(lib, name));
}

}  // namespace

std::string GpuInfo::Summary() const {
  if (devices.empty()) return "none (" + reason + ")";
  char driver[32];
  std::snprintf(driver, sizeof(driver), "%d.%d", driver_version / 1000,
                (driver_version % 1000) / 10);
  std::string s = devices[0].name + " (" + std::to_string(devices.size()) +
                  (devices.size() == 1 ? " device" : " devices");
  for (size_t i = 1; i < devices.size(); ++i) {
    if (devices[i].name != devices[0].name) {
      s += ", mixed models";
      break;
    }
  }
  return s + ", driver " + driver + ")";
}

GpuInfo DescribeGpus() {
  GpuInfo info;
  void* lib = dlopen("libcuda.so.1", RTLD_NOW | RTLD_LOCAL);
  if (lib == nullptr) {
    info.reason = "libcuda.so.1 not found";
    return info;
  }
  auto init = Symbol<CuInit>(lib, "cuInit");
  auto driver_version = Symbol<CuDriverGetVersion>(lib, "cuDriverGetVersion");
  auto count = Symbol<CuDeviceGetCount>(lib, "cuDeviceGetCount");
  auto get = Symbol<CuDeviceGet>(lib, "cuDeviceGet");
  auto name = Symbol<CuDeviceGetName>(lib, "cuDeviceGetName");
  auto total = Symbol<CuDeviceTotalMem>(lib, "cuDeviceTotalMem_v2");
  if (!init || !driver_version || !count || !get || !name || !total) {
    info.reason = "libcuda.so.1 lacks the driver API";
    return info;
  }
  if (int rc = init(0); rc != 0) {
    info.reason = "cuInit failed with CUresult " + std::to_string(rc);
    return info;
  }
  driver_version(&info.driver_version);
  int n = 0;
  if (int rc = count(&n); rc != 0 || n == 0) {
    info.reason = rc != 0 ? "cuDeviceGetCount failed with CUresult " + std::to_string(rc)
                          : "the driver reports no GPU";
    return info;
  }
  for (int i = 0; i < n; ++i) {
    int device = 0;
    char buf[256] = {0};
    size_t bytes = 0;
    GpuDevice d;
    if (get(&device, i) == 0 && name(buf, sizeof(buf) - 1, device) == 0) d.name = buf;
    if (d.name.empty()) d.name = "GPU " + std::to_string(i);
    if (total(&bytes, device) == 0) d.total_bytes = bytes;
    info.devices.push_back(std::move(d));
  }
  return info;
}

}  // namespace edl::tensor
