#include "nn/optim/learning_rate_schedule.h"

#include <gtest/gtest.h>

#include <cmath>
#include <numbers>

namespace edl::nn::optim {
namespace {

TEST(ExponentialDecay, DecaysContinuouslyOrInStairs) {
  ExponentialDecay smooth(0.1, 10, 0.5);
  EXPECT_DOUBLE_EQ(smooth(0), 0.1);
  EXPECT_DOUBLE_EQ(smooth(5), 0.1 * std::pow(0.5, 0.5));
  EXPECT_DOUBLE_EQ(smooth(10), 0.05);
  EXPECT_DOUBLE_EQ(smooth(25), 0.1 * std::pow(0.5, 2.5));
  ExponentialDecay stairs(0.1, 10, 0.5, /*staircase=*/true);
  EXPECT_DOUBLE_EQ(stairs(9), 0.1);
  EXPECT_DOUBLE_EQ(stairs(10), 0.05);
  EXPECT_DOUBLE_EQ(stairs(25), 0.025);
}

TEST(PiecewiseConstantDecay, BoundariesBelongToTheEarlierPiece) {
  PiecewiseConstantDecay s({100, 200}, {1.0, 0.5, 0.1});
  EXPECT_DOUBLE_EQ(s(0), 1.0);
  EXPECT_DOUBLE_EQ(s(100), 1.0);
  EXPECT_DOUBLE_EQ(s(101), 0.5);
  EXPECT_DOUBLE_EQ(s(200), 0.5);
  EXPECT_DOUBLE_EQ(s(201), 0.1);
  EXPECT_DOUBLE_EQ(s(1000000), 0.1);
}

TEST(CosineDecay, FollowsHalfACosineDownToAlpha) {
  CosineDecay s(0.2, 100, 0.1);
  EXPECT_DOUBLE_EQ(s(0), 0.2);
  EXPECT_NEAR(s(50), 0.2 * (0.9 * 0.5 + 0.1), 1e-15);
  EXPECT_NEAR(s(25), 0.2 * (0.9 * 0.5 * (1 + std::cos(std::numbers::pi / 4)) + 0.1), 1e-15);
  EXPECT_NEAR(s(100), 0.02, 1e-15);
  EXPECT_NEAR(s(500), 0.02, 1e-15);  // stays at alpha after decay_steps
}

TEST(LearningRateScheduleFromJson, ParsesKerasSerializations) {
  auto s = LearningRateScheduleFromJson(
      R"({"module": "keras.optimizers.schedules", "class_name": "ExponentialDecay",
          "config": {"initial_learning_rate": 0.1, "decay_steps": 1000,
                     "decay_rate": 0.96, "staircase": true, "name": null},
          "registered_name": null})",
      "model.json");
  ASSERT_TRUE(s.ok()) << s.status().message();
  EXPECT_DOUBLE_EQ((**s)(2500), 0.1 * 0.96 * 0.96);
  auto p = LearningRateScheduleFromJson(
      R"({"class_name": "PiecewiseConstantDecay",
          "config": {"boundaries": [10, 20], "values": [0.3, 0.2, 0.1]}})",
      "m");
  ASSERT_TRUE(p.ok()) << p.status().message();
  EXPECT_DOUBLE_EQ((**p)(15), 0.2);
  auto c = LearningRateScheduleFromJson(
      R"({"class_name": "CosineDecay", "config": {"initial_learning_rate": 1.0,
          "decay_steps": 10.0}})",
      "m");
  ASSERT_TRUE(c.ok()) << c.status().message();
  EXPECT_NEAR((**c)(5), 0.5, 1e-12);
}

TEST(LearningRateScheduleFromJson, ConfigJsonRoundTrips) {
  ExponentialDecay e(0.1, 7, 0.9, true);
  auto back = LearningRateScheduleFromJson(e.ConfigJson(), "x");
  ASSERT_TRUE(back.ok()) << back.status().message();
  EXPECT_DOUBLE_EQ((**back)(15), e(15));
  PiecewiseConstantDecay p({1, 2}, {3, 4, 5});
  auto pb = LearningRateScheduleFromJson(p.ConfigJson(), "x");
  ASSERT_TRUE(pb.ok()) << pb.status().message();
  EXPECT_DOUBLE_EQ((**pb)(2), 4);
  CosineDecay c(1, 10, 0.2);
  auto cb = LearningRateScheduleFromJson(c.ConfigJson(), "x");
  ASSERT_TRUE(cb.ok()) << cb.status().message();
  EXPECT_DOUBLE_EQ((**cb)(3), c(3));
}

void ExpectError(const std::string& json, const std::string& message) {
  auto s = LearningRateScheduleFromJson(json, "model.json");
  ASSERT_FALSE(s.ok()) << json;
  EXPECT_EQ(s.status().code(), StatusCode::kInvalidArgument);
  EXPECT_EQ(s.status().message(), message);
}

TEST(LearningRateScheduleFromJson, MalformedConfigsNameTheField) {
  ExpectError(R"({"class_name": "ExponentialDecay", "config": {
                   "initial_learning_rate": 0.1, "decay_steps": "x", "decay_rate": 0.5}})",
              "model.json: learning_rate.config.decay_steps: expected an "
              "integer, got \"x\"");
  ExpectError(R"({"class_name": "ExponentialDecay", "config": {
                   "initial_learning_rate": 0.1, "decay_steps": 0, "decay_rate": 0.5}})",
              "model.json: learning_rate.config.decay_steps: must be "
              "positive, got 0");
  ExpectError(R"({"class_name": "ExponentialDecay", "config": {
                   "initial_learning_rate": 0.1, "decay_steps": 10}})",
              "model.json: learning_rate.config.decay_rate: missing");
  ExpectError(R"({"class_name": "PiecewiseConstantDecay", "config": {
                   "boundaries": [1], "values": [1]}})",
              "model.json: learning_rate.config.values: must have one more "
              "element than boundaries (1), got 1");
  ExpectError(R"({"class_name": "CosineDecay", "config": {
                   "initial_learning_rate": 1, "decay_steps": 5, "alhpa": 0}})",
              "model.json: learning_rate.config.alhpa: unknown field");
  ExpectError(R"({"class_name": "PolynomialDecay", "config": {}})",
              "model.json: learning_rate.class_name: unknown learning-rate "
              "schedule \"PolynomialDecay\" (known: ExponentialDecay, "
              "PiecewiseConstantDecay, CosineDecay)");
  ExpectError("[1, 2]",
              "model.json: learning_rate: expected a number or a schedule "
              "object {\"class_name\": ..., \"config\": {...}}, got [1,2]");
  auto bad = LearningRateScheduleFromJson("{", "model.json");
  ASSERT_FALSE(bad.ok());
  EXPECT_EQ(bad.status().message().rfind("model.json: learning_rate: invalid JSON", 0), 0u);
}

}  // namespace
}  // namespace edl::nn::optim
