// CategoryEncoding: multi-hot, count and one-hot vectors of ids as Keras
// makes them; ids out of range; errors.
#include <gtest/gtest.h>

#include <nlohmann/json.hpp>

#include "tests/nn/layers/layer_test_util.h"

namespace edl::nn::layers {
namespace {

using layer_testing::BuiltLayer;
using layer_testing::LayerError;

std::vector<float> Encode(const nlohmann::json& config, const Shape& in, const Tensor& ids) {
  return BuiltLayer("CategoryEncoding", config, {in})->Call({Var(ids)}, {})[0].value().ToVector();
}

TEST(CategoryEncoding, MakesMultiHotCountAndOneHotVectors) {
  const Tensor ids = Tensor::FromInts({2, 3}, {1, 1, 3, 0, 2, 2});
  EXPECT_EQ(Encode({{"num_tokens", 4}}, {3}, ids),
            (std::vector<float>{0, 1, 0, 1, /**/ 1, 0, 1, 0}));
  EXPECT_EQ(Encode({{"num_tokens", 4}, {"output_mode", "count"}}, {3}, ids),
            (std::vector<float>{0, 2, 0, 1, /**/ 1, 0, 2, 0}));
  EXPECT_EQ(Encode({{"num_tokens", 3}, {"output_mode", "one_hot"}}, {1},
                   Tensor::FromVector({2, 1}, {2, 0})),  // float ids, as from a CSV
            (std::vector<float>{0, 0, 1, /**/ 1, 0, 0}));
  auto per_id =
      BuiltLayer("CategoryEncoding", {{"num_tokens", 4}, {"output_mode", "oneHot"}}, {{3}});
  EXPECT_EQ(per_id->Call({Var(ids)}, {})[0].shape(), (Shape{2, 3, 4}));
}

TEST(CategoryEncoding, IdsOutsideTheTokensAreABugTheDataCheckCatchesFirst) {
  auto l = BuiltLayer("CategoryEncoding", {{"num_tokens", 3}}, {{2}});
  EXPECT_EQ(l->id_limit(), 3);  // what the data pipeline checks ids against
  EXPECT_DEATH(l->Call({Var(Tensor::FromInts({1, 2}, {0, 3}))}, {}),
               "CategoryEncoding\\): id 3 is outside \\[0, 3\\)");
}

TEST(CategoryEncoding, RefusesWhatItCannotHonourNamingTheField) {
  EXPECT_EQ(LayerError("CategoryEncoding", nlohmann::json::object(), {{2}}),
            "num_tokens is required");
  EXPECT_EQ(LayerError("CategoryEncoding", {{"num_tokens", 3}, {"output_mode", "tf_idf"}}, {{2}}),
            "output_mode must be one of \"multi_hot\", \"multiHot\", \"count\", \"one_hot\", "
            "\"oneHot\", got \"tf_idf\"");
  EXPECT_EQ(LayerError("CategoryEncoding", {{"num_tokens", 3}, {"sparse", true}}, {{2}}),
            "sparse true is not supported; use false");
  EXPECT_EQ(LayerError("CategoryEncoding", {{"num_tokens", 3}}, {{2, 2}}),
            "layer \"l\" (CategoryEncoding): expects ids of shape [] or [k], got [2, 2]");
}

}  // namespace
}  // namespace edl::nn::layers
