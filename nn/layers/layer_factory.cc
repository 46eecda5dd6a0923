#include "nn/layers/layer_factory.h"

#include <functional>
#include <map>
#include <nlohmann/json.hpp>

#include "nn/layers/activation_layers.h"
#include "nn/layers/advanced_activations.h"
#include "nn/layers/affine_augmentation.h"
#include "nn/layers/attention.h"
#include "nn/layers/category_encoding.h"
#include "nn/layers/config_reader.h"
#include "nn/layers/conv2d.h"
#include "nn/layers/conv2d_transpose.h"
#include "nn/layers/conv3d.h"
#include "nn/layers/core.h"
#include "nn/layers/dense.h"
#include "nn/layers/depthwise_conv.h"
#include "nn/layers/embedding.h"
#include "nn/layers/image_preprocessing.h"
#include "nn/layers/masking.h"
#include "nn/layers/merging.h"
#include "nn/layers/noise.h"
#include "nn/layers/normalization.h"
#include "nn/layers/pooling.h"
#include "nn/layers/pooling3d.h"
#include "nn/layers/recurrent.h"
#include "nn/layers/reshaping.h"
#include "nn/layers/wrappers.h"

namespace edl::nn::layers {
namespace {

using Factory =
    std::function<Result<std::unique_ptr<Layer>>(const std::string&, const nlohmann::json&)>;

const std::map<std::string, Factory>& Factories() {
  using tensor::PoolKind;
  auto pool = [](PoolKind k, int rank) {
    return [k, rank](const std::string& n, const nlohmann::json& c) {
      return Pooling2D::FromConfig(k, rank, n, c);
    };
  };
  auto global = [](PoolKind k, int rank) {
    return [k, rank](const std::string& n, const nlohmann::json& c) {
      return GlobalPooling2D::FromConfig(k, rank, n, c);
    };
  };
  auto pool3d = [](PoolKind k) {
    return [k](const std::string& n, const nlohmann::json& c) {
      return Pooling3D::FromConfig(k, n, c);
    };
  };
  auto merge = [](ElementwiseMerge::Op op) {
    return [op](const std::string& n, const nlohmann::json& c) {
      return ElementwiseMerge::FromConfig(op, n, c);
    };
  };
  auto noise = [](NoiseLayer::Kind k) {
    return [k](const std::string& n, const nlohmann::json& c) {
      return NoiseLayer::FromConfig(k, n, c);
    };
  };
  auto rnn = [](Recurrent::Cell cell) {
    return [cell](const std::string& n, const nlohmann::json& c) {
      return Recurrent::FromConfig(cell, n, c);
    };
  };
  static const auto* factories = new std::map<std::string, Factory>{
      {"InputLayer", InputLayer::FromConfig},
      {"Dense", Dense::FromConfig},
      {"Conv2D", Conv2D::FromConfig},
      {"Conv1D", Conv2D::FromConfig1D},
      {"Conv2DTranspose", Conv2DTranspose::FromConfig},
      {"DepthwiseConv2D", DepthwiseConv2D::FromConfig},
      {"SeparableConv2D", DepthwiseConv2D::FromConfigSeparable},
      {"MaxPooling2D", pool(PoolKind::kMax, 2)},
      {"AveragePooling2D", pool(PoolKind::kAvg, 2)},
      {"GlobalMaxPooling2D", global(PoolKind::kMax, 2)},
      {"GlobalAveragePooling2D", global(PoolKind::kAvg, 2)},
      {"Conv3D", Conv3D::FromConfig},
      {"Conv3DTranspose", Conv3DTranspose::FromConfig},
      {"MaxPooling3D", pool3d(PoolKind::kMax)},
      {"AveragePooling3D", pool3d(PoolKind::kAvg)},
      {"GlobalMaxPooling3D", global(PoolKind::kMax, 3)},
      {"GlobalAveragePooling3D", global(PoolKind::kAvg, 3)},
      {"MaxPooling1D", pool(PoolKind::kMax, 1)},
      {"AveragePooling1D", pool(PoolKind::kAvg, 1)},
      {"GlobalMaxPooling1D", global(PoolKind::kMax, 1)},
      {"GlobalAveragePooling1D", global(PoolKind::kAvg, 1)},
      {"Flatten", Flatten::FromConfig},
      {"Reshape", Reshape::FromConfig},
      {"Dropout", Dropout::FromConfig},
      {"BatchNormalization", BatchNormalization::FromConfig},
      {"LayerNormalization", LayerNormalization::FromConfig},
      {"Activation", ActivationLayer::FromConfig},
      {"ReLU", ReLU::FromConfig},
      {"Softmax", Softmax::FromConfig},
      {"Embedding", Embedding::FromConfig},
      {"Concatenate", Concatenate::FromConfig},
      {"Add", merge(ElementwiseMerge::Op::kAdd)},
      {"Subtract", merge(ElementwiseMerge::Op::kSubtract)},
      {"Multiply", merge(ElementwiseMerge::Op::kMultiply)},
      {"Average", merge(ElementwiseMerge::Op::kAverage)},
      {"Maximum", merge(ElementwiseMerge::Op::kMaximum)},
      {"Minimum", merge(ElementwiseMerge::Op::kMinimum)},
      {"Dot", Dot::FromConfig},
      {"SimpleRNN", rnn(Recurrent::Cell::kSimpleRNN)},
      {"LSTM", rnn(Recurrent::Cell::kLSTM)},
      {"GRU", rnn(Recurrent::Cell::kGRU)},
      {"Bidirectional", Bidirectional::FromConfig},
      {"Masking", Masking::FromConfig},
      {"Permute", Permute::FromConfig},
      {"CategoryEncoding", CategoryEncoding::FromConfig},
      {"MultiHeadAttention", MultiHeadAttention::FromConfig},
      {"TimeDistributed", TimeDistributed::FromConfig},
      {"RNN", RnnOfCells::FromConfig},
      {"Resizing", Resizing::FromConfig},
      {"CenterCrop", CenterCrop::FromConfig},
      {"RandomFlip", RandomFlip::FromConfig},
      {"RandomRotation", RandomRotation::FromConfig},
      {"RandomZoom", RandomZoom::FromConfig},
      {"RandomTranslation", RandomTranslation::FromConfig},
      {"RandomCrop", RandomCrop::FromConfig},
      {"RandomContrast", RandomContrast::FromConfig},
      {"RandomBrightness", RandomBrightness::FromConfig},
      {"LeakyReLU", LeakyReLU::FromConfig},
      {"ELU", Elu::FromConfig},
      {"PReLU", PReLU::FromConfig},
      {"ThresholdedReLU", ThresholdedReLU::FromConfig},
      {"ZeroPadding2D", [](const std::string& n,
                           const nlohmann::json& c) { return Edges2D::FromConfig(false, n, c); }},
      {"Cropping2D", [](const std::string& n,
                        const nlohmann::json& c) { return Edges2D::FromConfig(true, n, c); }},
      {"UpSampling2D", UpSampling2D::FromConfig},
      {"RepeatVector", RepeatVector::FromConfig},
      {"Rescaling", Rescaling::FromConfig},
      {"SpatialDropout1D", noise(NoiseLayer::Kind::kSpatialDropout1D)},
      {"SpatialDropout2D", noise(NoiseLayer::Kind::kSpatialDropout2D)},
      {"GaussianNoise", noise(NoiseLayer::Kind::kGaussianNoise)},
      {"GaussianDropout", noise(NoiseLayer::Kind::kGaussianDropout)},
      {"AlphaDropout", noise(NoiseLayer::Kind::kAlphaDropout)},
  };
  return *factories;
}

// Keras aliases seen in saved models.
std::string Canonical(const std::string& class_name) {
  if (class_name == "Convolution2D") return "Conv2D";
  if (class_name == "Convolution1D") return "Conv1D";
  if (class_name == "Convolution2DTranspose") return "Conv2DTranspose";
  if (class_name == "MaxPool2D") return "MaxPooling2D";
  if (class_name == "AvgPool2D") return "AveragePooling2D";
  if (class_name == "GlobalAvgPool2D") return "GlobalAveragePooling2D";
  if (class_name == "GlobalMaxPool2D") return "GlobalMaxPooling2D";
  if (class_name == "Convolution3D") return "Conv3D";
  if (class_name == "Convolution3DTranspose") return "Conv3DTranspose";
  if (class_name == "MaxPool3D") return "MaxPooling3D";
  if (class_name == "AvgPool3D") return "AveragePooling3D";
  if (class_name == "GlobalAvgPool3D") return "GlobalAveragePooling3D";
  if (class_name == "GlobalMaxPool3D") return "GlobalMaxPooling3D";
  if (class_name == "MaxPool1D") return "MaxPooling1D";
  if (class_name == "AvgPool1D") return "AveragePooling1D";
  if (class_name == "GlobalAvgPool1D") return "GlobalAveragePooling1D";
  if (class_name == "GlobalMaxPool1D") return "GlobalMaxPooling1D";
  return class_name;
}

}  // namespace

Result<std::unique_ptr<Layer>> CreateLayer(const std::string& class_name, const std::string& name,
                                           const nlohmann::json& config) {
  auto it = Factories().find(Canonical(class_name));
  if (it == Factories().end()) {
    return InvalidArgument("unsupported layer class \"" + class_name + "\"; supported: " + [] {
      std::string s;
      for (const auto& c : SupportedLayerClasses()) {
        s += (s.empty() ? "" : ", ") + c;
      }
      return s;
    }());
  }
  if (!config.is_object()) {
    return InvalidArgument("config must be an object, got " + Describe(config));
  }
  EDL_ASSIGN_OR_RETURN(std::unique_ptr<Layer> layer, it->second(name, config));
  ConfigReader r(config);
  if (!r.Bool("trainable", true)) layer->set_trainable(false);
  EDL_RETURN_IF_ERROR(r.status());
  return layer;
}

std::vector<std::string> SupportedLayerClasses() {
  std::vector<std::string> out;
  for (const auto& [name, f] : Factories()) out.push_back(name);
  return out;
}

}  // namespace edl::nn::layers
