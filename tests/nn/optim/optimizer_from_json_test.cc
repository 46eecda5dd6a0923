#include "nn/optim/optimizer_from_json.h"

#include <gtest/gtest.h>

#include <nlohmann/json.hpp>

namespace edl::nn::optim {
namespace {

using tensor::Tensor;

nlohmann::json Config(const Optimizer& opt) { return nlohmann::json::parse(opt.ConfigJson()); }

TEST(OptimizerFromJson, NamesGiveKerasDefaults) {
  struct Case {
    const char* name;
    const char* class_name;
    double learning_rate;
  };
  for (const Case& c : {Case{"sgd", "SGD", 0.01}, Case{"adam", "Adam", 0.001},
                        Case{"Adagrad", "Adagrad", 0.001}, Case{"rmsprop", "RMSprop", 0.001},
                        Case{"adadelta", "Adadelta", 0.001}, Case{"Adamax", "Adamax", 0.001},
                        Case{"nadam", "Nadam", 0.001}, Case{"ftrl", "Ftrl", 0.001}}) {
    auto opt = OptimizerFromJson(std::string("\"") + c.name + "\"", "m.json");
    ASSERT_TRUE(opt.ok()) << opt.status().message();
    EXPECT_EQ((*opt)->class_name(), c.class_name);
    EXPECT_DOUBLE_EQ((*opt)->CurrentLearningRate(), c.learning_rate) << c.name;
  }
  auto adam = OptimizerFromJson("\"adam\"", "m.json");
  const nlohmann::json config = Config(**adam)["config"];
  EXPECT_EQ(config["beta_1"], 0.9);
  EXPECT_EQ(config["beta_2"], 0.999);
  EXPECT_EQ(config["epsilon"], 1e-7);
  EXPECT_EQ(config["amsgrad"], false);
  auto ftrl = OptimizerFromJson("\"ftrl\"", "m.json");
  const nlohmann::json fc = Config(**ftrl)["config"];
  EXPECT_EQ(fc["learning_rate_power"], -0.5);
  EXPECT_EQ(fc["initial_accumulator_value"], 0.1);
}

TEST(OptimizerFromJson, ReadsATensorFlowKerasConfig) {
  // As TF 2.x model.optimizer.get_config() serializes it.
  auto opt = OptimizerFromJson(
      R"({"class_name": "Adam", "config": {"name": "Adam", "learning_rate": 0.01,
          "decay": 0.0, "beta_1": 0.8, "beta_2": 0.99, "epsilon": 1e-07,
          "amsgrad": true}})",
      "model.json");
  ASSERT_TRUE(opt.ok()) << opt.status().message();
  EXPECT_EQ((*opt)->SlotNames(), (std::vector<std::string>{"m", "v", "vhat"}));
  const nlohmann::json config = Config(**opt)["config"];
  EXPECT_EQ(config["beta_1"], 0.8);
  EXPECT_EQ(config["learning_rate"], 0.01);
}

TEST(OptimizerFromJson, ReadsAKeras3ConfigWithInertExtras) {
  auto opt = OptimizerFromJson(
      R"({"module": "keras.optimizers", "class_name": "SGD", "registered_name": null,
          "config": {"name": "SGD", "learning_rate": 0.1, "weight_decay": null,
          "clipnorm": null, "global_clipnorm": null, "clipvalue": null,
          "use_ema": false, "ema_momentum": 0.99, "ema_overwrite_frequency": null,
          "jit_compile": true, "is_legacy_optimizer": false, "momentum": 0.5,
          "nesterov": true}})",
      "model.json");
  ASSERT_TRUE(opt.ok()) << opt.status().message();
  const nlohmann::json config = Config(**opt)["config"];
  EXPECT_EQ(config["momentum"], 0.5);
  EXPECT_EQ(config["nesterov"], true);
}

