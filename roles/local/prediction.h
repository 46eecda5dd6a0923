// Prediction: runs a trained model over unlabeled (or labeled) data and
// writes its outputs as CSV. Input is IDX for image models, the model spec's
// CSV format for tabular models, or a CSV with a header row whose rows are
// the flattened input tensor of any single-input model.
#pragma once

#include "base/status.h"
#include "roles/job_options.h"
#include "roles/local/compiled_model.h"

namespace edl::roles {

struct PredictionSummary {
  int64_t records = 0;
  double seconds = 0;
};

// Writes options.output atomically: a header `<output>_<j>,...` per output
// column (the model's raw outputs: logits for from_logits models), plus
// `class` (the arg-max of the first output) for classifiers (a categorical
// loss, or none known) with more than one output column, and `class_name`
// where the spec names the classes (image class folders, a CSV
// label_vocabulary); then one row per record.
Result<PredictionSummary> RunPrediction(const PredictOptions& options);

// The same CSV for the first output only, [records, columns] (what a
// distributed prediction job collects).
std::string PredictionCsv(const CompiledModel& cm, const tensor::Tensor& output);

}  // namespace edl::roles
