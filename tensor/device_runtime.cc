#include "tensor/device_runtime.h"

#include <dlfcn.h>
#include <sys/stat.h>
#include <unistd.h>

#include <atomic>
#include <cstdlib>
#include <mutex>

namespace edl::tensor {
namespace {

// The registered CUDA runtime; set once, never unset (the plugin stays
// loaded until exit, since tensors may still point into its memory).
std::atomic<DeviceRuntime*> cuda_runtime{nullptr};
// A test's ScopedDeviceRuntime for kCUDA, if any (wins over cuda_runtime).
std::atomic<DeviceRuntime*> scoped_cuda_runtime{nullptr};
// Serializes LoadCudaRuntime calls.
std::mutex load_mu;

std::string DlError() {
  const char* e = dlerror();
  return e ? e : "unknown dlopen error";
}

bool Contains(const std::string& s, const char* part) { return s.find(part) != std::string::npos; }

}  // namespace

std::string DefaultCudaPluginPath() {
  if (const char* env = std::getenv("EDL_CUDA_PLUGIN"); env && *env) return env;
  char exe[4096];
  ssize_t n = readlink("/proc/self/exe", exe, sizeof(exe) - 1);
  if (n <= 0) return kCudaPluginFileName;
  std::string path(exe, static_cast<size_t>(n));
  size_t slash = path.rfind('/');
  return (slash == std::string::npos ? std::string() : path.substr(0, slash + 1)) +
         kCudaPluginFileName;
}

Result<DeviceRuntime*> OpenCudaPlugin(const std::string& path) {
  struct stat st;
  if (path.empty() || stat(path.c_str(), &st) != 0) {
    return NotFound("CUDA plugin " + (path.empty() ? std::string("\"\"") : path) +
                    " not found: ship " + kCudaPluginFileName +
                    " beside the edl binary or set EDL_CUDA_PLUGIN");
  }
  void* plugin = dlopen(path.c_str(), RTLD_NOW | RTLD_LOCAL);
  if (plugin == nullptr) {
    std::string err = DlError();
    if (Contains(err, "libcudnn")) {
      return Unavailable("cuDNN 9 is missing (needed by " + path + "): " + err);
    }
    if (Contains(err, "libcublas")) {
      return Unavailable("cuBLAS is missing (needed by " + path + "): " + err);
    }
    if (Contains(err, "undefined symbol")) {
      return FailedPrecondition("CUDA plugin " + path + " does not match this edl binary: " + err);
    }
    return FailedPrecondition("cannot load CUDA plugin " + path + ": " + err);
  }
  auto entry = reinterpret_cast<EdlCudaPluginEntry>(dlsym(plugin, kCudaPluginEntrySymbol));
  if (entry == nullptr) {
    std::string err = DlError();
    dlclose(plugin);
    return FailedPrecondition(path + " is not an edl CUDA plugin (no " + kCudaPluginEntrySymbol +
                              "): " + err);
  }
  // The plugin links the CUDA runtime statically, which needs the driver.
  if (dlopen("libcuda.so.1", RTLD_NOW | RTLD_LOCAL) == nullptr) {
    return Unavailable("NVIDIA driver library libcuda.so.1 not found (" + DlError() +
                       "): this machine has no NVIDIA driver");
  }
  DeviceRuntime* runtime = nullptr;
  char error[512] = {0};
  if (entry(kDeviceRuntimeAbiVersion, &runtime, error, sizeof(error)) != 0 || runtime == nullptr) {
    return Unavailable(path + ": " + (error[0] ? error : "plugin failed"));
  }
  return runtime;
}

Status LoadCudaRuntime() {
  std::lock_guard<std::mutex> lock(load_mu);
  if (cuda_runtime.load() != nullptr) return Status();
  Result<DeviceRuntime*> runtime = OpenCudaPlugin(DefaultCudaPluginPath());
  if (!runtime.ok()) return runtime.status();
  cuda_runtime.store(*runtime);
  return Status();
}

DeviceRuntime* RuntimeFor(Device device) {
  if (device != Device::kCUDA) return nullptr;
  if (DeviceRuntime* scoped = scoped_cuda_runtime.load()) return scoped;
  return cuda_runtime.load();
}

ScopedDeviceRuntime::ScopedDeviceRuntime(Device device, DeviceRuntime* runtime) {
  EDL_CHECK(device == Device::kCUDA) << "no runtime for " << DeviceName(device);
  EDL_CHECK(runtime != nullptr);
  previous_ = scoped_cuda_runtime.exchange(runtime);
}

ScopedDeviceRuntime::~ScopedDeviceRuntime() { scoped_cuda_runtime.store(previous_); }

}  // namespace edl::tensor
