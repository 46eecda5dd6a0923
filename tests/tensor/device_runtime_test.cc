// The CPU-side pieces of the CUDA plugin machinery, which run on any
// machine: loading a plugin that is missing or is not an edl plugin, and
// asking the driver for GPUs where there may be none.
#include "tensor/device_runtime.h"

#include <dlfcn.h>
#include <gtest/gtest.h>

#include <cmath>
#include <cstdlib>
#include <optional>
#include <string>

#include "tensor/gpu_info.h"
#include "tests/testing/paths.h"

namespace edl::tensor {
namespace {

// Sets an environment variable for one scope, restoring it afterwards.
class ScopedEnv {
 public:
  ScopedEnv(const char* name, const std::string& value) : name_(name) {
    if (const char* old = std::getenv(name)) old_ = old;
    setenv(name, value.c_str(), 1);
  }
  ~ScopedEnv() {
    if (old_) {
      setenv(name_, old_->c_str(), 1);
    } else {
      unsetenv(name_);
    }
  }

 private:
  const char* name_;
  std::optional<std::string> old_;
};

// The path of the shared library that defines `symbol` (libm here).
std::string LibraryOf(const void* symbol) {
  Dl_info info;
  if (dladdr(symbol, &info) == 0 || info.dli_fname == nullptr) return "";
  return info.dli_fname;
}

TEST(OpenCudaPlugin, NamesAMissingPluginFile) {
  Result<DeviceRuntime*> r = OpenCudaPlugin("/nonexistent/dir/libedl_cuda.so");
  ASSERT_FALSE(r.ok());
  EXPECT_EQ(r.status().code(), StatusCode::kNotFound);
  EXPECT_NE(r.status().message().find("/nonexistent/dir/libedl_cuda.so"), std::string::npos)
      << r.status().message();
  EXPECT_NE(r.status().message().find("not found"), std::string::npos) << r.status().message();
}

TEST(OpenCudaPlugin, RefusesASharedLibraryThatIsNotAnEdlPlugin) {
  const std::string libm =
      LibraryOf(reinterpret_cast<const void*>(static_cast<double (*)(double)>(&std::cos)));
  ASSERT_FALSE(libm.empty());
  Result<DeviceRuntime*> r = OpenCudaPlugin(libm);
  ASSERT_FALSE(r.ok());
  EXPECT_EQ(r.status().code(), StatusCode::kFailedPrecondition);
  EXPECT_NE(r.status().message().find("not an edl CUDA plugin"), std::string::npos)
      << r.status().message();
  EXPECT_NE(r.status().message().find(kCudaPluginEntrySymbol), std::string::npos)
      << r.status().message();
}

TEST(OpenCudaPlugin, RefusesAFileThatIsNotASharedLibrary) {
  Result<DeviceRuntime*> r = OpenCudaPlugin(edl::testing::SourceDir() + "/tensor/device_runtime.h");
  ASSERT_FALSE(r.ok());
  EXPECT_EQ(r.status().code(), StatusCode::kFailedPrecondition);
  EXPECT_NE(r.status().message().find("cannot load CUDA plugin"), std::string::npos)
      << r.status().message();
}

TEST(LoadCudaRuntime, ReportsTheMissingPluginNamedByTheEnvironment) {
  if (RuntimeFor(Device::kCUDA) != nullptr) {
    GTEST_SKIP() << "a CUDA runtime is already loaded in this process";
  }
  ScopedEnv env("EDL_CUDA_PLUGIN", "/nonexistent/libedl_cuda.so");
  EXPECT_EQ(DefaultCudaPluginPath(), "/nonexistent/libedl_cuda.so");
  Status s = LoadCudaRuntime();
  ASSERT_FALSE(s.ok());
  EXPECT_NE(s.message().find("/nonexistent/libedl_cuda.so"), std::string::npos) << s.message();
  EXPECT_EQ(RuntimeFor(Device::kCUDA), nullptr);
}

TEST(DefaultCudaPluginPath, LooksBesideTheExecutableWithoutTheVariable) {
  ScopedEnv env("EDL_CUDA_PLUGIN", "");
  const std::string path = DefaultCudaPluginPath();
  ASSERT_GT(path.size(), std::string("/libedl_cuda.so").size());
  EXPECT_EQ(path.substr(path.size() - 15), "/libedl_cuda.so") << path;
  EXPECT_EQ(path.front(), '/') << path;
}

TEST(OpenCudaPlugin, TheBuiltPluginLoadsOrSaysWhyNot) {
  const std::string plugin = EDL_CUDA_PLUGIN_PATH;
  if (plugin.empty()) GTEST_SKIP() << "this build has no CUDA plugin (nvcc not found)";
  Result<DeviceRuntime*> r = OpenCudaPlugin(plugin);
  if (r.ok()) {
    EXPECT_FALSE((*r)->Describe().empty());
    return;
  }
  // Loading got past dlopen and dlsym: the plugin itself is sound.
  EXPECT_EQ(r.status().code(), StatusCode::kUnavailable) << r.status().message();
  EXPECT_TRUE(r.status().message().find("libcuda.so.1") != std::string::npos ||
              r.status().message().find("GPU") != std::string::npos)
      << r.status().message();
}

TEST(DescribeGpus, ReportsNoneWithAReasonOrRealDevices) {
  GpuInfo info = DescribeGpus();
  const std::string summary = info.Summary();
  if (info.devices.empty()) {
    EXPECT_FALSE(info.reason.empty());
    EXPECT_EQ(summary, "none (" + info.reason + ")");
  } else {
    EXPECT_GT(info.driver_version, 0);
    EXPECT_NE(summary.find(info.devices[0].name), std::string::npos) << summary;
    EXPECT_NE(summary.find("driver"), std::string::npos) << summary;
  }
}

TEST(GpuInfo, SummarizesDevicesAndTheDriverVersion) {
  GpuInfo info;
  info.driver_version = 13000;
  info.devices.push_back({"NVIDIA H100 80GB HBM3", 85ull << 30});
  EXPECT_EQ(info.Summary(), "NVIDIA H100 80GB HBM3 (1 device, driver 13.0)");
  info.devices.push_back({"NVIDIA H100 80GB HBM3", 85ull << 30});
  info.driver_version = 12040;
  EXPECT_EQ(info.Summary(), "NVIDIA H100 80GB HBM3 (2 devices, driver 12.4)");
  GpuInfo none;
  none.reason = "libcuda.so.1 not found";
  EXPECT_EQ(none.Summary(), "none (libcuda.so.1 not found)");
}

}  // namespace
}  // namespace edl::tensor
