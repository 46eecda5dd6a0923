// KernelBiasConfig: the weight fields of a Keras layer with a kernel and a
// bias (Dense, Conv2D, Conv2DTranspose, Conv3D, MultiHeadAttention):
// kernel_initializer (default GlorotUniform), bias_initializer (default
// Zeros), kernel_regularizer and bias_regularizer; activity_regularizer,
// kernel_constraint and bias_constraint are not supported and must be null.
// Internal to nn/layers.
#pragma once

#include <nlohmann/json.hpp>

#include "nn/layers/config_reader.h"
#include "nn/layers/weight_config.h"

namespace edl::nn::layers {

struct KernelBiasConfig {
  WeightInit kernel_init, bias_init;
  WeightPenalty kernel_reg, bias_reg;
};

// Reads the fields; records an error in `reader` for a malformed or
// unsupported one.
KernelBiasConfig ReadKernelBiasConfig(ConfigReader& reader);
// Writes all seven fields into a layer's Keras config `c`.
void WriteKernelBiasConfig(const KernelBiasConfig& config, nlohmann::json& c);

}  // namespace edl::nn::layers
