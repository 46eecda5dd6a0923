#include "nn/optim/learning_rate_schedule.h"

#include <algorithm>
#include <cmath>
#include <nlohmann/json.hpp>
#include <numbers>
#include <utility>

#include "nn/optim/config_reader.h"
#include "nn/optim/learning_rate_schedule_parse.h"

namespace edl::nn::optim {

ExponentialDecay::ExponentialDecay(double initial_learning_rate, int64_t decay_steps,
                                   double decay_rate, bool staircase)
    : initial_learning_rate_(initial_learning_rate),
      decay_steps_(decay_steps),
      decay_rate_(decay_rate),
      staircase_(staircase) {
  EDL_CHECK_GT(decay_steps, 0);
}

double ExponentialDecay::operator()(int64_t step) const {
  double p = static_cast<double>(step) / static_cast<double>(decay_steps_);
  if (staircase_) p = std::floor(p);
  return initial_learning_rate_ * std::pow(decay_rate_, p);
}

std::string ExponentialDecay::ConfigJson() const {
  nlohmann::json j = {{"class_name", "ExponentialDecay"},
                      {"config",
                       {{"initial_learning_rate", initial_learning_rate_},
                        {"decay_steps", decay_steps_},
                        {"decay_rate", decay_rate_},
                        {"staircase", staircase_},
                        {"name", nullptr}}}};
  return j.dump();
}

PiecewiseConstantDecay::PiecewiseConstantDecay(std::vector<double> boundaries,
                                               std::vector<double> values)
    : boundaries_(std::move(boundaries)), values_(std::move(values)) {
  EDL_CHECK_EQ(values_.size(), boundaries_.size() + 1);
}

double PiecewiseConstantDecay::operator()(int64_t step) const {
  const double s = static_cast<double>(step);
  for (size_t i = 0; i < boundaries_.size(); ++i) {
    if (s <= boundaries_[i]) return values_[i];
  }
  return values_.back();
}

std::string PiecewiseConstantDecay::ConfigJson() const {
  nlohmann::json j = {
      {"class_name", "PiecewiseConstantDecay"},
      {"config", {{"boundaries", boundaries_}, {"values", values_}, {"name", nullptr}}}};
  return j.dump();
}

CosineDecay::CosineDecay(double initial_learning_rate, int64_t decay_steps, double alpha)
    : initial_learning_rate_(initial_learning_rate), decay_steps_(decay_steps), alpha_(alpha) {
  EDL_CHECK_GT(decay_steps, 0);
}

double CosineDecay::operator()(int64_t step) const {
  const double s = static_cast<double>(std::min(step, decay_steps_));
  const double cosine =
      0.5 * (1.0 + std::cos(std::numbers::pi * s / static_cast<double>(decay_steps_)));
  return initial_learning_rate_ * ((1.0 - alpha_) * cosine + alpha_);
}

std::string CosineDecay::ConfigJson() const {
  nlohmann::json j = {{"class_name", "CosineDecay"},
                      {"config",
                       {{"initial_learning_rate", initial_learning_rate_},
                        {"decay_steps", decay_steps_},
                        {"alpha", alpha_},
                        {"name", nullptr}}}};
  return j.dump();
}

namespace {

Status CheckPositive(ConfigReader& r, const std::string& key, int64_t v) {
  if (v <= 0) return r.Error(key, "must be positive, got " + std::to_string(v));
  return Status::Ok();
}

// Fields every Keras schedule config may carry besides its own.
void IgnoreCommon(ConfigReader& r) { r.Ignore("name"); }

}  // namespace

Result<std::unique_ptr<LearningRateSchedule>> ParseLearningRateSchedule(const nlohmann::json& value,
                                                                        const std::string& where,
                                                                        const std::string& path) {
  if (!value.is_object()) {
    return ConfigError(where, path,
                       "expected a number or a schedule object "
                       "{\"class_name\": ..., \"config\": {...}}, got " +
                           Describe(value));
  }
  ConfigReader top(value, where, path);
  EDL_ASSIGN_OR_RETURN(SerializedObject object, ReadSerializedObject(top));
  const std::string& class_name = object.class_name;
  const nlohmann::json* config = object.config;
  ConfigReader r(*config, where, top.FieldPath("config"));
  IgnoreCommon(r);
  std::unique_ptr<LearningRateSchedule> schedule;
  if (class_name == "ExponentialDecay") {
    double initial = 0, rate = 0;
    int64_t steps = 0;
    bool staircase = false;
    if (config->find("initial_learning_rate") == config->end()) {
      return r.Error("initial_learning_rate", "missing");
    }
    EDL_RETURN_IF_ERROR(r.ReadNumber("initial_learning_rate", initial));
    EDL_RETURN_IF_ERROR(r.ReadInt("decay_steps", steps));
    EDL_RETURN_IF_ERROR(CheckPositive(r, "decay_steps", steps));
    if (config->find("decay_rate") == config->end()) {
      return r.Error("decay_rate", "missing");
    }
    EDL_RETURN_IF_ERROR(r.ReadNumber("decay_rate", rate));
    EDL_RETURN_IF_ERROR(r.ReadBool("staircase", staircase));
    schedule = std::make_unique<ExponentialDecay>(initial, steps, rate, staircase);
  } else if (class_name == "PiecewiseConstantDecay") {
    std::vector<double> boundaries, values;
    EDL_RETURN_IF_ERROR(r.ReadNumberList("boundaries", boundaries));
    EDL_RETURN_IF_ERROR(r.ReadNumberList("values", values));
    if (values.size() != boundaries.size() + 1) {
      return r.Error("values", "must have one more element than boundaries (" +
                                   std::to_string(boundaries.size()) + "), got " +
                                   std::to_string(values.size()));
    }
    if (!std::is_sorted(boundaries.begin(), boundaries.end())) {
      return r.Error("boundaries", "must be in increasing order");
    }
    schedule = std::make_unique<PiecewiseConstantDecay>(std::move(boundaries), std::move(values));
  } else if (class_name == "CosineDecay") {
    double initial = 0, alpha = 0;
    int64_t steps = 0;
    if (config->find("initial_learning_rate") == config->end()) {
      return r.Error("initial_learning_rate", "missing");
    }
    EDL_RETURN_IF_ERROR(r.ReadNumber("initial_learning_rate", initial));
    EDL_RETURN_IF_ERROR(r.ReadInt("decay_steps", steps));
    EDL_RETURN_IF_ERROR(CheckPositive(r, "decay_steps", steps));
    EDL_RETURN_IF_ERROR(r.ReadNumber("alpha", alpha));
    // Keras 2.13+ adds a warmup; only its defaults (no warmup) are supported.
    double warmup_steps = 0;
    EDL_RETURN_IF_ERROR(r.ReadNumber("warmup_steps", warmup_steps));
    if (warmup_steps != 0) return r.Error("warmup_steps", "is not supported");
    const nlohmann::json* target = r.Raw("warmup_target");
    if (target != nullptr && !target->is_null()) {
      return r.Error("warmup_target", "is not supported");
    }
    schedule = std::make_unique<CosineDecay>(initial, steps, alpha);
  } else {
    return top.Error("class_name", "unknown learning-rate schedule \"" + class_name +
                                       "\" (known: ExponentialDecay, PiecewiseConstantDecay, "
                                       "CosineDecay)");
  }
  EDL_RETURN_IF_ERROR(r.CheckAllRead());
  return schedule;
}

Result<std::unique_ptr<LearningRateSchedule>> LearningRateScheduleFromJson(
    const std::string& json_text, const std::string& where) {
  nlohmann::json value;
  try {
    value = nlohmann::json::parse(json_text);
  } catch (const nlohmann::json::exception& e) {
    return ConfigError(where, "learning_rate", std::string("invalid JSON: ") + e.what());
  }
  return ParseLearningRateSchedule(value, where, "learning_rate");
}

}  // namespace edl::nn::optim
