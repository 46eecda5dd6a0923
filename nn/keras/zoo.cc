#include "nn/keras/zoo.h"

#include <map>

#include "nn/keras/zoo_mobilenet_v2.h"
#include "nn/keras/zoo_resnet50.h"

namespace edl::nn::keras {
namespace {

struct ZooEntry {
  const char* description;
  const char* json;
};

// The Fashion-MNIST models decay Adam's learning rate (cosine, to a tenth)
// over the epochs they are meant to train for: with a constant 0.001 the MLP
// reached 0.845-0.853 test accuracy after 2 epochs and the CNN 0.892-0.894
// after 3 (seeds 0-2); decayed, 0.856-0.858 and 0.919. See
// docs/performance.md. After decay_steps the rate stays at 1e-4.
constexpr char kFashionMnistMlp[] = R"json({
  "model": {"class_name": "Sequential", "config": {"name": "fashion_mnist_mlp", "layers": [
    {"class_name": "InputLayer", "config": {"name": "image", "batch_input_shape": [null, 28, 28], "dtype": "float32"}},
    {"class_name": "Flatten", "config": {"name": "flatten"}},
    {"class_name": "Dense", "config": {"name": "hidden", "units": 128, "activation": "relu"}},
    {"class_name": "Dense", "config": {"name": "logits", "units": 10}}]}},
  "loss": {"class_name": "SparseCategoricalCrossentropy", "config": {"from_logits": true}},
  "optimizer": {"class_name": "Adam", "config": {"learning_rate": {"class_name": "CosineDecay",
    "config": {"initial_learning_rate": 0.001, "decay_steps": 1876, "alpha": 0.1}}}},
  "metrics": ["accuracy"],
  "input": {"format": "idx", "scale": 0.00392156862745098}
})json";

constexpr char kFashionMnistCnn[] = R"json({
  "model": {"class_name": "Functional", "config": {"name": "fashion_mnist_cnn",
    "layers": [
      {"name": "image", "class_name": "InputLayer", "config": {"name": "image", "batch_input_shape": [null, 28, 28], "dtype": "float32"}, "inbound_nodes": []},
      {"name": "reshape", "class_name": "Reshape", "config": {"name": "reshape", "target_shape": [28, 28, 1]}, "inbound_nodes": [[["image", 0, 0, {}]]]},
      {"name": "conv2d", "class_name": "Conv2D", "config": {"name": "conv2d", "filters": 32, "kernel_size": [3, 3], "activation": "relu"}, "inbound_nodes": [[["reshape", 0, 0, {}]]]},
      {"name": "conv2d_1", "class_name": "Conv2D", "config": {"name": "conv2d_1", "filters": 64, "kernel_size": [3, 3], "activation": "relu"}, "inbound_nodes": [[["conv2d", 0, 0, {}]]]},
      {"name": "batch_normalization", "class_name": "BatchNormalization", "config": {"name": "batch_normalization"}, "inbound_nodes": [[["conv2d_1", 0, 0, {}]]]},
      {"name": "max_pooling2d", "class_name": "MaxPooling2D", "config": {"name": "max_pooling2d", "pool_size": [2, 2]}, "inbound_nodes": [[["batch_normalization", 0, 0, {}]]]},
      {"name": "dropout", "class_name": "Dropout", "config": {"name": "dropout", "rate": 0.25}, "inbound_nodes": [[["max_pooling2d", 0, 0, {}]]]},
      {"name": "flatten", "class_name": "Flatten", "config": {"name": "flatten"}, "inbound_nodes": [[["dropout", 0, 0, {}]]]},
      {"name": "logits", "class_name": "Dense", "config": {"name": "logits", "units": 10}, "inbound_nodes": [[["flatten", 0, 0, {}]]]}],
    "input_layers": [["image", 0, 0]],
    "output_layers": [["logits", 0, 0]]}},
  "loss": {"class_name": "SparseCategoricalCrossentropy", "config": {"from_logits": true}},
  "optimizer": {"class_name": "Adam", "config": {"learning_rate": {"class_name": "CosineDecay",
    "config": {"initial_learning_rate": 0.001, "decay_steps": 2814, "alpha": 0.1}}}},
  "metrics": ["accuracy"],
  "input": {"format": "idx", "scale": 0.00392156862745098}
})json";

