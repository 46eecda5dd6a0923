#include "nn/layers/kernel_bias_config.h"

namespace edl::nn::layers {

KernelBiasConfig ReadKernelBiasConfig(ConfigReader& reader) {
  KernelBiasConfig config;
  config.kernel_init = ReadInitializer(reader, "kernel_initializer", "GlorotUniform");
  config.bias_init = ReadInitializer(reader, "bias_initializer", "Zeros");
  config.kernel_reg = ReadRegularizer(reader, "kernel_regularizer");
  config.bias_reg = ReadRegularizer(reader, "bias_regularizer");
  reader.ExpectNull("activity_regularizer");
  reader.ExpectNull("kernel_constraint");
  reader.ExpectNull("bias_constraint");
  return config;
}

void WriteKernelBiasConfig(const KernelBiasConfig& config, nlohmann::json& c) {
  c["kernel_initializer"] = config.kernel_init.json;
  c["bias_initializer"] = config.bias_init.json;
  c["kernel_regularizer"] = config.kernel_reg.json;
  c["bias_regularizer"] = config.bias_reg.json;
  c["activity_regularizer"] = nullptr;
  c["kernel_constraint"] = nullptr;
  c["bias_constraint"] = nullptr;
}

}  // namespace edl::nn::layers
