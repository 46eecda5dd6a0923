// The model zoo: model specs compiled into the binary, loaded with
// "zoo:NAME" wherever a model spec path is accepted.
//   fashion_mnist_mlp   Flatten -> Dense(128, relu) -> Dense(10) logits
//   fashion_mnist_cnn   ElasticDL's mnist functional model (2 Conv2D, BN,
//                       max pooling, dropout, Dense(10) logits)
//   image_folder_cnn    a small CNN with random flip/rotation/zoom for
//                       image folders at [64, 64, 3] (docs/images.md)
//   imdb_bilstm         Embedding(mask_zero) -> Bidirectional LSTM -> Dense
//                       for zero-padded id sequences
//   mobilenet_v2        MobileNetV2 (width 0.5) for [32, 32, 3] images
//   cifar10_resnet50    ResNet-50 layout (bottlenecks) at width 16 for [32, 32, 3]
//   planted_deepfm      DeepFM for CSV data with numeric and categorical
//                       columns (the planted-model CSVs of data/)
#pragma once

#include <string>
#include <vector>

#include "base/status.h"

namespace edl::nn::keras {

std::vector<std::string> ZooNames();
// The spec's JSON text; NotFound listing the known names otherwise.
Result<std::string> ZooSpecJson(const std::string& name);
// One line; "" for unknown names.
std::string ZooDescription(const std::string& name);

}  // namespace edl::nn::keras