// A ResNet-14 for CIFAR-10-shaped data ([32, 32, 3] images, 10 classes; He
// et al. 2016's CIFAR layout at depth 14): a 3x3 stem of 16 filters, three
// stages of two basic blocks (16, 32, 64 filters; stride 2 entering stages 2
// and 3, with 1x1 projection shortcuts), global average pooling, Dense(10)
// logits; SGD with momentum. The larger model of the GPU benchmark
// (scripts/bench/gpu_bench.sh), trained there on synthetic data.
constexpr char kCifar10Resnet[] =
    R"json({"model": {"class_name": "Functional", "config": {"name": "cifar10_resnet", "layers": [{"name": "image", "class_name": "InputLayer", "config": {"batch_input_shape": [null, 32, 32, 3], "dtype": "float32", "name": "image"}, "inbound_nodes": []}, {"name": "stem_conv", "class_name": "Conv2D", "config": {"filters": 16, "kernel_size": [3, 3], "strides": [1, 1], "padding": "same", "use_bias": false, "name": "stem_conv"}, "inbound_nodes": [[["image", 0, 0, {}]]]}, {"name": "stem_bn", "class_name": "BatchNormalization", "config": {"name": "stem_bn"}, "inbound_nodes": [[["stem_conv", 0, 0, {}]]]}, {"name": "stem_relu", "class_name": "ReLU", "config": {"name": "stem_relu"}, "inbound_nodes": [[["stem_bn", 0, 0, {}]]]}, {"name": "s1b1a_conv", "class_name": "Conv2D", "config": {"filters": 16, "kernel_size": [3, 3], "strides": [1, 1], "padding": "same", "use_bias": false, "name": "s1b1a_conv"}, "inbound_nodes": [[["stem_relu", 0, 0, {}]]]}, {"name": "s1b1a_bn", "class_name": "BatchNormalization", "config": {"name": "s1b1a_bn"}, "inbound_nodes": [[["s1b1a_conv", 0, 0, {}]]]}, {"name": "s1b1a_relu", "class_name": "ReLU", "config": {"name": "s1b1a_relu"}, "inbound_nodes": [[["s1b1a_bn", 0, 0, {}]]]}, {"name": "s1b1b_conv", "class_name": "Conv2D", "config": {"filters": 16, "kernel_size": [3, 3], "strides": [1, 1], "padding": "same", "use_bias": false, "name": "s1b1b_conv"}, "inbound_nodes": [[["s1b1a_relu", 0, 0, {}]]]}, {"name": "s1b1b_bn", "class_name": "BatchNormalization", "config": {"name": "s1b1b_bn"}, "inbound_nodes": [[["s1b1b_conv", 0, 0, {}]]]}, {"name": "s1b1_add", "class_name": "Add", "config": {"name": "s1b1_add"}, "inbound_nodes": [[["s1b1b_bn", 0, 0, {}], ["stem_relu", 0, 0, {}]]]}, {"name": "s1b1_out", "class_name": "ReLU", "config": {"name": "s1b1_out"}, "inbound_nodes": [[["s1b1_add", 0, 0, {}]]]}, {"name": "s1b2a_conv", "class_name": "Conv2D", "config": {"filters": 16, "kernel_size": [3, 3], "strides": [1, 1], "padding": "same", "use_bias": false, "name": "s1b2a_conv"}, "inbound_nodes": [[["s1b1_out", 0, 0, {}]]]}, {"name": "s1b2a_bn", "class_name": "BatchNormalization", "config": {"name": "s1b2a_bn"}, "inbound_nodes": [[["s1b2a_conv", 0, 0, {}]]]}, {"name": "s1b2a_relu", "class_name": "ReLU", "config": {"name": "s1b2a_relu"}, "inbound_nodes": [[["s1b2a_bn", 0, 0, {}]]]}, {"name": "s1b2b_conv", "class_name": "Conv2D", "config": {"filters": 16, "kernel_size": [3, 3], "strides": [1, 1], "padding": "same", "use_bias": false, "name": "s1b2b_conv"}, "inbound_nodes": [[["s1b2a_relu", 0, 0, {}]]]}, {"name": "s1b2b_bn", "class_name": "BatchNormalization", "config": {"name": "s1b2b_bn"}, "inbound_nodes": [[["s1b2b_conv", 0, 0, {}]]]}, {"name": "s1b2_add", "class_name": "Add", "config": {"name": "s1b2_add"}, "inbound_nodes": [[["s1b2b_bn", 0, 0, {}], ["s1b1_out", 0, 0, {}]]]}, {"name": "s1b2_out", "class_name": "ReLU", "config": {"name": "s1b2_out"}, "inbound_nodes": [[["s1b2_add", 0, 0, {}]]]}, {"name": "s2b1a_conv", "class_name": "Conv2D", "config": {"filters": 32, "kernel_size": [3, 3], "strides": [2, 2], "padding": "same", "use_bias": false, "name": "s2b1a_conv"}, "inbound_nodes": [[["s1b2_out", 0, 0, {}]]]}, {"name": "s2b1a_bn", "class_name": "BatchNormalization", "config": {"name": "s2b1a_bn"}, "inbound_nodes": [[["s2b1a_conv", 0, 0, {}]]]}, {"name": "s2b1a_relu", "class_name": "ReLU", "config": {"name": "s2b1a_relu"}, "inbound_nodes": [[["s2b1a_bn", 0, 0, {}]]]}, {"name": "s2b1b_conv", "class_name": "Conv2D", "config": {"filters": 32, "kernel_size": [3, 3], "strides": [1, 1], "padding": "same", "use_bias": false, "name": "s2b1b_conv"}, "inbound_nodes": [[["s2b1a_relu", 0, 0, {}]]]}, {"name": "s2b1b_bn", "class_name": "BatchNormalization", "config": {"name": "s2b1b_bn"}, "inbound_nodes": [[["s2b1b_conv", 0, 0, {}]]]}, {"name": "s2b1_proj", "class_name": "Conv2D", "config": {"filters": 32, "kernel_size": [1, 1], "strides": [2, 2], "padding": "same", "use_bias": false, "name": "s2b1_proj"}, "inbound_nodes": [[["s1b2_out", 0, 0, {}]]]}, {"name": "s2b1_proj_bn", "class_name": "BatchNormalization", "config": {"name": "s2b1_proj_bn"}, "inbound_nodes": [[["s2b1_proj", 0, 0, {}]]]}, {"name": "s2b1_add", "class_name": "Add", "config": {"name": "s2b1_add"}, "inbound_nodes": [[["s2b1b_bn", 0, 0, {}], ["s2b1_proj_bn", 0, 0, {}]]]}, {"name": "s2b1_out", "class_name": "ReLU", "config": {"name": "s2b1_out"}, "inbound_nodes": [[["s2b1_add", 0, 0, {}]]]}, {"name": "s2b2a_conv", "class_name": "Conv2D", "config": {"filters": 32, "kernel_size": [3, 3], "strides": [1, 1], "padding": "same", "use_bias": false, "name": "s2b2a_conv"}, "inbound_nodes": [[["s2b1_out", 0, 0, {}]]]}, {"name": "s2b2a_bn", "class_name": "BatchNormalization", "config": {"name": "s2b2a_bn"}, "inbound_nodes": [[["s2b2a_conv", 0, 0, {}]]]}, {"name": "s2b2a_relu", "class_name": "ReLU", "config": {"name": "s2b2a_relu"}, "inbound_nodes": [[["s2b2a_bn", 0, 0, {}]]]}, {"name": "s2b2b_conv", "class_name": "Conv2D", "config": {"filters": 32, "kernel_size": [3, 3], "strides": [1, 1], "padding": "same", "use_bias": false, "name": "s2b2b_conv"}, "inbound_nodes": [[["s2b2a_relu", 0, 0, {}]]]}, {"name": "s2b2b_bn", "class_name": "BatchNormalization", "config": {"name": "s2b2b_bn"}, "inbound_nodes": [[["s2b2b_conv", 0, 0, {}]]]}, {"name": "s2b2_add", "class_name": "Add", "config": {"name": "s2b2_add"}, "inbound_nodes": [[["s2b2b_bn", 0, 0, {}], ["s2b1_out", 0, 0, {}]]]}, {"name": "s2b2_out", "class_name": "ReLU", "config": {"name": "s2b2_out"}, "inbound_nodes": [[["s2b2_add", 0, 0, {}]]]}, {"name": "s3b1a_conv", "class_name": "Conv2D", "config": {"filters": 64, "kernel_size": [3, 3], "strides": [2, 2], "padding": "same", "use_bias": false, "name": "s3b1a_conv"}, "inbound_nodes": [[["s2b2_out", 0, 0, {}]]]}, {"name": "s3b1a_bn", "class_name": "BatchNormalization", "config": {"name": "s3b1a_bn"}, "inbound_nodes": [[["s3b1a_conv", 0, 0, {}]]]}, {"name": "s3b1a_relu", "class_name": "ReLU", "config": {"name": "s3b1a_relu"}, "inbound_nodes": [[["s3b1a_bn", 0, 0, {}]]]}, {"name": "s3b1b_conv", "class_name": "Conv2D", "config": {"filters": 64, "kernel_size": [3, 3], "strides": [1, 1], "padding": "same", "use_bias": false, "name": "s3b1b_conv"}, "inbound_nodes": [[["s3b1a_relu", 0, 0, {}]]]}, {"name": "s3b1b_bn", "class_name": "BatchNormalization", "config": {"name": "s3b1b_bn"}, "inbound_nodes": [[["s3b1b_conv", 0, 0, {}]]]}, {"name": "s3b1_proj", "class_name": "Conv2D", "config": {"filters": 64, "kernel_size": [1, 1], "strides": [2, 2], "padding": "same", "use_bias": false, "name": "s3b1_proj"}, "inbound_nodes": [[["s2b2_out", 0, 0, {}]]]}, {"name": "s3b1_proj_bn", "class_name": "BatchNormalization", "config": {"name": "s3b1_proj_bn"}, "inbound_nodes": [[["s3b1_proj", 0, 0, {}]]]}, {"name": "s3b1_add", "class_name": "Add", "config": {"name": "s3b1_add"}, "inbound_nodes": [[["s3b1b_bn", 0, 0, {}], ["s3b1_proj_bn", 0, 0, {}]]]}, {"name": "s3b1_out", "class_name": "ReLU", "config": {"name": "s3b1_out"}, "inbound_nodes": [[["s3b1_add", 0, 0, {}]]]}, {"name": "s3b2a_conv", "class_name": "Conv2D", "config": {"filters": 64, "kernel_size": [3, 3], "strides": [1, 1], "padding": "same", "use_bias": false, "name": "s3b2a_conv"}, "inbound_nodes": [[["s3b1_out", 0, 0, {}]]]}, {"name": "s3b2a_bn", "class_name": "BatchNormalization", "config": {"name": "s3b2a_bn"}, "inbound_nodes": [[["s3b2a_conv", 0, 0, {}]]]}, {"name": "s3b2a_relu", "class_name": "ReLU", "config": {"name": "s3b2a_relu"}, "inbound_nodes": [[["s3b2a_bn", 0, 0, {}]]]}, {"name": "s3b2b_conv", "class_name": "Conv2D", "config": {"filters": 64, "kernel_size": [3, 3], "strides": [1, 1], "padding": "same", "use_bias": false, "name": "s3b2b_conv"}, "inbound_nodes": [[["s3b2a_relu", 0, 0, {}]]]}, {"name": "s3b2b_bn", "class_name": "BatchNormalization", "config": {"name": "s3b2b_bn"}, "inbound_nodes": [[["s3b2b_conv", 0, 0, {}]]]}, {"name": "s3b2_add", "class_name": "Add", "config": {"name": "s3b2_add"}, "inbound_nodes": [[["s3b2b_bn", 0, 0, {}], ["s3b1_out", 0, 0, {}]]]}, {"name": "s3b2_out", "class_name": "ReLU", "config": {"name": "s3b2_out"}, "inbound_nodes": [[["s3b2_add", 0, 0, {}]]]}, {"name": "pool", "class_name": "GlobalAveragePooling2D", "config": {"name": "pool"}, "inbound_nodes": [[["s3b2_out", 0, 0, {}]]]}, {"name": "logits", "class_name": "Dense", "config": {"units": 10, "name": "logits"}, "inbound_nodes": [[["pool", 0, 0, {}]]]}], "input_layers": [["image", 0, 0]], "output_layers": [["logits", 0, 0]]}}, "loss": {"class_name": "SparseCategoricalCrossentropy", "config": {"from_logits": true}}, "optimizer": {"class_name": "SGD", "config": {"learning_rate": 0.05, "momentum": 0.9}}, "metrics": ["accuracy"], "input": {"format": "idx", "scale": 0.00392156862745098}})json";

