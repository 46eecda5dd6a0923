// Builds metrics from Keras' compile(metrics=[...]) list: names ("accuracy",
// "acc", "auc", "mse", ...) and serialized objects ({"class_name": "AUC",
// "config": {"num_thresholds": 200}}), Keras 3's "module"/"registered_name"
// tolerated. "accuracy"/"acc" resolve from the loss as Keras does:
// sparse_categorical_crossentropy -> sparse_categorical_accuracy,
// binary_crossentropy -> binary_accuracy, anything else ->
// categorical_accuracy. A metric named by string keeps that string as its
// name, except the class-like "auc"/"precision"/"recall" (any case), which
// get Keras' lowercase names. Thresholds are on probabilities: edl gives
// metrics the model's outputs after the sigmoid/softmax of a from_logits
// loss (CompiledModel::ForMetrics); with `outputs_are_probabilities` an
// AUC's from_logits is then not applied a second time.
#pragma once

#include <memory>
#include <string>
#include <vector>

#include "base/status.h"
#include "nn/metrics/metric.h"

namespace edl::nn::metrics {

// `loss_name`: the loss's name or class name ("sparse_categorical_crossentropy"
// or "SparseCategoricalCrossentropy"). Errors name `where` and the entry:
//   model.json: metrics[1]: unknown metric "f1" (known: ...)
//   model.json: metrics[0]: config.num_thresholds: expected an integer > 1
Result<std::vector<std::unique_ptr<Metric>>> MetricsFromJson(
    const std::string& json_text, const std::string& loss_name, const std::string& where,
    bool outputs_are_probabilities = false);

}  // namespace edl::nn::metrics
