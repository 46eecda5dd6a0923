#include "roles/prediction.h"

#include <chrono>
#include <cstdio>
#include <string>

#include "base/file.h"
#include "base/logging.h"
#include "data/batcher.h"
#include "nn/autograd.h"
#include "roles/evaluation.h"
#include "tensor/ops.h"

namespace edl::roles {
namespace {

bool LooksLikeCsv(const std::string& path) {
  for (const char* ext : {".csv", ".csv.gz", ".tsv"}) {
    const std::string e = ext;
    if (path.size() >= e.size() && path.compare(path.size() - e.size(), e.size(), e) == 0) {
      return true;
    }
  }
  return false;
}

void AppendNumber(std::string* out, float v) {
  char buf[32];
  std::snprintf(buf, sizeof buf, "%.7g", static_cast<double>(v));
  out->append(buf);
}

}  // namespace

Result<PredictionSummary> RunPrediction(const PredictOptions& o) {
  if (o.prediction_data.empty()) return InvalidArgument("--prediction_data is required");
  if (o.output.empty()) return InvalidArgument("--output is required (a CSV file to write)");
  if (o.minibatch_size <= 0) return InvalidArgument("--minibatch_size must be positive");
  if (o.model.num_threads > 0) tensor::SetNumThreads(o.model.num_threads);
  ModelOptions mo = o.model;
  mo.for_inference = true;
  EDL_ASSIGN_OR_RETURN(CompiledModel cm, CompileModel(mo));

  data::InputSpec spec = cm.input;
  if (LooksLikeCsv(o.prediction_data) && spec.format != data::DataFormat::kCsv) {
    // Rows are the flattened input tensor of a single-input model.
    if (cm.model->inputs().size() != 1) {
      return InvalidArgument("--prediction_data " + o.prediction_data +
                             ": a CSV of flattened inputs needs a single-input model; "
                             "this one has " + std::to_string(cm.model->inputs().size()));
    }
    spec = data::InputSpec();
    spec.format = data::DataFormat::kCsv;
    spec.csv.has_label = false;
  }
  auto opened = data::OpenSource(o.prediction_data, spec, data::LabelPolicy::kIfPresent);
  if (!opened.ok()) return opened.status().WithPrefix("--prediction_data");
  const data::Source& source = **opened;
  EDL_RETURN_IF_ERROR(CheckSourceFitsModel(source, cm, "--prediction_data", false));

  nn::NoGradGuard no_grad;
  const auto start = std::chrono::steady_clock::now();
  data::BatchOptions bo;
  bo.batch_size = o.minibatch_size;
  data::Batcher batcher(source, 0, source.num_records(), bo);
  std::string csv;
  bool header_written = false;
  PredictionSummary summary;
  const auto names = cm.model->output_names();
  while (true) {
    EDL_ASSIGN_OR_RETURN(auto next, batcher.Next());
    if (!next) break;
    std::vector<nn::Var> out = cm.model->Forward(ModelInputs(*next, cm), false);
    const int64_t n = next->size();
    std::vector<int64_t> cols;
    for (const nn::Var& v : out) cols.push_back(n ? v.value().numel() / n : 0);
    const bool with_class = cols[0] > 1;
    if (!header_written) {
      for (size_t k = 0; k < out.size(); ++k) {
        for (int64_t j = 0; j < cols[k]; ++j) {
          if (!csv.empty()) csv += ',';
          csv += (k < names.size() ? names[k] : "output" + std::to_string(k)) + "_" +
                 std::to_string(j);
        }
      }
      if (with_class) csv += ",class";
      csv += '\n';
      header_written = true;
    }
    for (int64_t i = 0; i < n; ++i) {
      for (size_t k = 0; k < out.size(); ++k) {
        const float* row = out[k].value().f32() + i * cols[k];
        for (int64_t j = 0; j < cols[k]; ++j) {
          if (k || j) csv += ',';
          AppendNumber(&csv, row[j]);
        }
      }
      if (with_class) {
        const float* row = out[0].value().f32() + i * cols[0];
        int64_t best = 0;
        for (int64_t j = 1; j < cols[0]; ++j) best = row[j] > row[best] ? j : best;
        csv += ',' + std::to_string(best);
      }
      csv += '\n';
    }
    summary.records += n;
  }
  summary.seconds =
      std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
  Status s = WriteFileAtomically(o.output, csv);
  if (!s.ok()) return s.WithPrefix("--output");
  return summary;
}

}  // namespace edl::roles
