#include "nn/regularizer.h"

#include <gtest/gtest.h>

#include <random>

#include "tests/nn/gradient_check.h"

namespace edl::nn {
namespace {

Regularizer Parse(const std::string& json) {
  auto r = RegularizerFromJson(json, "kernel_regularizer");
  EXPECT_TRUE(r.ok()) << json << ": " << r.status().message();
  return r.ok() ? *r : Regularizer{};
}

TEST(Regularizer, PenaltyIsL1AbsPlusL2Squares) {
  Regularizer r{0.1, 0.5};
  Var p = r.Penalty(Var(Tensor::FromVector({3}, {1.f, -2.f, 0.f})));
  EXPECT_NEAR(p.value().item(), 0.1 * 3 + 0.5 * 5, 1e-6);
}

TEST(Regularizer, PenaltyGradientMatchesFiniteDifferences) {
  std::mt19937_64 rng(3);
  Regularizer r{0.3, 0.7};
  testing::ExpectGradientsMatch([r](auto& v) { return r.Penalty(v[0]); },
                                {testing::RandomTensor({3, 4}, rng, -1, 1, 0.05f)});
}

TEST(RegularizerFromJson, ReadsKerasForms) {
  EXPECT_TRUE(Parse("null").empty());
  Regularizer l2 = Parse(R"("l2")");
  EXPECT_DOUBLE_EQ(l2.l2, 0.01);
  EXPECT_DOUBLE_EQ(l2.l1, 0.0);
  EXPECT_DOUBLE_EQ(Parse(R"("L1")").l1, 0.01);
  Regularizer both = Parse(R"("l1_l2")");
  EXPECT_DOUBLE_EQ(both.l1, 0.01);
  EXPECT_DOUBLE_EQ(both.l2, 0.01);
  EXPECT_NEAR(Parse(R"({"class_name": "L2", "config": {"l2": 0.001}})").l2, 0.001, 1e-12);
  Regularizer cls = Parse(
      R"({"module": "keras.regularizers", "class_name": "L1L2",
          "config": {"l1": 0.0, "l2": 0.02}, "registered_name": null})");
  EXPECT_DOUBLE_EQ(cls.l1, 0.0);
  EXPECT_NEAR(cls.l2, 0.02, 1e-9);
}

TEST(RegularizerFromJson, RejectsMalformedConfigsNamingTheField) {
  struct Case {
    std::string json, expected;
  } cases[] = {
      {R"("l3")", "kernel_regularizer: unknown regularizer \"l3\""},
      {R"({"class_name": "L2", "config": {"l2": "lots"}})",
       "kernel_regularizer: config.l2: expected a number"},
      {R"({"class_name": "L2", "config": {"l1": 0.1}})",
       "kernel_regularizer: config.l1: unknown field"},
      {R"({"class_name": "L1", "config": {"l1": -0.1}})",
       "kernel_regularizer: config.l1: must be >= 0"},
      {R"({"class_name": "L1")", "kernel_regularizer: not valid JSON"},
  };
  for (const Case& c : cases) {
    auto r = RegularizerFromJson(c.json, "kernel_regularizer");
    ASSERT_FALSE(r.ok()) << c.json;
    EXPECT_EQ(r.status().message().rfind(c.expected, 0), 0u) << "got: " << r.status().message();
  }
}

}  // namespace
}  // namespace edl::nn
