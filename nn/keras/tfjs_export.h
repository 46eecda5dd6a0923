// Exporting a model as a TF.js layers-model: dir/model.json (format
// "layers-model", the Keras 2 model JSON as modelTopology, a weightsManifest
// with one group "weights.bin", and the spec's loss/optimizer/metrics/input
// under userDefinedMetadata.edl) plus dir/weights.bin (little-endian
// float32, weights in Keras order). tf.loadLayersModel reads it; so does
// LoadModelSpec. The topology is the model at inference: random
// augmentation layers (identities then) are left out and RandomCrop is
// written as the Resizing it computes (nn/layers/augmentation.h). Written into a temporary
// directory beside `dir` and renamed into place, so a failure leaves no half-written export.
#pragma once

#include <string>

#include "base/status.h"
#include "nn/keras/model.h"
#include "nn/keras/model_spec.h"

namespace edl::nn::keras {

// Replaces dir if it exists. IoError naming the path on failure.
Status ExportTfjs(const Model& model, const ModelSpec& spec, const std::string& dir);

}  // namespace edl::nn::keras