// DeepFM (Guo et al. 2017) over the planted CSVs' columns x0..x3 (numeric)
// and c0..c2 (categorical, hashed into one shared table of 32 + 256 + 2048
// ids). FM second order: with s = sum of field embeddings and q = sum of
// their squares, the pairwise term is 0.5 * sum_k (s_k^2 - q_k); the fields
// are averaged by GlobalAveragePooling2D over a [fields, 1, dim] view and
// the final Dense(1) learns the constants. Squares multiply the outputs of
// two calls of the shared "fields" / "field_mean" layers, because TF.js
// mishandles a node that takes the same tensor twice.
constexpr char kPlantedDeepFm[] = R"json({
  "model": {"class_name": "Functional", "config": {"name": "planted_deepfm",
    "layers": [
      {"name": "numeric", "class_name": "InputLayer", "config": {"name": "numeric", "batch_input_shape": [null, 4], "dtype": "float32"}, "inbound_nodes": []},
      {"name": "categorical", "class_name": "InputLayer", "config": {"name": "categorical", "batch_input_shape": [null, 3], "dtype": "int32"}, "inbound_nodes": []},
      {"name": "fm_embedding", "class_name": "Embedding", "config": {"name": "fm_embedding", "input_dim": 2336, "output_dim": 8}, "inbound_nodes": [[["categorical", 0, 0, {}]]]},
      {"name": "linear_embedding", "class_name": "Embedding", "config": {"name": "linear_embedding", "input_dim": 2336, "output_dim": 1}, "inbound_nodes": [[["categorical", 0, 0, {}]]]},
      {"name": "linear_flat", "class_name": "Flatten", "config": {"name": "linear_flat"}, "inbound_nodes": [[["linear_embedding", 0, 0, {}]]]},
      {"name": "linear_in", "class_name": "Concatenate", "config": {"name": "linear_in", "axis": -1}, "inbound_nodes": [[["linear_flat", 0, 0, {}], ["numeric", 0, 0, {}]]]},
      {"name": "linear", "class_name": "Dense", "config": {"name": "linear", "units": 1}, "inbound_nodes": [[["linear_in", 0, 0, {}]]]},
      {"name": "fields", "class_name": "Reshape", "config": {"name": "fields", "target_shape": [3, 1, 8]}, "inbound_nodes": [[["fm_embedding", 0, 0, {}]], [["fm_embedding", 0, 0, {}]]]},
      {"name": "field_mean", "class_name": "GlobalAveragePooling2D", "config": {"name": "field_mean"}, "inbound_nodes": [[["fields", 0, 0, {}]], [["fields", 1, 0, {}]]]},
      {"name": "square_of_sum", "class_name": "Multiply", "config": {"name": "square_of_sum"}, "inbound_nodes": [[["field_mean", 0, 0, {}], ["field_mean", 1, 0, {}]]]},
      {"name": "squares", "class_name": "Multiply", "config": {"name": "squares"}, "inbound_nodes": [[["fields", 0, 0, {}], ["fields", 1, 0, {}]]]},
      {"name": "sum_of_squares", "class_name": "GlobalAveragePooling2D", "config": {"name": "sum_of_squares"}, "inbound_nodes": [[["squares", 0, 0, {}]]]},
      {"name": "fm_terms", "class_name": "Concatenate", "config": {"name": "fm_terms", "axis": -1}, "inbound_nodes": [[["square_of_sum", 0, 0, {}], ["sum_of_squares", 0, 0, {}]]]},
      {"name": "fm", "class_name": "Dense", "config": {"name": "fm", "units": 1, "use_bias": false}, "inbound_nodes": [[["fm_terms", 0, 0, {}]]]},
      {"name": "deep_flat", "class_name": "Flatten", "config": {"name": "deep_flat"}, "inbound_nodes": [[["fm_embedding", 0, 0, {}]]]},
      {"name": "deep_in", "class_name": "Concatenate", "config": {"name": "deep_in", "axis": -1}, "inbound_nodes": [[["deep_flat", 0, 0, {}], ["numeric", 0, 0, {}]]]},
      {"name": "deep_1", "class_name": "Dense", "config": {"name": "deep_1", "units": 64, "activation": "relu"}, "inbound_nodes": [[["deep_in", 0, 0, {}]]]},
      {"name": "deep_2", "class_name": "Dense", "config": {"name": "deep_2", "units": 32, "activation": "relu"}, "inbound_nodes": [[["deep_1", 0, 0, {}]]]},
      {"name": "deep", "class_name": "Dense", "config": {"name": "deep", "units": 1, "use_bias": false}, "inbound_nodes": [[["deep_2", 0, 0, {}]]]},
      {"name": "logit", "class_name": "Add", "config": {"name": "logit"}, "inbound_nodes": [[["linear", 0, 0, {}], ["fm", 0, 0, {}], ["deep", 0, 0, {}]]]}],
    "input_layers": [["numeric", 0, 0], ["categorical", 0, 0]],
    "output_layers": [["logit", 0, 0]]}},
  "loss": {"class_name": "BinaryCrossentropy", "config": {"from_logits": true}},
  "optimizer": {"class_name": "Adam", "config": {"learning_rate": 0.001}},
  "metrics": [{"class_name": "AUC", "config": {"from_logits": true}},
              "binary_accuracy"],
  "input": {"format": "csv", "label": "label", "numeric": ["x0", "x1", "x2", "x3"],
            "categorical": [{"column": "c0", "hash_buckets": 32},
                            {"column": "c1", "hash_buckets": 256},
                            {"column": "c2", "hash_buckets": 2048}],
            "categorical_layout": "concat_with_offsets"}
})json";

