#include "nn/optim/optimizer_from_json.h"

#include <algorithm>
#include <cctype>
#include <nlohmann/json.hpp>
#include <sstream>

#include "nn/optim/adadelta.h"
#include "nn/optim/adagrad.h"
#include "nn/optim/adam.h"
#include "nn/optim/adamax.h"
#include "nn/optim/config_reader.h"
#include "nn/optim/ftrl.h"
#include "nn/optim/learning_rate_schedule_parse.h"
#include "nn/optim/nadam.h"
#include "nn/optim/rmsprop.h"
#include "nn/optim/sgd.h"

namespace edl::nn::optim {

namespace {

constexpr char kKnown[] = "SGD, Adam, Adagrad, RMSprop, Adadelta, Adamax, Nadam, Ftrl";

std::string Lower(std::string s) {
  std::transform(s.begin(), s.end(), s.begin(), [](unsigned char c) { return std::tolower(c); });
  return s;
}

std::string Number(double v) {
  std::ostringstream s;
  s << v;
  return s.str();
}

// Checks lo <= v <= hi (or lo <= v < hi when open_hi).
Status CheckRange(const ConfigReader& r, const std::string& key, double v, double lo, double hi,
                  bool open_hi = false) {
  const bool ok = v >= lo && (open_hi ? v < hi : v <= hi);
  if (ok) return Status::Ok();
  return r.Error(key, "must be in [" + Number(lo) + ", " + Number(hi) + (open_hi ? ")" : "]") +
                          ", got " + Number(v));
}

Status CheckNonNegative(const ConfigReader& r, const std::string& key, double v) {
  if (v >= 0) return Status::Ok();
  return r.Error(key, "must be >= 0, got " + Number(v));
}

// Reads the moment decay rates (each in [0, 1)) and epsilon (>= 0) of the
// Adam family (Adam, Adamax, Nadam).
template <typename Options>
Status ReadMoments(ConfigReader& r, Options& o) {
  EDL_RETURN_IF_ERROR(r.ReadNumber("beta_1", o.beta_1));
  EDL_RETURN_IF_ERROR(r.ReadNumber("beta_2", o.beta_2));
  EDL_RETURN_IF_ERROR(r.ReadNumber("epsilon", o.epsilon));
  EDL_RETURN_IF_ERROR(CheckRange(r, "beta_1", o.beta_1, 0, 1, true));
  EDL_RETURN_IF_ERROR(CheckRange(r, "beta_2", o.beta_2, 0, 1, true));
  return CheckNonNegative(r, "epsilon", o.epsilon);
}

// Fields every Keras optimizer config may carry; unsupported ones only with
// inert values.
Status ReadCommon(ConfigReader& r, double& decay, double& clipnorm, double& clipvalue) {
  r.Ignore("name");
  r.Ignore("jit_compile");
  r.Ignore("is_legacy_optimizer");
  // Keras reads the EMA fields only with use_ema, which is refused below.
  r.Ignore("ema_momentum");
  r.Ignore("ema_overwrite_frequency");
  // Keras multiplies the loss by loss_scale_factor and the gradients by its
  // inverse (for float16 training); edl computes in float32 and has neither.
  double loss_scale_factor = 1;
  EDL_RETURN_IF_ERROR(r.ReadNumber("loss_scale_factor", loss_scale_factor));
  if (loss_scale_factor != 1) {
    return r.Error("loss_scale_factor",
                   "is not supported (edl trains in float32, without loss scaling); "
                   "remove it or set it to null");
  }
  int64_t accumulation_steps = 1;
  EDL_RETURN_IF_ERROR(r.ReadInt("gradient_accumulation_steps", accumulation_steps));
  if (accumulation_steps != 1) {
    return r.Error("gradient_accumulation_steps",
                   "is not supported (got " + std::to_string(accumulation_steps) +
                       "); for the same update, multiply --minibatch_size by it "
                       "instead, or set it to null");
  }
  EDL_RETURN_IF_ERROR(r.ReadNumber("clipnorm", clipnorm));
  EDL_RETURN_IF_ERROR(r.ReadNumber("clipvalue", clipvalue));
  EDL_RETURN_IF_ERROR(CheckNonNegative(r, "clipnorm", clipnorm));
  EDL_RETURN_IF_ERROR(CheckNonNegative(r, "clipvalue", clipvalue));
  double weight_decay = 0;
  EDL_RETURN_IF_ERROR(r.ReadNumber("weight_decay", weight_decay));
  if (weight_decay != 0) return r.Error("weight_decay", "is not supported");
  double global_clipnorm = 0;
  EDL_RETURN_IF_ERROR(r.ReadNumber("global_clipnorm", global_clipnorm));
  if (global_clipnorm != 0) {
    return r.Error("global_clipnorm", "is not supported (use clipnorm)");
  }
  bool use_ema = false;
  EDL_RETURN_IF_ERROR(r.ReadBool("use_ema", use_ema));
  if (use_ema) {
    return r.Error("use_ema",
                   "is not supported (nor are ema_momentum and "
                   "ema_overwrite_frequency, which only apply with it)");
  }
  EDL_RETURN_IF_ERROR(r.ReadNumber("decay", decay));
  return CheckNonNegative(r, "decay", decay);
}

// Reads "learning_rate" (or Keras' older "lr"): a number or a schedule.
Status ReadLearningRate(ConfigReader& r, double& learning_rate,
                        std::unique_ptr<LearningRateSchedule>& schedule) {
  const nlohmann::json* lr = r.Raw("learning_rate");
  const nlohmann::json* alias = r.Raw("lr");
  std::string key = "learning_rate";
  if (lr == nullptr || lr->is_null()) {
    lr = alias;
    key = "lr";
  }
  if (lr == nullptr || lr->is_null()) return Status::Ok();
  if (lr->is_number()) {
    learning_rate = lr->get<double>();
    return CheckNonNegative(r, key, learning_rate);
  }
  EDL_ASSIGN_OR_RETURN(schedule, ParseLearningRateSchedule(*lr, r.where(), r.FieldPath(key)));
  return Status::Ok();
}

Result<std::unique_ptr<Optimizer>> Build(const std::string& class_name, ConfigReader& r) {
  const std::string name = Lower(class_name);
  double lr = -1;  // -1: the optimizer's default
  std::unique_ptr<LearningRateSchedule> schedule;
  EDL_RETURN_IF_ERROR(ReadLearningRate(r, lr, schedule));
  double decay = 0, clipnorm = 0, clipvalue = 0;
  std::unique_ptr<Optimizer> opt;
  if (name == "nadam") {
    // Nadam's "decay" is its momentum schedule's decay.
    NadamOptions o;
    double schedule_decay = o.schedule_decay;
    EDL_RETURN_IF_ERROR(r.ReadNumber("schedule_decay", schedule_decay));
    decay = schedule_decay;
    EDL_RETURN_IF_ERROR(ReadCommon(r, decay, clipnorm, clipvalue));
    o.schedule_decay = decay;
    decay = 0;
    if (lr >= 0) o.learning_rate = lr;
    EDL_RETURN_IF_ERROR(ReadMoments(r, o));
    opt = std::make_unique<Nadam>(o);
  } else {
    EDL_RETURN_IF_ERROR(ReadCommon(r, decay, clipnorm, clipvalue));
    if (name == "sgd") {
      SgdOptions o;
      if (lr >= 0) o.learning_rate = lr;
      EDL_RETURN_IF_ERROR(r.ReadNumber("momentum", o.momentum));
      EDL_RETURN_IF_ERROR(r.ReadBool("nesterov", o.nesterov));
      EDL_RETURN_IF_ERROR(CheckRange(r, "momentum", o.momentum, 0, 1));
      opt = std::make_unique<Sgd>(o);
    } else if (name == "adam") {
      AdamOptions o;
      if (lr >= 0) o.learning_rate = lr;
      EDL_RETURN_IF_ERROR(ReadMoments(r, o));
      EDL_RETURN_IF_ERROR(r.ReadBool("amsgrad", o.amsgrad));
      opt = std::make_unique<Adam>(o);
    } else if (name == "adagrad") {
      AdagradOptions o;
      if (lr >= 0) o.learning_rate = lr;
      EDL_RETURN_IF_ERROR(r.ReadNumber("initial_accumulator_value", o.initial_accumulator_value));
      EDL_RETURN_IF_ERROR(r.ReadNumber("epsilon", o.epsilon));
      EDL_RETURN_IF_ERROR(
          CheckNonNegative(r, "initial_accumulator_value", o.initial_accumulator_value));
      EDL_RETURN_IF_ERROR(CheckNonNegative(r, "epsilon", o.epsilon));
      opt = std::make_unique<Adagrad>(o);
    } else if (name == "rmsprop") {
      RmspropOptions o;
      if (lr >= 0) o.learning_rate = lr;
      EDL_RETURN_IF_ERROR(r.ReadNumber("rho", o.rho));
      EDL_RETURN_IF_ERROR(r.ReadNumber("momentum", o.momentum));
      EDL_RETURN_IF_ERROR(r.ReadNumber("epsilon", o.epsilon));
      EDL_RETURN_IF_ERROR(r.ReadBool("centered", o.centered));
      EDL_RETURN_IF_ERROR(CheckRange(r, "rho", o.rho, 0, 1));
      EDL_RETURN_IF_ERROR(CheckRange(r, "momentum", o.momentum, 0, 1));
      EDL_RETURN_IF_ERROR(CheckNonNegative(r, "epsilon", o.epsilon));
      opt = std::make_unique<Rmsprop>(o);
    } else if (name == "adadelta") {
      AdadeltaOptions o;
      if (lr >= 0) o.learning_rate = lr;
      EDL_RETURN_IF_ERROR(r.ReadNumber("rho", o.rho));
      EDL_RETURN_IF_ERROR(r.ReadNumber("epsilon", o.epsilon));
      EDL_RETURN_IF_ERROR(CheckRange(r, "rho", o.rho, 0, 1));
      EDL_RETURN_IF_ERROR(CheckNonNegative(r, "epsilon", o.epsilon));
      opt = std::make_unique<Adadelta>(o);
    } else if (name == "adamax") {
      AdamaxOptions o;
      if (lr >= 0) o.learning_rate = lr;
      EDL_RETURN_IF_ERROR(ReadMoments(r, o));
      opt = std::make_unique<Adamax>(o);
    } else if (name == "ftrl") {
      FtrlOptions o;
      if (lr >= 0) o.learning_rate = lr;
      EDL_RETURN_IF_ERROR(r.ReadNumber("learning_rate_power", o.learning_rate_power));
      EDL_RETURN_IF_ERROR(r.ReadNumber("initial_accumulator_value", o.initial_accumulator_value));
      EDL_RETURN_IF_ERROR(r.ReadNumber("l1_regularization_strength", o.l1_regularization_strength));
      EDL_RETURN_IF_ERROR(r.ReadNumber("l2_regularization_strength", o.l2_regularization_strength));
      EDL_RETURN_IF_ERROR(r.ReadNumber("l2_shrinkage_regularization_strength",
                                       o.l2_shrinkage_regularization_strength));
      EDL_RETURN_IF_ERROR(r.ReadNumber("beta", o.beta));
      if (o.learning_rate_power > 0) {
        return r.Error("learning_rate_power", "must be <= 0, got " + Number(o.learning_rate_power));
      }
      EDL_RETURN_IF_ERROR(
          CheckNonNegative(r, "initial_accumulator_value", o.initial_accumulator_value));
      EDL_RETURN_IF_ERROR(
          CheckNonNegative(r, "l1_regularization_strength", o.l1_regularization_strength));
      EDL_RETURN_IF_ERROR(
          CheckNonNegative(r, "l2_regularization_strength", o.l2_regularization_strength));
      EDL_RETURN_IF_ERROR(CheckNonNegative(r, "l2_shrinkage_regularization_strength",
                                           o.l2_shrinkage_regularization_strength));
      EDL_RETURN_IF_ERROR(CheckNonNegative(r, "beta", o.beta));
      if (lr == 0 && schedule == nullptr) {
        return r.Error("learning_rate", "must be > 0 for Ftrl");
      }
      opt = std::make_unique<Ftrl>(o);
    } else {
      return Status(
          InvalidArgument("unknown optimizer \"" + class_name + "\" (known: " + kKnown + ")"));
    }
  }
  EDL_RETURN_IF_ERROR(r.CheckAllRead());
  if (schedule) opt->set_learning_rate_schedule(std::move(schedule));
  opt->set_decay(decay);
  opt->set_clipnorm(clipnorm);
  opt->set_clipvalue(clipvalue);
  return opt;
}

}  // namespace

Result<std::unique_ptr<Optimizer>> OptimizerFromJson(const std::string& json_text,
                                                     const std::string& where) {
  nlohmann::json value;
  try {
    value = nlohmann::json::parse(json_text);
  } catch (const nlohmann::json::exception& e) {
    return ConfigError(where, "optimizer", std::string("invalid JSON: ") + e.what());
  }
  static const nlohmann::json kEmpty = nlohmann::json::object();
  if (value.is_string()) {
    ConfigReader r(kEmpty, where, "optimizer");
    auto result = Build(value.get<std::string>(), r);
    if (!result.ok()) return result.status().WithPrefix(where + ": optimizer");
    return result;
  }
  if (!value.is_object()) {
    return ConfigError(where, "optimizer",
                       "expected a name such as \"adam\" or {\"class_name\": "
                       "..., \"config\": {...}}, got " +
                           Describe(value));
  }
  ConfigReader top(value, where, "optimizer");
  EDL_ASSIGN_OR_RETURN(SerializedObject object, ReadSerializedObject(top));
  ConfigReader r(*object.config, where, top.FieldPath("config"));
  auto result = Build(object.class_name, r);
  if (!result.ok() && result.status().message().rfind("unknown optimizer", 0) == 0) {
    return result.status().WithPrefix(where + ": optimizer.class_name");
  }
  return result;
}

}  // namespace edl::nn::optim