// Keras 3 writes these into every optimizer config; only their inert values
// (null, 1, use_ema false) are accepted, anything else is refused by name.
TEST(OptimizerFromJson, RefusesKerasFieldsItDoesNotImplementByNameWhenNotInert) {
  const std::string head = R"({"class_name": "Adam", "config": {"learning_rate": 0.01, )";
  struct Case {
    std::string fields;
    std::string named;
  };
  for (const Case& c : std::vector<Case>{
           {R"("gradient_accumulation_steps": 4)", "optimizer.config.gradient_accumulation_steps"},
           {R"("loss_scale_factor": 128.0)", "optimizer.config.loss_scale_factor"},
           {R"("use_ema": true, "ema_overwrite_frequency": 100)", "optimizer.config.use_ema"},
       }) {
    auto opt = OptimizerFromJson(head + c.fields + "}}", "model.json");
    ASSERT_FALSE(opt.ok()) << c.fields;
    EXPECT_NE(opt.status().message().find(c.named), std::string::npos) << opt.status().message();
    EXPECT_NE(opt.status().message().find("model.json"), std::string::npos)
        << opt.status().message();
  }
  for (const std::string inert :
       {R"("gradient_accumulation_steps": null)", R"("gradient_accumulation_steps": 1)",
        R"("loss_scale_factor": null)", R"("loss_scale_factor": 1.0)",
        R"("use_ema": false, "ema_overwrite_frequency": 100)"}) {
    auto opt = OptimizerFromJson(head + inert + "}}", "model.json");
    EXPECT_TRUE(opt.ok()) << inert << ": " << opt.status().message();
  }
}

TEST(OptimizerFromJson, AcceptsTheOldLrAlias) {
  auto opt =
      OptimizerFromJson(R"({"class_name": "RMSprop", "config": {"lr": 0.05, "rho": 0.8}})", "m");
  ASSERT_TRUE(opt.ok()) << opt.status().message();
  EXPECT_DOUBLE_EQ((*opt)->CurrentLearningRate(), 0.05);
}

TEST(OptimizerFromJson, AcceptsAScheduleAsLearningRate) {
  auto opt = OptimizerFromJson(
      R"({"class_name": "SGD", "config": {"learning_rate": {
          "class_name": "ExponentialDecay", "config": {"initial_learning_rate": 1.0,
          "decay_steps": 2, "decay_rate": 0.5, "staircase": true}}}})",
      "m");
  ASSERT_TRUE(opt.ok()) << opt.status().message();
  (*opt)->set_iterations(4);
  EXPECT_DOUBLE_EQ((*opt)->CurrentLearningRate(), 0.25);
  const nlohmann::json config = Config(**opt)["config"];
  EXPECT_EQ(config["learning_rate"]["class_name"], "ExponentialDecay");
}

TEST(OptimizerFromJson, NadamDecayIsTheMomentumScheduleDecay) {
  auto opt = OptimizerFromJson(
      R"({"class_name": "Nadam", "config": {"learning_rate": 0.1, "decay": 0.004}})", "m");
  ASSERT_TRUE(opt.ok()) << opt.status().message();
  (*opt)->set_iterations(1000);
  EXPECT_DOUBLE_EQ((*opt)->CurrentLearningRate(), 0.1);  // not decayed
  EXPECT_EQ(Config(**opt)["config"]["decay"], 0.004);
}

TEST(OptimizerFromJson, ConfigJsonRoundTripsForEveryOptimizer) {
  for (
      const char* text : {
          R"({"class_name": "SGD", "config": {"learning_rate": 0.2, "momentum": 0.3, "nesterov": true, "clipnorm": 2.0}})",
          R"({"class_name": "Adam", "config": {"learning_rate": 0.2, "beta_1": 0.7, "decay": 0.01}})",
          R"({"class_name": "Adagrad", "config": {"initial_accumulator_value": 0.4, "clipvalue": 1.0}})",
          R"({"class_name": "RMSprop", "config": {"rho": 0.5, "momentum": 0.1, "centered": true}})",
          R"({"class_name": "Adadelta", "config": {"rho": 0.6, "epsilon": 1e-5}})",
          R"({"class_name": "Adamax", "config": {"beta_2": 0.9}})",
          R"({"class_name": "Nadam", "config": {"beta_1": 0.85, "decay": 0.002}})",
          R"({"class_name": "Ftrl", "config": {"l1_regularization_strength": 0.1, "beta": 0.2, "learning_rate_power": -0.7}})",
      }) {
    auto first = OptimizerFromJson(text, "m");
    ASSERT_TRUE(first.ok()) << first.status().message();
    auto second = OptimizerFromJson((*first)->ConfigJson(), "m");
    ASSERT_TRUE(second.ok()) << second.status().message();
    EXPECT_EQ((*first)->ConfigJson(), (*second)->ConfigJson());
    const nlohmann::json in = nlohmann::json::parse(text)["config"];
    const nlohmann::json out = Config(**first)["config"];
    for (auto it = in.begin(); it != in.end(); ++it) {
      EXPECT_EQ(out[it.key()], it.value()) << text << " " << it.key();
    }
  }
}