// A small CNN for folders of images at 64 x 64 RGB (docs/images.md): random
// flips, rotations and zooms in training (identities at inference), three
// conv/pool stages, global average pooling, dropout, 10 logits.
constexpr char kImageFolderCnn[] = R"json({
  "model": {"class_name": "Sequential", "config": {"name": "image_folder_cnn", "layers": [
    {"class_name": "InputLayer", "config": {"name": "image", "batch_input_shape": [null, 64, 64, 3], "dtype": "float32"}},
    {"class_name": "RandomFlip", "config": {"name": "flip", "mode": "horizontal"}},
    {"class_name": "RandomRotation", "config": {"name": "rotate", "factor": 0.05}},
    {"class_name": "RandomZoom", "config": {"name": "zoom", "height_factor": 0.1}},
    {"class_name": "Conv2D", "config": {"name": "conv1", "filters": 32, "kernel_size": [3, 3], "padding": "same", "activation": "relu"}},
    {"class_name": "MaxPooling2D", "config": {"name": "pool1", "pool_size": [2, 2]}},
    {"class_name": "Conv2D", "config": {"name": "conv2", "filters": 64, "kernel_size": [3, 3], "padding": "same", "activation": "relu"}},
    {"class_name": "MaxPooling2D", "config": {"name": "pool2", "pool_size": [2, 2]}},
    {"class_name": "Conv2D", "config": {"name": "conv3", "filters": 128, "kernel_size": [3, 3], "padding": "same", "activation": "relu"}},
    {"class_name": "MaxPooling2D", "config": {"name": "pool3", "pool_size": [2, 2]}},
    {"class_name": "GlobalAveragePooling2D", "config": {"name": "pool"}},
    {"class_name": "Dropout", "config": {"name": "dropout", "rate": 0.3}},
    {"class_name": "Dense", "config": {"name": "logits", "units": 10}}]}},
  "loss": {"class_name": "SparseCategoricalCrossentropy", "config": {"from_logits": true}},
  "optimizer": {"class_name": "Adam", "config": {"learning_rate": 0.001}},
  "metrics": ["accuracy"],
  "input": {"image": {"size": [64, 64], "channels": 3}}
})json";

