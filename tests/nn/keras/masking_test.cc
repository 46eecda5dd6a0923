// Masks in a model: Embedding(mask_zero=True) and Masking make them, the
// recurrent layers and GlobalAveragePooling1D read them, step-wise layers
// pass them on, and a layer that cannot take one refuses the model. (The
// predictions of masked models are held to the real TF.js by the round
// trip, tests/tfjs/build_models.js.)
#include <gtest/gtest.h>

#include <string>

#include "nn/keras/model.h"

namespace edl::nn::keras {
namespace {

std::string Sequential(const std::string& layers) {
  return R"({"class_name": "Sequential", "config": {"name": "s", "layers": [)" + layers + "]}}";
}

constexpr char kEmbed[] = R"({"class_name": "Embedding", "config": {"name": "e", "input_dim": 10,
    "output_dim": 3, "mask_zero": true, "batch_input_shape": [null, 5]}})";

std::vector<float> Predict(const std::string& json, const Tensor& x) {
  auto m = Model::FromKerasJson(json, "m.json", "model", 1);
  EDL_CHECK(m.ok()) << m.status().message();
  NoGradGuard no_grad;
  return (*m)->Forward({x}, false)[0].value().ToVector();
}

Tensor Ids(const std::vector<float>& v) { return Tensor::FromVector({2, 5}, v); }

TEST(Masking, PaddingIdsChangeNothingForARecurrentLayerBehindPassThroughLayers) {
  const std::string model = Sequential(std::string(kEmbed) + R"(,
      {"class_name": "Dropout", "config": {"name": "d", "rate": 0.5}},
      {"class_name": "Dense", "config": {"name": "p", "units": 4, "activation": "tanh"}},
      {"class_name": "LSTM", "config": {"name": "l", "units": 2}})");
  // The same two sequences, padded with 0 at the end and at the start.
  const std::vector<float> post = Predict(model, Ids({3, 1, 4, 0, 0, 2, 7, 0, 0, 0}));
  const std::vector<float> pre = Predict(model, Ids({0, 0, 3, 1, 4, 0, 0, 0, 2, 7}));
  ASSERT_EQ(post.size(), 4u);
  for (size_t i = 0; i < post.size(); ++i) EXPECT_NEAR(post[i], pre[i], 1e-5) << i;
  // Without mask_zero, padding is data.
  std::string unmasked = model;
  unmasked.replace(unmasked.find("\"mask_zero\": true"), 17, "\"mask_zero\": false");
  const std::vector<float> a = Predict(unmasked, Ids({3, 1, 4, 0, 0, 2, 7, 0, 0, 0}));
  const std::vector<float> b = Predict(unmasked, Ids({0, 0, 3, 1, 4, 0, 0, 0, 2, 7}));
  EXPECT_GT(std::abs(a[0] - b[0]) + std::abs(a[1] - b[1]), 1e-4);
}

TEST(Masking, GlobalAveragePoolingAveragesTheRealStepsOnly) {
  const std::string model = Sequential(
      R"({"class_name": "Masking", "config": {"name": "m", "mask_value": 0.0, "batch_input_shape": [null, 3, 2]}},
         {"class_name": "GlobalAveragePooling1D", "config": {"name": "g"}})");
  const Tensor x = Tensor::FromVector({2, 3, 2}, {1, 2, 0, 0, 3, 4, /**/ 0, 0, 0, 0, 0, 0});
  EXPECT_EQ(Predict(model, x), (std::vector<float>{2, 3, 0, 0}));
}

TEST(Masking, ALayerThatCannotTakeAMaskRefusesTheModelNamingIt) {
  auto m = Model::FromKerasJson(
      Sequential(std::string(kEmbed) + R"(, {"class_name": "Flatten", "config": {"name": "f"}})"),
      "m.json", "model", 1);
  ASSERT_FALSE(m.ok());
  EXPECT_NE(m.status().message().find("layer \"f\" (Flatten) does not take masks, but input 0 "
                                      "carries one (from Embedding mask_zero or Masking)"),
            std::string::npos)
      << m.status().message();
  // A recurrent layer's last state carries no mask: Flatten after it is fine.
  EXPECT_TRUE(Model::FromKerasJson(
                  Sequential(std::string(kEmbed) +
                             R"(, {"class_name": "GRU", "config": {"name": "g", "units": 2}},
                                {"class_name": "Flatten", "config": {"name": "f"}})"),
                  "m.json", "model", 1)
                  .ok());
}

}  // namespace
}  // namespace edl::nn::keras
