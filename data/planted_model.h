// Planted-model CSV generator: writes a binary classification CSV whose
// labels are drawn from a known logistic model, so tests (and `edl` users)
// can check that training recovers it: the planted model's own AUC on the
// rows is the ceiling a learned model should come close to.
//
// Row r: numeric columns x_j = mean_j + std_j * z_j with z_j ~ N(0, 1);
// categorical columns c_k drawn from a Zipf(zipf_exponent) distribution over
// `cardinalities[k]` values named "c<k>_<id>"; then
//   logit = bias + sum_j w_j z_j + sum_k e_k[c_k] + i[c_0, c_1]
//   label ~ Bernoulli(sigmoid(logit))
// with w_j ~ N(0, numeric_weight_std^2), e_k[v] ~ N(0, category_effect_std^2)
// and the pairwise interaction i ~ N(0, interaction_std^2) (0 disables it).
// The model (means, stds, weights, effects) depends only on model_seed and
// the rows only on row_seed, so train and validation files with the same
// model_seed and different row_seeds share one planted model. Deterministic
// on every platform.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "base/status.h"

namespace edl::data {

struct PlantedOptions {
  int64_t num_rows = 10000;
  int num_numeric = 4;
  std::vector<int64_t> cardinalities = {10, 100, 1000};
  double numeric_weight_std = 1.0;
  double category_effect_std = 1.0;
  double interaction_std = 0.0;
  double zipf_exponent = 1.0;  // 0: uniform categories
  double bias = 0.0;
  uint64_t model_seed = 1;
  uint64_t row_seed = 1;
};

struct PlantedStats {
  int64_t num_rows = 0;
  double positive_rate = 0.0;
  double planted_auc = 0.0;       // AUC of the true probabilities on these rows
  double planted_log_loss = 0.0;  // mean log loss of the true probabilities
  // A model spec "input" object that reads the file: numeric columns
  // normalized with the planted means/stds, categoricals by vocabulary
  // (hash_buckets = 2 * cardinality above 1000 values), layout
  // concat_with_offsets, label "label".
  std::string input_spec_json;
};

// Writes the CSV (header x0..,c0..,label) to `path`. InvalidArgument for bad
// options, IoError naming the path when it cannot be written.
Result<PlantedStats> WritePlantedCsv(const std::string& path, const PlantedOptions& options);

// Area under the ROC curve of `scores` for 0/1 `labels` (Mann-Whitney U
// with tied scores counted half). 0.5 when either class is absent.
// REQUIRES: equal sizes.
double RocAuc(const std::vector<double>& scores, const std::vector<int>& labels);

}  // namespace edl::data