// Wide & Deep for the planted CSVs: a linear (wide) part over one-weight
// embeddings and the numeric columns, plus an MLP (deep) over 8-wide
// embeddings and the numeric columns; their logits add.
constexpr char kWideAndDeep[] =
    R"json({"model": {"class_name": "Functional", "config": {"name": "wide_and_deep", "layers": [{"name": "numeric", "class_name": "InputLayer", "config": {"batch_input_shape": [null, 4], "dtype": "float32", "name": "numeric"}, "inbound_nodes": []}, {"name": "categorical", "class_name": "InputLayer", "config": {"batch_input_shape": [null, 3], "dtype": "int32", "name": "categorical"}, "inbound_nodes": []}, {"name": "wide_embedding", "class_name": "Embedding", "config": {"input_dim": 2336, "output_dim": 1, "name": "wide_embedding"}, "inbound_nodes": [[["categorical", 0, 0, {}]]]}, {"name": "wide_flat", "class_name": "Flatten", "config": {"name": "wide_flat"}, "inbound_nodes": [[["wide_embedding", 0, 0, {}]]]}, {"name": "wide_in", "class_name": "Concatenate", "config": {"axis": -1, "name": "wide_in"}, "inbound_nodes": [[["wide_flat", 0, 0, {}], ["numeric", 0, 0, {}]]]}, {"name": "wide", "class_name": "Dense", "config": {"units": 1, "name": "wide"}, "inbound_nodes": [[["wide_in", 0, 0, {}]]]}, {"name": "deep_embedding", "class_name": "Embedding", "config": {"input_dim": 2336, "output_dim": 8, "name": "deep_embedding"}, "inbound_nodes": [[["categorical", 0, 0, {}]]]}, {"name": "deep_flat", "class_name": "Flatten", "config": {"name": "deep_flat"}, "inbound_nodes": [[["deep_embedding", 0, 0, {}]]]}, {"name": "deep_in", "class_name": "Concatenate", "config": {"axis": -1, "name": "deep_in"}, "inbound_nodes": [[["deep_flat", 0, 0, {}], ["numeric", 0, 0, {}]]]}, {"name": "deep_1", "class_name": "Dense", "config": {"units": 64, "activation": "relu", "name": "deep_1"}, "inbound_nodes": [[["deep_in", 0, 0, {}]]]}, {"name": "deep_2", "class_name": "Dense", "config": {"units": 32, "activation": "relu", "name": "deep_2"}, "inbound_nodes": [[["deep_1", 0, 0, {}]]]}, {"name": "deep", "class_name": "Dense", "config": {"units": 1, "use_bias": false, "name": "deep"}, "inbound_nodes": [[["deep_2", 0, 0, {}]]]}, {"name": "logit", "class_name": "Add", "config": {"name": "logit"}, "inbound_nodes": [[["wide", 0, 0, {}], ["deep", 0, 0, {}]]]}], "input_layers": [["numeric", 0, 0], ["categorical", 0, 0]], "output_layers": [["logit", 0, 0]]}}, "loss": {"class_name": "BinaryCrossentropy", "config": {"from_logits": true}}, "optimizer": {"class_name": "Adam", "config": {"learning_rate": 0.001}}, "metrics": [{"class_name": "AUC", "config": {"from_logits": true}}, "binary_accuracy"], "input": {"format": "csv", "label": "label", "numeric": ["x0", "x1", "x2", "x3"], "categorical": [{"column": "c0", "hash_buckets": 32}, {"column": "c1", "hash_buckets": 256}, {"column": "c2", "hash_buckets": 2048}], "categorical_layout": "concat_with_offsets"}})json";

