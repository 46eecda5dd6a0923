#include "nn/metrics/metrics_from_json.h"

#include <cmath>
#include <nlohmann/json.hpp>

#include "nn/keras_object.h"
#include "nn/metrics/accuracy.h"
#include "nn/metrics/confusion_metrics.h"
#include "nn/metrics/mean_metric.h"

namespace edl::nn::metrics {

namespace {

using nn::internal::CanonicalName;
using nn::internal::KerasObject;

constexpr char kKnown[] =
    "accuracy, acc, sparse_categorical_accuracy, categorical_accuracy, "
    "binary_accuracy, auc, precision, recall, mse, mean_squared_error, mae, "
    "mean_absolute_error, mean";

// Reads a field that must keep its inert value (null or `inert`).
Status RequireInert(KerasObject& o, const std::string& key, const nlohmann::json& inert = nullptr) {
  nlohmann::json value = nullptr;
  double number = 0;
  bool flag = false;
  std::string text;
  if (inert.is_boolean()) {
    flag = inert.get<bool>();
    EDL_RETURN_IF_ERROR(o.Get(key, &flag));
    value = flag;
  } else if (inert.is_string()) {
    text = inert.get<std::string>();
    EDL_RETURN_IF_ERROR(o.Get(key, &text));
    if (CanonicalName(text) == CanonicalName(inert.get<std::string>())) {
      return Status::Ok();
    }
    return o.FieldError(key, "only " + inert.dump() + " is supported, got \"" + text + "\"");
  } else {
    number = std::nan("");
    EDL_RETURN_IF_ERROR(o.Get(key, &number));
    if (std::isnan(number)) return Status::Ok();
    return o.FieldError(key, "is not supported");
  }
  if (value == inert) return Status::Ok();
  return o.FieldError(key, "only " + inert.dump() + " is supported");
}

Status ReadThreshold(KerasObject& o, const std::string& key, double& threshold) {
  EDL_RETURN_IF_ERROR(o.Get(key, &threshold));
  if (threshold < 0 || threshold > 1) {
    return o.FieldError(key, "must be in [0, 1]");
  }
  return Status::Ok();
}

Result<std::unique_ptr<Metric>> Build(KerasObject& o, bool from_string,
                                      const std::string& loss_name, bool probabilities) {
  const std::string& c = o.canonical();
  std::string name;
  o.Ignore({"dtype"});
  EDL_RETURN_IF_ERROR(o.Get("name", &name));
  // A metric named by a string keeps that string as its name.
  auto name_or = [&](const std::string& keras_name) {
    if (!name.empty()) return name;
    return from_string ? o.class_name() : keras_name;
  };
  std::unique_ptr<Metric> metric;
  if (c == "accuracy" || c == "acc") {
    if (!from_string) {
      return o.FieldError("class_name",
                          "Keras' Accuracy class compares values exactly; use "
                          "\"accuracy\" or SparseCategoricalAccuracy, "
                          "CategoricalAccuracy or BinaryAccuracy");
    }
    const std::string loss = CanonicalName(loss_name);
    if (loss == "sparsecategoricalcrossentropy") {
      metric = std::make_unique<SparseCategoricalAccuracy>(name_or(""));
    } else if (loss == "binarycrossentropy") {
      metric = std::make_unique<BinaryAccuracy>(name_or(""));
    } else {
      metric = std::make_unique<CategoricalAccuracy>(name_or(""));
    }
  } else if (c == "sparsecategoricalaccuracy") {
    metric = std::make_unique<SparseCategoricalAccuracy>(name_or("sparse_categorical_accuracy"));
  } else if (c == "categoricalaccuracy") {
    metric = std::make_unique<CategoricalAccuracy>(name_or("categorical_accuracy"));
  } else if (c == "binaryaccuracy") {
    double threshold = 0.5;
    EDL_RETURN_IF_ERROR(ReadThreshold(o, "threshold", threshold));
    metric = std::make_unique<BinaryAccuracy>(name_or("binary_accuracy"), threshold);
  } else if (c == "mse" || c == "meansquarederror") {
    metric = std::make_unique<MeanSquaredError>(name_or("mean_squared_error"));
  } else if (c == "mae" || c == "meanabsoluteerror") {
    metric = std::make_unique<MeanAbsoluteError>(name_or("mean_absolute_error"));
  } else if (c == "mean") {
    metric = std::make_unique<Mean>(name_or("mean"));
  } else if (c == "precision" || c == "recall") {
    double threshold = 0.5;
    EDL_RETURN_IF_ERROR(ReadThreshold(o, "thresholds", threshold));
    EDL_RETURN_IF_ERROR(RequireInert(o, "top_k"));
    EDL_RETURN_IF_ERROR(RequireInert(o, "class_id"));
    if (name.empty()) name = c;
    if (c == "precision") {
      metric = std::make_unique<Precision>(name, threshold);
    } else {
      metric = std::make_unique<Recall>(name, threshold);
    }
  } else if (c == "auc") {
    double num_thresholds = 200;
    bool from_logits = false;
    EDL_RETURN_IF_ERROR(o.Get("num_thresholds", &num_thresholds));
    if (num_thresholds != std::floor(num_thresholds) || num_thresholds < 2 ||
        num_thresholds > 1e6) {
      return o.FieldError("num_thresholds",
                          "expected an integer > 1, got " + nlohmann::json(num_thresholds).dump());
    }
    EDL_RETURN_IF_ERROR(o.Get("from_logits", &from_logits));
    EDL_RETURN_IF_ERROR(RequireInert(o, "curve", "ROC"));
    EDL_RETURN_IF_ERROR(RequireInert(o, "summation_method", "interpolation"));
    EDL_RETURN_IF_ERROR(RequireInert(o, "thresholds"));
    EDL_RETURN_IF_ERROR(RequireInert(o, "multi_label", false));
    EDL_RETURN_IF_ERROR(RequireInert(o, "num_labels"));
    EDL_RETURN_IF_ERROR(RequireInert(o, "label_weights"));
    if (name.empty()) name = "auc";
    metric = std::make_unique<Auc>(name, static_cast<int>(num_thresholds),
                                   from_logits && !probabilities);
  } else {
    return InvalidArgument(o.where() + ": unknown metric \"" + o.class_name() +
                           "\" (known: " + kKnown + ")");
  }
  EDL_RETURN_IF_ERROR(o.CheckAllFieldsUsed());
  return metric;
}

}  // namespace

Result<std::vector<std::unique_ptr<Metric>>> MetricsFromJson(const std::string& json_text,
                                                             const std::string& loss_name,
                                                             const std::string& where,
                                                             bool outputs_are_probabilities) {
  nlohmann::json list = nlohmann::json::parse(json_text, nullptr, /*allow_exceptions=*/false);
  if (list.is_discarded()) {
    return InvalidArgument(where + ": metrics: not valid JSON: " + json_text.substr(0, 80));
  }
  if (list.is_null()) list = nlohmann::json::array();
  if (list.is_string() || list.is_object()) list = nlohmann::json::array({list});
  if (!list.is_array()) {
    return InvalidArgument(where +
                           ": metrics: expected a list such as "
                           "[\"accuracy\"], got " +
                           list.dump());
  }
  std::vector<std::unique_ptr<Metric>> out;
  for (size_t i = 0; i < list.size(); ++i) {
    const std::string entry = where + ": metrics[" + std::to_string(i) + "]";
    EDL_ASSIGN_OR_RETURN(KerasObject o, KerasObject::FromJson(list[i], entry));
    EDL_ASSIGN_OR_RETURN(std::unique_ptr<Metric> metric,
                         Build(o, list[i].is_string(), loss_name, outputs_are_probabilities));
    out.push_back(std::move(metric));
  }
  return out;
}

}  // namespace edl::nn::metrics
