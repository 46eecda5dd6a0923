// Canned models: SQLFlow's estimator-style names built as edl model specs
// (Keras functional JSON, docs/model-spec.md) over a statement's features
// (sqlflow/feature_spec.h): a float input "numeric" [N, k] and an ids input
// "categorical" [N, m] into one shared embedding table.
//
//   DNNClassifier, DNNRegressor   an MLP (model.hidden_units) over the
//                                 embedded ids and the numbers
//   LinearClassifier, LinearRegressor  one Dense over one-weight-per-id
//                                 embeddings and the numbers
//   WideAndDeep                   the linear part plus the MLP, logits added
//   DeepFM                        linear + factorization machine + MLP
//
// WITH model.* attributes: hidden_units ([64, 32]), n_classes (from the
// label's values), embedding_dim (8, or the largest EMBEDDING(..., dim)),
// optimizer (Adam; SGD, Adagrad, Adadelta, Adamax, Ftrl, Nadam, RMSprop)
// and learning_rate (0.001). Classifiers (all but the *Regressor ones;
// WideAndDeep and DeepFM follow the label) end in n_classes logits with
// sparse categorical cross-entropy and accuracy; regressors in one value
// with mean squared error and mean absolute error.
#pragma once

#include <string>
#include <vector>

#include "base/status.h"
#include "sqlflow/feature_spec.h"
#include "sqlflow/statement.h"

namespace edl::sqlflow {

bool IsCannedModel(const std::string& name);

// The model spec JSON: "model", "loss", "optimizer", "metrics" and "input"
// (the features'). Errors name the attribute (unknown, or of the wrong
// type) or say why the label does not suit the model (a classifier's label
// that is not class ids).
Result<std::string> CannedModelSpec(const std::string& name, const std::vector<Attribute>& with,
                                    const FeatureSpec& features);

// The canned model the seed statement (no TO TRAIN) trains for the label:
// DNNClassifier for classes, DNNRegressor for values.
std::string DefaultModel(const FeatureSpec& features);

}  // namespace edl::sqlflow