// Deep & Cross Network for the planted CSVs: x0 = [embeddings, numeric]
// (28 wide); three cross layers x_{l+1} = x0 * (W x_l + b) + x_l built from
// Dense, Multiply and Add; an MLP beside them; a Dense logit over both.
constexpr char kDcn[] =
    R"json({"model": {"class_name": "Functional", "config": {"name": "dcn", "layers": [{"name": "numeric", "class_name": "InputLayer", "config": {"batch_input_shape": [null, 4], "dtype": "float32", "name": "numeric"}, "inbound_nodes": []}, {"name": "categorical", "class_name": "InputLayer", "config": {"batch_input_shape": [null, 3], "dtype": "int32", "name": "categorical"}, "inbound_nodes": []}, {"name": "embedding", "class_name": "Embedding", "config": {"input_dim": 2336, "output_dim": 8, "name": "embedding"}, "inbound_nodes": [[["categorical", 0, 0, {}]]]}, {"name": "embedding_flat", "class_name": "Flatten", "config": {"name": "embedding_flat"}, "inbound_nodes": [[["embedding", 0, 0, {}]]]}, {"name": "x0", "class_name": "Concatenate", "config": {"axis": -1, "name": "x0"}, "inbound_nodes": [[["embedding_flat", 0, 0, {}], ["numeric", 0, 0, {}]]]}, {"name": "cross1_w", "class_name": "Dense", "config": {"units": 28, "name": "cross1_w"}, "inbound_nodes": [[["x0", 0, 0, {}]]]}, {"name": "cross1_x0w", "class_name": "Multiply", "config": {"name": "cross1_x0w"}, "inbound_nodes": [[["x0", 0, 0, {}], ["cross1_w", 0, 0, {}]]]}, {"name": "cross1", "class_name": "Add", "config": {"name": "cross1"}, "inbound_nodes": [[["cross1_x0w", 0, 0, {}], ["x0", 0, 0, {}]]]}, {"name": "cross2_w", "class_name": "Dense", "config": {"units": 28, "name": "cross2_w"}, "inbound_nodes": [[["cross1", 0, 0, {}]]]}, {"name": "cross2_x0w", "class_name": "Multiply", "config": {"name": "cross2_x0w"}, "inbound_nodes": [[["x0", 0, 0, {}], ["cross2_w", 0, 0, {}]]]}, {"name": "cross2", "class_name": "Add", "config": {"name": "cross2"}, "inbound_nodes": [[["cross2_x0w", 0, 0, {}], ["cross1", 0, 0, {}]]]}, {"name": "cross3_w", "class_name": "Dense", "config": {"units": 28, "name": "cross3_w"}, "inbound_nodes": [[["cross2", 0, 0, {}]]]}, {"name": "cross3_x0w", "class_name": "Multiply", "config": {"name": "cross3_x0w"}, "inbound_nodes": [[["x0", 0, 0, {}], ["cross3_w", 0, 0, {}]]]}, {"name": "cross3", "class_name": "Add", "config": {"name": "cross3"}, "inbound_nodes": [[["cross3_x0w", 0, 0, {}], ["cross2", 0, 0, {}]]]}, {"name": "deep_1", "class_name": "Dense", "config": {"units": 64, "activation": "relu", "name": "deep_1"}, "inbound_nodes": [[["x0", 0, 0, {}]]]}, {"name": "deep_2", "class_name": "Dense", "config": {"units": 32, "activation": "relu", "name": "deep_2"}, "inbound_nodes": [[["deep_1", 0, 0, {}]]]}, {"name": "stack", "class_name": "Concatenate", "config": {"axis": -1, "name": "stack"}, "inbound_nodes": [[["cross3", 0, 0, {}], ["deep_2", 0, 0, {}]]]}, {"name": "logit", "class_name": "Dense", "config": {"units": 1, "name": "logit"}, "inbound_nodes": [[["stack", 0, 0, {}]]]}], "input_layers": [["numeric", 0, 0], ["categorical", 0, 0]], "output_layers": [["logit", 0, 0]]}}, "loss": {"class_name": "BinaryCrossentropy", "config": {"from_logits": true}}, "optimizer": {"class_name": "Adam", "config": {"learning_rate": 0.001}}, "metrics": [{"class_name": "AUC", "config": {"from_logits": true}}, "binary_accuracy"], "input": {"format": "csv", "label": "label", "numeric": ["x0", "x1", "x2", "x3"], "categorical": [{"column": "c0", "hash_buckets": 32}, {"column": "c1", "hash_buckets": 256}, {"column": "c2", "hash_buckets": 2048}], "categorical_layout": "concat_with_offsets"}})json";

// A Transformer encoder block classifying id sequences of length 80 (the
// imdb_bilstm CSVs): Embedding, a Conv1D for order (no position
// embedding), self-attention and a feed-forward block, each with a residual
// Add and LayerNormalization, mean over the steps, Dense logit.
constexpr char kTransformerEncoder[] =
    R"json({"model": {"class_name": "Functional", "config": {"name": "transformer_encoder", "layers": [{"name": "tokens", "class_name": "InputLayer", "config": {"batch_input_shape": [null, 80], "dtype": "float32", "name": "tokens"}, "inbound_nodes": []}, {"name": "embedding", "class_name": "Embedding", "config": {"input_dim": 5000, "output_dim": 32, "name": "embedding"}, "inbound_nodes": [[["tokens", 0, 0, {}]]]}, {"name": "local", "class_name": "Conv1D", "config": {"filters": 32, "kernel_size": 3, "padding": "same", "name": "local"}, "inbound_nodes": [[["embedding", 0, 0, {}]]]}, {"name": "attention", "class_name": "MultiHeadAttention", "config": {"num_heads": 2, "key_dim": 16, "name": "attention"}, "inbound_nodes": [[["local", 0, 0, {"value": ["local", 0, 0]}]]]}, {"name": "attention_residual", "class_name": "Add", "config": {"name": "attention_residual"}, "inbound_nodes": [[["local", 0, 0, {}], ["attention", 0, 0, {}]]]}, {"name": "attention_norm", "class_name": "LayerNormalization", "config": {"epsilon": 1e-06, "name": "attention_norm"}, "inbound_nodes": [[["attention_residual", 0, 0, {}]]]}, {"name": "ffn_1", "class_name": "Dense", "config": {"units": 64, "activation": "relu", "name": "ffn_1"}, "inbound_nodes": [[["attention_norm", 0, 0, {}]]]}, {"name": "ffn_2", "class_name": "Dense", "config": {"units": 32, "name": "ffn_2"}, "inbound_nodes": [[["ffn_1", 0, 0, {}]]]}, {"name": "ffn_residual", "class_name": "Add", "config": {"name": "ffn_residual"}, "inbound_nodes": [[["attention_norm", 0, 0, {}], ["ffn_2", 0, 0, {}]]]}, {"name": "ffn_norm", "class_name": "LayerNormalization", "config": {"epsilon": 1e-06, "name": "ffn_norm"}, "inbound_nodes": [[["ffn_residual", 0, 0, {}]]]}, {"name": "pool", "class_name": "GlobalAveragePooling1D", "config": {"name": "pool"}, "inbound_nodes": [[["ffn_norm", 0, 0, {}]]]}, {"name": "dropout", "class_name": "Dropout", "config": {"rate": 0.1, "name": "dropout"}, "inbound_nodes": [[["pool", 0, 0, {}]]]}, {"name": "logit", "class_name": "Dense", "config": {"units": 1, "name": "logit"}, "inbound_nodes": [[["dropout", 0, 0, {}]]]}], "input_layers": [["tokens", 0, 0]], "output_layers": [["logit", 0, 0]]}}, "loss": {"class_name": "BinaryCrossentropy", "config": {"from_logits": true}}, "optimizer": {"class_name": "Adam", "config": {"learning_rate": 0.002}}, "metrics": ["binary_accuracy"], "input": {"format": "csv", "label": "label"}})json";

