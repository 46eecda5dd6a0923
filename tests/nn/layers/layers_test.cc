// Every layer: output shapes, weights in Keras order with Keras names, and
// config errors that name the field.
#include <gtest/gtest.h>

#include <nlohmann/json.hpp>
#include <random>

#include "nn/layers/layer_factory.h"

namespace edl::nn::layers {
namespace {

using nlohmann::json;

std::unique_ptr<Layer> Make(const std::string& cls, const json& config) {
  auto l = CreateLayer(cls, config.value("name", "l"), config);
  EDL_CHECK(l.ok()) << l.status().message();
  return std::move(*l);
}

std::string MakeError(const std::string& cls, const json& config) {
  auto l = CreateLayer(cls, "l", config);
  return l.ok() ? "OK" : l.status().message();
}

std::vector<Shape> BuildShapes(Layer& l, const std::vector<Shape>& in) {
  std::mt19937_64 rng(1);
  auto out = l.Build(in, rng);
  EDL_CHECK(out.ok()) << out.status().message();
  return *out;
}

std::string BuildError(Layer& l, const std::vector<Shape>& in) {
  std::mt19937_64 rng(1);
  auto out = l.Build(in, rng);
  return out.ok() ? "OK" : out.status().message();
}

std::vector<std::string> WeightNames(Layer& l) {
  std::vector<std::string> names;
  for (Parameter* p : l.weights()) names.push_back(p->name);
  return names;
}

TEST(Dense, HasKernelThenBiasAndMapsTheLastAxis) {
  auto l = Make("Dense", {{"name", "d"}, {"units", 5}, {"activation", "relu"}});
  EXPECT_EQ(BuildShapes(*l, {{3}}), (std::vector<Shape>{{5}}));
  EXPECT_EQ(WeightNames(*l), (std::vector<std::string>{"d/kernel", "d/bias"}));
  EXPECT_EQ(l->weights()[0]->value.shape(), (Shape{3, 5}));
  EXPECT_EQ(BuildShapes(*l, {{7, 3}}), (std::vector<Shape>{{7, 5}}));
}

TEST(Dense, ComputesXTimesKernelPlusBias) {
  auto l = Make("Dense", {{"name", "d"}, {"units", 2}, {"use_bias", true}});
  BuildShapes(*l, {{3}});
  l->weights()[0]->value.CopyFrom(Tensor::FromVector({3, 2}, {1, 2, 3, 4, 5, 6}));
  l->weights()[1]->value.CopyFrom(Tensor::FromVector({2}, {0.5f, -1}));
  Var y = l->Call({Var(Tensor::FromVector({1, 3}, {1, 1, 2}))}, {})[0];
  EXPECT_EQ(y.value().ToVector(), (std::vector<float>{1 + 3 + 10 + 0.5f, 2 + 4 + 12 - 1}));
}

TEST(Dense, WithoutBiasHasOnlyAKernel) {
  auto l = Make("Dense", {{"name", "d"}, {"units", 4}, {"use_bias", false}});
  BuildShapes(*l, {{2}});
  EXPECT_EQ(WeightNames(*l), std::vector<std::string>{"d/kernel"});
}

TEST(Dense, RejectsAMismatchedSecondCall) {
  auto l = Make("Dense", {{"name", "d"}, {"units", 4}});
  BuildShapes(*l, {{2}});
  EXPECT_EQ(BuildError(*l, {{3}}), "layer \"d\" (Dense): was built for 2 input features, got [3]");
}

TEST(Dense, ConfigErrorsNameTheField) {
  EXPECT_EQ(MakeError("Dense", json::object()), "units is required");
  EXPECT_EQ(MakeError("Dense", {{"units", "ten"}}), "units must be an integer, got \"ten\"");
  EXPECT_EQ(MakeError("Dense", {{"units", 0}}), "units must be positive");
  EXPECT_NE(MakeError("Dense", {{"units", 2}, {"activation", "hard_silu"}})
                .find("unsupported activation \"hard_silu\""),
            std::string::npos);
  EXPECT_EQ(MakeError("Dense", {{"units", 2}, {"kernel_constraint", {{"class_name", "MaxNorm"}}}}),
            "kernel_constraint is not supported, got {\"class_name\":\"MaxNorm\"}");
}

TEST(Conv2D, ComputesValidAndSameOutputShapes) {
  auto valid = Make("Conv2D", {{"name", "c"}, {"filters", 4}, {"kernel_size", {3, 3}}});
  EXPECT_EQ(BuildShapes(*valid, {{28, 28, 1}}), (std::vector<Shape>{{26, 26, 4}}));
  EXPECT_EQ(WeightNames(*valid), (std::vector<std::string>{"c/kernel", "c/bias"}));
  EXPECT_EQ(valid->weights()[0]->value.shape(), (Shape{3, 3, 1, 4}));
  auto same =
      Make("Conv2D", {{"filters", 2}, {"kernel_size", 3}, {"strides", 2}, {"padding", "same"}});
  EXPECT_EQ(BuildShapes(*same, {{7, 8, 3}}), (std::vector<Shape>{{4, 4, 2}}));
  auto dilated = Make("Conv2D", {{"filters", 2}, {"kernel_size", 3}, {"dilation_rate", 2}});
  EXPECT_EQ(BuildShapes(*dilated, {{9, 9, 1}}), (std::vector<Shape>{{5, 5, 2}}));
}

TEST(Conv2D, RejectsAnInputThatIsNotAnImage) {
  auto l = Make("Conv2D", {{"name", "conv2"}, {"filters", 4}, {"kernel_size", 3}});
  EXPECT_EQ(BuildError(*l, {{784}}),
            "layer \"conv2\" (Conv2D): expects rank-3 input [H, W, C], got [784]");
  auto big = Make("Conv2D", {{"name", "c"}, {"filters", 4}, {"kernel_size", 5}});
  EXPECT_EQ(BuildError(*big, {{3, 3, 1}}),
            "layer \"c\" (Conv2D): input [3, 3, 1] is smaller than the 5x5 kernel");
}

TEST(Conv2D, ConfigErrorsNameTheField) {
  EXPECT_EQ(MakeError("Conv2D", {{"filters", 4}, {"kernel_size", "3x3"}}),
            "kernel_size must be 1 or 2 integers, got \"3x3\"");
  EXPECT_EQ(MakeError("Conv2D", {{"filters", 4}}), "kernel_size is required");
  EXPECT_EQ(
      MakeError("Conv2D", {{"filters", 4}, {"kernel_size", 3}, {"data_format", "channels_first"}}),
      "data_format must be one of \"channels_last\", got \"channels_first\"");
  EXPECT_EQ(MakeError("Conv2D", {{"filters", 4}, {"kernel_size", 3}, {"padding", "causal"}}),
            "padding must be one of \"valid\", \"same\", got \"causal\"");
  EXPECT_EQ(MakeError("Conv2D", {{"filters", 4}, {"kernel_size", 3}, {"groups", 3}}),
            "groups must be a positive divisor of filters (4), got 3");
}

TEST(Pooling, DefaultsStridesToThePoolSize) {
  auto max = Make("MaxPooling2D", {{"pool_size", {2, 2}}});
  EXPECT_EQ(BuildShapes(*max, {{5, 6, 3}}), (std::vector<Shape>{{2, 3, 3}}));
  auto avg = Make("AveragePooling2D", {{"pool_size", 3}, {"strides", 1}, {"padding", "same"}});
  EXPECT_EQ(BuildShapes(*avg, {{5, 6, 3}}), (std::vector<Shape>{{5, 6, 3}}));
  EXPECT_TRUE(max->weights().empty());
}

TEST(Pooling, MaxPoolingTakesTheWindowMaximum) {
  auto max = Make("MaxPooling2D", {{"pool_size", 2}});
  BuildShapes(*max, {{2, 2, 1}});
  Var y = max->Call({Var(Tensor::FromVector({1, 2, 2, 1}, {1, 4, 3, 2}))}, {})[0];
  EXPECT_EQ(y.value().ToVector(), std::vector<float>{4});
}

TEST(GlobalPooling, ReducesHeightAndWidth) {
  auto avg = Make("GlobalAveragePooling2D", json::object());
  EXPECT_EQ(BuildShapes(*avg, {{4, 5, 3}}), (std::vector<Shape>{{3}}));
  auto keep = Make("GlobalMaxPooling2D", {{"keepdims", true}});
  EXPECT_EQ(BuildShapes(*keep, {{4, 5, 3}}), (std::vector<Shape>{{1, 1, 3}}));
  BuildShapes(*avg, {{4, 5, 3}});
  Var y = avg->Call({Var(Tensor::FromVector({1, 2, 1, 2}, {1, 2, 3, 6}))}, {})[0];
  EXPECT_EQ(y.value().ToVector(), (std::vector<float>{2, 4}));
}

TEST(Reshape, InfersMinusOneAndRejectsBadCounts) {
  auto l = Make("Reshape", {{"name", "r"}, {"target_shape", {-1, 4}}});
  EXPECT_EQ(BuildShapes(*l, {{2, 6}}), (std::vector<Shape>{{3, 4}}));
  auto bad = Make("Reshape", {{"name", "r"}, {"target_shape", {5}}});
  EXPECT_EQ(BuildError(*bad, {{2, 6}}),
            "layer \"r\" (Reshape): cannot reshape input [2, 6] (12 elements) to "
            "target_shape [5]");
  EXPECT_EQ(MakeError("Reshape", {{"target_shape", {-1, -1}}}),
            "target_shape may hold at most one -1");
}

// TF.js writes target_shape [-1, 2] as [null, 2].
TEST(Reshape, ReadsAnInferredDimensionWrittenAsNull) {
  auto l = Make("Reshape", {{"name", "r"}, {"target_shape", {nullptr, 2}}});
  EXPECT_EQ(BuildShapes(*l, {{3, 4}}), (std::vector<Shape>{{6, 2}}));
  EXPECT_EQ(MakeError("Reshape", {{"target_shape", {nullptr, nullptr}}}),
            "target_shape may hold at most one -1");
}

TEST(Flatten, FlattensAllButTheBatchAxis) {
  auto l = Make("Flatten", json::object());
  EXPECT_EQ(BuildShapes(*l, {{2, 3, 4}}), (std::vector<Shape>{{24}}));
  Var y = l->Call({Var(Tensor::Zeros({5, 2, 3, 4}))}, {})[0];
  EXPECT_EQ(y.shape(), (Shape{5, 24}));
}

TEST(Dropout, IsTheIdentityOutsideTraining) {
  auto l = Make("Dropout", {{"rate", 0.5}});
  BuildShapes(*l, {{4}});
  Tensor x = Tensor::FromVector({1, 4}, {1, 2, 3, 4});
  EXPECT_EQ(l->Call({Var(x)}, {})[0].value().ToVector(), x.ToVector());
  EXPECT_EQ(MakeError("Dropout", {{"rate", 1.5}}), "rate must be in [0, 1), got 1.5");
}

TEST(BatchNormalization, HasGammaBetaThenMovingStatsAsNonTrainable) {
  auto l = Make("BatchNormalization", {{"name", "bn"}});
  EXPECT_EQ(BuildShapes(*l, {{4, 4, 3}}), (std::vector<Shape>{{4, 4, 3}}));
  EXPECT_EQ(WeightNames(*l), (std::vector<std::string>{"bn/gamma", "bn/beta", "bn/moving_mean",
                                                       "bn/moving_variance"}));
  auto w = l->weights();
  EXPECT_TRUE(w[0]->trainable && w[1]->trainable);
  EXPECT_FALSE(w[2]->trainable || w[3]->trainable);
  // The moving statistics are state that training changes, not frozen.
  for (Parameter* p : w) EXPECT_FALSE(p->frozen) << p->name;
  EXPECT_EQ(w[3]->value.ToVector(), (std::vector<float>{1, 1, 1}));
  auto frozen = Make("BatchNormalization", {{"name", "bn"}, {"trainable", false}});
  BuildShapes(*frozen, {{3}});
  for (Parameter* p : frozen->weights()) EXPECT_TRUE(p->frozen && !p->trainable) << p->name;
}

TEST(BatchNormalization, AcceptsKerasSavedAxisListButOnlyTheLastAxis) {
  auto l = Make("BatchNormalization", {{"name", "bn"}, {"axis", {3}}});
  EXPECT_EQ(BuildShapes(*l, {{4, 4, 3}}), (std::vector<Shape>{{4, 4, 3}}));
  auto first = Make("BatchNormalization", {{"name", "bn"}, {"axis", 1}});
  EXPECT_EQ(BuildError(*first, {{4, 4, 3}}),
            "layer \"bn\" (BatchNormalization): supports only the last axis (axis -1); "
            "axis 1 of input [4, 4, 3] is not");
}

TEST(BatchNormalization, InInferenceUsesTheMovingStatistics) {
  EXPECT_EQ(MakeError("BatchNormalization", {{"epsilon", 0.0}}), "epsilon must be positive");
  auto ok = Make("BatchNormalization", {{"name", "bn"}, {"center", false}});
  BuildShapes(*ok, {{2}});
  EXPECT_EQ(WeightNames(*ok),
            (std::vector<std::string>{"bn/gamma", "bn/moving_mean", "bn/moving_variance"}));
  auto w = ok->weights();
  w[1]->value.CopyFrom(Tensor::FromVector({2}, {1, 2}));
  w[2]->value.CopyFrom(Tensor::FromVector({2}, {4, 16}));
  Var y = ok->Call({Var(Tensor::FromVector({1, 2}, {3, 6}))}, {})[0];
  std::vector<float> v = y.value().ToVector();
  EXPECT_NEAR(v[0], 2 / std::sqrt(4.001f), 1e-5);
  EXPECT_NEAR(v[1], 4 / std::sqrt(16.001f), 1e-5);
}

TEST(LayerNormalization, HasGammaAndBeta) {
  auto l = Make("LayerNormalization", {{"name", "ln"}});
  EXPECT_EQ(BuildShapes(*l, {{5, 6}}), (std::vector<Shape>{{5, 6}}));
  EXPECT_EQ(WeightNames(*l), (std::vector<std::string>{"ln/gamma", "ln/beta"}));
  EXPECT_EQ(MakeError("LayerNormalization", {{"rms_scaling", true}}),
            "rms_scaling is not supported");
}

TEST(Embedding, AppendsOutputDimAndDefaultsToSmallUniformWeights) {
  auto l = Make("Embedding", {{"name", "e"}, {"input_dim", 10}, {"output_dim", 3}});
  EXPECT_EQ(BuildShapes(*l, {{4}}), (std::vector<Shape>{{4, 3}}));
  EXPECT_EQ(WeightNames(*l), std::vector<std::string>{"e/embeddings"});
  for (float v : l->weights()[0]->value.ToVector()) {
    EXPECT_LE(std::abs(v), 0.05f);
  }
  Var y = l->Call({Var(Tensor::FromInts({1, 2}, {7, 7}))}, {})[0];
  EXPECT_EQ(y.shape(), (Shape{1, 2, 3}));
  auto masked = Make("Embedding", {{"input_dim", 10}, {"output_dim", 3}, {"mask_zero", true}});
  EXPECT_EQ(BuildError(*masked, {{2, 3}}),
            "layer \"l\" (Embedding): mask_zero needs ids of shape [steps], got [2, 3]");
  EXPECT_EQ(MakeError("Embedding", {{"input_dim", 10}}), "output_dim is required");
}

TEST(Merging, ConcatenatesAlongTheAxisAndChecksTheOthers) {
  auto l = Make("Concatenate", {{"name", "cat"}, {"axis", -1}});
  EXPECT_EQ(BuildShapes(*l, {{2, 3}, {2, 5}}), (std::vector<Shape>{{2, 8}}));
  auto bad = Make("Concatenate", {{"name", "cat"}});
  EXPECT_EQ(BuildError(*bad, {{2, 3}, {4, 5}}),
            "layer \"cat\" (Concatenate): inputs must match except along axis -1, "
            "got [2, 3], [4, 5]");
  auto one = Make("Concatenate", {{"name", "cat"}, {"axis", 1}});
  EXPECT_EQ(BuildShapes(*one, {{2, 3}, {4, 3}}), (std::vector<Shape>{{6, 3}}));
}

TEST(Merging, AddAndMultiplyNeedCompatibleShapes) {
  auto add = Make("Add", {{"name", "add"}});
  EXPECT_EQ(BuildShapes(*add, {{3}, {3}, {3}}), (std::vector<Shape>{{3}}));
  Var y = add->Call(
      {Var(Tensor::FromVector({1, 2}, {1, 2})), Var(Tensor::FromVector({1, 2}, {3, 4}))}, {})[0];
  EXPECT_EQ(y.value().ToVector(), (std::vector<float>{4, 6}));
  auto mul = Make("Multiply", {{"name", "mul"}});
  EXPECT_EQ(BuildError(*mul, {{3}, {4}}),
            "layer \"mul\" (Multiply): input shapes [3] and [4] are not compatible");
  EXPECT_EQ(BuildError(*mul, {{3}}), "layer \"mul\" (Multiply): expects at least 2 inputs, got 1");
}

TEST(ActivationLayers, ApplyTheirFunction) {
  auto relu = Make("ReLU", {{"max_value", 6.0}, {"negative_slope", 0.5}});
  BuildShapes(*relu, {{3}});
  Var y = relu->Call({Var(Tensor::FromVector({1, 3}, {-2, 3, 10}))}, {})[0];
  EXPECT_EQ(y.value().ToVector(), (std::vector<float>{-1, 3, 6}));
  EXPECT_EQ(MakeError("ReLU", {{"threshold", 1.0}}), "threshold other than 0 is not supported");
  auto softmax = Make("Softmax", json::object());
  BuildShapes(*softmax, {{2}});
  y = softmax->Call({Var(Tensor::FromVector({1, 2}, {0, 0}))}, {})[0];
  EXPECT_EQ(y.value().ToVector(), (std::vector<float>{0.5f, 0.5f}));
  auto act = Make("Activation", {{"activation", "silu"}});
  EXPECT_EQ(act->Config()["activation"], "swish");
  EXPECT_EQ(MakeError("Activation", json::object()), "activation is required");
}

TEST(InputLayer, ReadsKeras2AndKeras3Shapes) {
  auto k2 = Make("InputLayer", {{"name", "in"}, {"batch_input_shape", {nullptr, 28, 28}}});
  EXPECT_EQ(BuildShapes(*k2, {}), (std::vector<Shape>{{28, 28}}));
  auto k3 = Make("InputLayer", {{"name", "in"}, {"batch_shape", {nullptr, 3}}, {"dtype", "int32"}});
  EXPECT_EQ(BuildShapes(*k3, {}), (std::vector<Shape>{{3}}));
  EXPECT_EQ(MakeError("InputLayer", {{"batch_input_shape", {nullptr, nullptr}}}),
            "batch_input_shape must have known positive dimensions after the batch axis, "
            "got [null,null]");
  EXPECT_EQ(MakeError("InputLayer", {{"batch_input_shape", {nullptr, 2}}, {"dtype", "string"}}),
            "dtype must be \"float32\", \"int32\" or \"int64\", got \"string\"");
}

TEST(LayerFactory, NamesUnsupportedClassesAndHonoursTrainableFalse) {
  EXPECT_NE(MakeError("ConvLSTM2D", json::object()).find("unsupported layer class \"ConvLSTM2D\""),
            std::string::npos);
  auto frozen = Make("Dense", {{"name", "d"}, {"units", 2}, {"trainable", false}});
  BuildShapes(*frozen, {{2}});
  for (Parameter* p : frozen->weights()) EXPECT_TRUE(!p->trainable && p->frozen);
}

TEST(Regularizers, AddL2PenaltyOfTheKernel) {
  auto l =
      Make("Dense", {{"name", "d"},
                     {"units", 1},
                     {"use_bias", false},
                     {"kernel_regularizer", {{"class_name", "L2"}, {"config", {{"l2", 0.5}}}}}});
  BuildShapes(*l, {{2}});
  l->weights()[0]->value.CopyFrom(Tensor::FromVector({2, 1}, {1, 2}));
  EXPECT_FLOAT_EQ(l->RegularizationLoss().value().item(), 0.5f * 5);
  auto none = Make("Dense", {{"name", "d"}, {"units", 1}});
  BuildShapes(*none, {{2}});
  EXPECT_FALSE(none->RegularizationLoss().defined());
}

TEST(Initializers, AreReadFromKeras2And3Forms) {
  auto l = Make("Dense", {{"name", "d"},
                          {"units", 2},
                          {"kernel_initializer",
                           {{"module", "keras.initializers"},
                            {"class_name", "Constant"},
                            {"config", {{"value", 0.25}}},
                            {"registered_name", nullptr}}},
                          {"bias_initializer", "ones"}});
  BuildShapes(*l, {{1}});
  EXPECT_EQ(l->weights()[0]->value.ToVector(), (std::vector<float>{0.25f, 0.25f}));
  EXPECT_EQ(l->weights()[1]->value.ToVector(), (std::vector<float>{1, 1}));
  EXPECT_NE(MakeError("Dense", {{"units", 2}, {"kernel_initializer", "nonsense"}}), "OK");
}

}  // namespace
}  // namespace edl::nn::layers