void ExpectError(const std::string& json, const std::string& message) {
  auto opt = OptimizerFromJson(json, "model.json");
  ASSERT_FALSE(opt.ok()) << json;
  EXPECT_EQ(opt.status().code(), StatusCode::kInvalidArgument);
  EXPECT_EQ(opt.status().message(), message);
}

TEST(OptimizerFromJson, MalformedConfigsNameTheFileAndField) {
  ExpectError(R"({"class_name": "Adam", "config": {"beta_1": "x"}})",
              "model.json: optimizer.config.beta_1: expected a number, got \"x\"");
  ExpectError(R"({"class_name": "Adam", "config": {"beta1": 0.9}})",
              "model.json: optimizer.config.beta1: unknown field");
  ExpectError(R"({"class_name": "Adam", "config": {"amsgrad": 1}})",
              "model.json: optimizer.config.amsgrad: expected true or false, got 1");
  ExpectError(R"({"class_name": "Adam", "config": {"beta_1": 1.5}})",
              "model.json: optimizer.config.beta_1: must be in [0, 1), got 1.5");
  ExpectError(R"({"class_name": "SGD", "config": {"learning_rate": -1}})",
              "model.json: optimizer.config.learning_rate: must be >= 0, got -1");
  ExpectError(R"({"class_name": "SGD", "config": {"learning_rate": "fast"}})",
              "model.json: optimizer.config.learning_rate: expected a number or a "
              "schedule object {\"class_name\": ..., \"config\": {...}}, got \"fast\"");
  ExpectError(R"({"class_name": "SGD", "config": {"learning_rate": {
                  "class_name": "ExponentialDecay", "config": {"initial_learning_rate": 1,
                  "decay_steps": 1.5, "decay_rate": 0.5}}}})",
              "model.json: optimizer.config.learning_rate.config.decay_steps: "
              "expected an integer, got 1.5");
  ExpectError(R"({"class_name": "SGD", "config": {"weight_decay": 0.1}})",
              "model.json: optimizer.config.weight_decay: is not supported");
  ExpectError(R"({"class_name": "Ftrl", "config": {"learning_rate_power": 0.5}})",
              "model.json: optimizer.config.learning_rate_power: must be <= 0, got "
              "0.5");
  ExpectError(R"({"class_name": "Lion", "config": {}})",
              "model.json: optimizer.class_name: unknown optimizer \"Lion\" (known: "
              "SGD, Adam, Adagrad, RMSprop, Adadelta, Adamax, Nadam, Ftrl)");
  ExpectError("\"adamw\"",
              "model.json: optimizer: unknown optimizer \"adamw\" (known: SGD, "
              "Adam, Adagrad, RMSprop, Adadelta, Adamax, Nadam, Ftrl)");
  ExpectError(R"({"config": {}})", "model.json: optimizer.class_name: missing");
  ExpectError(R"({"class_name": "Adam", "config": [1]})",
              "model.json: optimizer.config: expected an object, got [1]");
  ExpectError(R"({"class_name": "Adam", "cfg": {}})", "model.json: optimizer.cfg: unknown field");
  ExpectError("42",
              "model.json: optimizer: expected a name such as \"adam\" or "
              "{\"class_name\": ..., \"config\": {...}}, got 42");
  auto bad = OptimizerFromJson("{\"class_name\": ", "model.json");
  ASSERT_FALSE(bad.ok());
  EXPECT_EQ(bad.status().message().rfind("model.json: optimizer: invalid JSON", 0), 0u);
}

TEST(OptimizerFromJson, ParsedOptimizerUpdatesLikeTheDirectlyBuiltOne) {
  auto opt = OptimizerFromJson(R"({"class_name": "SGD", "config": {"learning_rate": 0.5}})", "m");
  ASSERT_TRUE(opt.ok());
  Tensor w = Tensor::FromVector({2}, {1.f, 1.f});
  (*opt)->ApplyDense("w", w, Tensor::FromVector({2}, {1.f, -2.f}));
  EXPECT_EQ(w.ToVector(), (std::vector<float>{0.5f, 2.f}));
}

}  // namespace
}  // namespace edl::nn::optim