// DeepFM for Criteo-shaped click logs: numeric I1..I13, categorical
// C1..C26 each hashed into its own range of one shared table (2x the
// cardinalities of bench/criteo_rows.h's generator; 336,630 rows); the
// same linear + FM + deep parts as planted_deepfm. The model of the data at
// scale benchmark (scripts/bench/criteo_bench.sh).
constexpr char kCriteoDeepFm[] =
    R"json({"model": {"class_name": "Functional", "config": {"name": "criteo_deepfm", "layers": [{"name": "numeric", "class_name": "InputLayer", "config": {"name": "numeric", "batch_input_shape": [null, 13], "dtype": "float32"}, "inbound_nodes": []},
      {"name": "categorical", "class_name": "InputLayer", "config": {"name": "categorical", "batch_input_shape": [null, 26], "dtype": "int32"}, "inbound_nodes": []},
      {"name": "fm_embedding", "class_name": "Embedding", "config": {"name": "fm_embedding", "input_dim": 336630, "output_dim": 8}, "inbound_nodes": [[["categorical", 0, 0, {}]]]},
      {"name": "linear_embedding", "class_name": "Embedding", "config": {"name": "linear_embedding", "input_dim": 336630, "output_dim": 1}, "inbound_nodes": [[["categorical", 0, 0, {}]]]},
      {"name": "linear_flat", "class_name": "Flatten", "config": {"name": "linear_flat"}, "inbound_nodes": [[["linear_embedding", 0, 0, {}]]]},
      {"name": "linear_in", "class_name": "Concatenate", "config": {"name": "linear_in", "axis": -1}, "inbound_nodes": [[["linear_flat", 0, 0, {}], ["numeric", 0, 0, {}]]]},
      {"name": "linear", "class_name": "Dense", "config": {"name": "linear", "units": 1}, "inbound_nodes": [[["linear_in", 0, 0, {}]]]},
      {"name": "fields", "class_name": "Reshape", "config": {"name": "fields", "target_shape": [26, 1, 8]}, "inbound_nodes": [[["fm_embedding", 0, 0, {}]], [["fm_embedding", 0, 0, {}]]]},
      {"name": "field_mean", "class_name": "GlobalAveragePooling2D", "config": {"name": "field_mean"}, "inbound_nodes": [[["fields", 0, 0, {}]], [["fields", 1, 0, {}]]]},
      {"name": "square_of_sum", "class_name": "Multiply", "config": {"name": "square_of_sum"}, "inbound_nodes": [[["field_mean", 0, 0, {}], ["field_mean", 1, 0, {}]]]},
      {"name": "squares", "class_name": "Multiply", "config": {"name": "squares"}, "inbound_nodes": [[["fields", 0, 0, {}], ["fields", 1, 0, {}]]]},
      {"name": "sum_of_squares", "class_name": "GlobalAveragePooling2D", "config": {"name": "sum_of_squares"}, "inbound_nodes": [[["squares", 0, 0, {}]]]},
      {"name": "fm_terms", "class_name": "Concatenate", "config": {"name": "fm_terms", "axis": -1}, "inbound_nodes": [[["square_of_sum", 0, 0, {}], ["sum_of_squares", 0, 0, {}]]]},
      {"name": "fm", "class_name": "Dense", "config": {"name": "fm", "units": 1, "use_bias": false}, "inbound_nodes": [[["fm_terms", 0, 0, {}]]]},
      {"name": "deep_flat", "class_name": "Flatten", "config": {"name": "deep_flat"}, "inbound_nodes": [[["fm_embedding", 0, 0, {}]]]},
      {"name": "deep_in", "class_name": "Concatenate", "config": {"name": "deep_in", "axis": -1}, "inbound_nodes": [[["deep_flat", 0, 0, {}], ["numeric", 0, 0, {}]]]},
      {"name": "deep_1", "class_name": "Dense", "config": {"name": "deep_1", "units": 64, "activation": "relu"}, "inbound_nodes": [[["deep_in", 0, 0, {}]]]},
      {"name": "deep_2", "class_name": "Dense", "config": {"name": "deep_2", "units": 32, "activation": "relu"}, "inbound_nodes": [[["deep_1", 0, 0, {}]]]},
      {"name": "deep", "class_name": "Dense", "config": {"name": "deep", "units": 1, "use_bias": false}, "inbound_nodes": [[["deep_2", 0, 0, {}]]]},
      {"name": "logit", "class_name": "Add", "config": {"name": "logit"}, "inbound_nodes": [[["linear", 0, 0, {}], ["fm", 0, 0, {}], ["deep", 0, 0, {}]]]}], "input_layers": [["numeric", 0, 0], ["categorical", 0, 0]], "output_layers": [["logit", 0, 0]]}}, "loss": {"class_name": "BinaryCrossentropy", "config": {"from_logits": true}}, "optimizer": {"class_name": "Adam", "config": {"learning_rate": 0.001}}, "metrics": [{"class_name": "AUC", "config": {"from_logits": true}}, "binary_accuracy"], "input": {"format": "csv", "label": "label", "numeric": ["I1", "I2", "I3", "I4", "I5", "I6", "I7", "I8", "I9", "I10", "I11", "I12", "I13"], "categorical": [{"column": "C1", "hash_buckets": 1000}, {"column": "C2", "hash_buckets": 500}, {"column": "C3", "hash_buckets": 50000}, {"column": "C4", "hash_buckets": 20000}, {"column": "C5", "hash_buckets": 300}, {"column": "C6", "hash_buckets": 30}, {"column": "C7", "hash_buckets": 10000}, {"column": "C8", "hash_buckets": 600}, {"column": "C9", "hash_buckets": 10}, {"column": "C10", "hash_buckets": 30000}, {"column": "C11", "hash_buckets": 5000}, {"column": "C12", "hash_buckets": 50000}, {"column": "C13", "hash_buckets": 3000}, {"column": "C14", "hash_buckets": 30}, {"column": "C15", "hash_buckets": 10000}, {"column": "C16", "hash_buckets": 50000}, {"column": "C17", "hash_buckets": 10}, {"column": "C18", "hash_buckets": 4000}, {"column": "C19", "hash_buckets": 2000}, {"column": "C20", "hash_buckets": 10}, {"column": "C21", "hash_buckets": 50000}, {"column": "C22", "hash_buckets": 20}, {"column": "C23", "hash_buckets": 20}, {"column": "C24", "hash_buckets": 30000}, {"column": "C25", "hash_buckets": 100}, {"column": "C26", "hash_buckets": 20000}], "categorical_layout": "concat_with_offsets"}})json";

// Sentiment-style text classification over padded id sequences (IMDB's
// shape: keras.datasets.imdb pads reviews to a fixed length with id 0).
constexpr char kImdbBilstm[] = R"json({
  "model": {"class_name": "Sequential", "config": {"name": "imdb_bilstm", "layers": [
    {"class_name": "Embedding", "config": {"name": "embedding", "input_dim": 5000, "output_dim": 32, "mask_zero": true, "batch_input_shape": [null, 80]}},
    {"class_name": "Bidirectional", "config": {"name": "bilstm", "merge_mode": "concat",
      "layer": {"class_name": "LSTM", "config": {"name": "lstm", "units": 32}}}},
    {"class_name": "Dense", "config": {"name": "hidden", "units": 16, "activation": "relu"}},
    {"class_name": "Dense", "config": {"name": "logit", "units": 1}}]}},
  "loss": {"class_name": "BinaryCrossentropy", "config": {"from_logits": true}},
  "optimizer": {"class_name": "Adam", "config": {"learning_rate": 0.005}},
  "metrics": ["binary_accuracy"],
  "input": {"format": "csv", "label": "label"}
})json";

const std::map<std::string, ZooEntry>& Zoo() {
  static const auto* zoo = new std::map<std::string, ZooEntry>{
      {"cifar10_resnet",
       {"ResNet-14 for CIFAR-10-shaped [32, 32, 3] images: 3x3 stem, 3 stages x 2 basic "
        "blocks (16/32/64 filters, projection shortcuts), global average pooling, "
        "Dense(10) logits; SGD 0.05 momentum 0.9",
        kCifar10Resnet}},
      {"cifar10_resnet50",
       {"ResNet-50's layout (bottleneck blocks, stages of 3/4/6/3, projection shortcuts) at "
        "a quarter of its width for CIFAR-10-shaped [32, 32, 3] images: 3x3 stride-1 stem, "
        "global average pooling, Dense(10) logits; Adam 0.002",
        kCifar10Resnet50}},
      {"criteo_deepfm",
       {"DeepFM for Criteo-shaped CSVs (label, numeric I1..I13, categorical C1..C26 hashed "
        "into 336,630 shared embedding rows): linear + FM + deep parts; binary "
        "cross-entropy from logits, AUC",
        kCriteoDeepFm}},
      {"dcn",
       {"Deep & Cross Network for the planted CSVs (numeric x0..x3, categorical c0..c2): "
        "three cross layers (Dense, Multiply, Add) beside an MLP, Dense logit; binary "
        "cross-entropy from logits, AUC",
        kDcn}},
      {"fashion_mnist_mlp",
       {"Fashion-MNIST MLP: Flatten -> Dense(128, relu) -> Dense(10) logits; Adam 0.001 "
        "cosine-decayed "
        "to 1e-4 over 2 epochs of batch 64",
        kFashionMnistMlp}},
      {"fashion_mnist_cnn",
       {"Fashion-MNIST CNN (ElasticDL's mnist functional model): 2x Conv2D, BN, "
        "max pooling, dropout, Dense(10) logits; Adam 0.001 cosine-decayed to 1e-4 "
        "over 3 epochs of batch 64",
        kFashionMnistCnn}},
      {"image_folder_cnn",
       {"CNN for folders of images (one subfolder per class, 10 classes) decoded and resized "
        "to [64, 64, 3]: RandomFlip, RandomRotation(0.05), RandomZoom(0.1) in training, "
        "3 x (Conv2D 3x3 relu, MaxPooling2D), global average pooling, Dropout(0.3), Dense(10) "
        "logits; Adam 0.001",
        kImageFolderCnn}},
      {"imdb_bilstm",
       {"Text classifier for id sequences of length 80 padded with 0 (CSV columns t0..t79, "
        "label): Embedding(5000, 32, mask_zero) -> Bidirectional(LSTM(32)) -> Dense(16, relu) "
        "-> Dense(1) logit; binary cross-entropy from logits, Adam 0.005",
        kImdbBilstm}},
      {"mobilenet_v2",
       {"MobileNetV2 (width 0.5) for CIFAR-10-shaped [32, 32, 3] images: stride-1 stem, "
        "17 inverted residual blocks (1x1 expansion, 3x3 DepthwiseConv2D, 1x1 projection, BN, "
        "ReLU6), 1x1 conv to 1280, global average pooling, Dense(10) logits; Adam 0.002",
        kMobilenetV2}},
      {"planted_deepfm",
       {"DeepFM for CSVs with numeric x0..x3 and categorical c0..c2 (data/ planted "
        "CSVs): linear + FM + deep parts over a shared embedding table; "
        "binary cross-entropy from logits, AUC",
        kPlantedDeepFm}},
      {"transformer_encoder",
       {"Transformer encoder text classifier for id sequences of length 80 (CSV columns "
        "t0..t79, label): Embedding(5000, 32), Conv1D(3), MultiHeadAttention(2 heads of 16) "
        "and a feed-forward block with residuals and LayerNormalization, mean pooling, "
        "Dense(1) logit; Adam 0.002",
        kTransformerEncoder}},
      {"wide_and_deep",
       {"Wide & Deep for the planted CSVs (numeric x0..x3, categorical c0..c2): a linear "
        "part plus an MLP over shared-id embeddings, logits added; binary cross-entropy from "
        "logits, AUC",
        kWideAndDeep}},
  };
  return *zoo;
}

}  // namespace

std::vector<std::string> ZooNames() {
  std::vector<std::string> out;
  for (const auto& [name, e] : Zoo()) out.push_back(name);
  return out;
}

Result<std::string> ZooSpecJson(const std::string& name) {
  auto it = Zoo().find(name);
  if (it == Zoo().end()) {
    std::string known;
    for (const auto& n : ZooNames()) known += (known.empty() ? "" : ", ") + n;
    return NotFound("zoo:" + name + ": no such model in the zoo (known: " + known + ")");
  }
  return std::string(it->second.json);
}

std::string ZooDescription(const std::string& name) {
  auto it = Zoo().find(name);
  return it == Zoo().end() ? "" : it->second.description;
}

}  // namespace edl::nn::keras
