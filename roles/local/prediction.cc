#include "roles/local/prediction.h"

#include <chrono>
#include <cstdio>
#include <limits>
#include <string>

#include "base/atomic_file.h"
#include "base/logging.h"
#include "data/batch_prefetcher.h"
#include "nn/autograd.h"
#include "roles/local/evaluation.h"
#include "roles/local/model_source.h"
#include "tensor/ops.h"

namespace edl::roles {
namespace {

bool EndsWith(const std::string& s, const std::string& e) {
  return s.size() >= e.size() && s.compare(s.size() - e.size(), e.size(), e) == 0;
}

bool LooksLikeCsv(const std::string& path) {
  for (const char* ext : {".csv", ".csv.gz", ".tsv", ".tsv.gz", ".txt"}) {
    if (EndsWith(path, ext)) return true;
  }
  return false;
}

void AppendNumber(std::string* out, float v) {
  char buf[32];
  std::snprintf(buf, sizeof buf, "%.7g", static_cast<double>(v));
  out->append(buf);
}

// The names of the class ids, where the spec has them (image class
// folders, a CSV label vocabulary).
const std::vector<std::string>& ClassNames(const CompiledModel& cm) {
  return cm.input.format == data::DataFormat::kImages ? cm.input.image.class_names
                                                      : cm.input.csv.label_vocabulary;
}

std::string ClassHeader(const CompiledModel& cm) {
  return ClassNames(cm).empty() ? ",class" : ",class,class_name";
}

// `,id` and, where the spec names classes, `,name` (quoted as CSV needs).
void AppendClass(const CompiledModel& cm, int64_t id, std::string* csv) {
  *csv += ',' + std::to_string(id);
  const auto& names = ClassNames(cm);
  if (names.empty()) return;
  const std::string name = id < static_cast<int64_t>(names.size()) ? names[id] : "";
  if (name.find_first_of(",\"\n\r") == std::string::npos) {
    *csv += ',' + name;
    return;
  }
  *csv += ",\"";
  for (char c : name) *csv += c == '"' ? std::string("\"\"") : std::string(1, c);
  *csv += '"';
}

// A CSV of flattened inputs, first opened as all-numeric `flat` (whose one
// input tells the column count), against the single model input: the
// column count must be the input's element count; an int64 input (token
// ids) is read as identity id columns in [0, the embedding's input_dim)
// instead, one [N, k] input. Returns `flat` unchanged for a float32 input.
// (An int64 input's CSV is then opened a second time with this spec: its
// header and record index are read twice.)
Result<data::InputSpec> FlatCsvSpec(const std::string& path, const data::Source& numeric,
                                    const CompiledModel& cm, data::InputSpec flat) {
  const nn::keras::ModelInput& want = cm.model->inputs()[0];
  const int64_t columns = tensor::NumElements(numeric.inputs()[0].shape);
  if (columns != tensor::NumElements(want.shape)) {
    return InvalidArgument("--prediction_data " + path + ": a CSV of flattened inputs has " +
                           std::to_string(columns) + " columns, but model input \"" + want.name +
                           "\" takes " + tensor::ShapeString(want.shape) + " (" +
                           std::to_string(tensor::NumElements(want.shape)) + " values a record)");
  }
  if (want.dtype != tensor::DType::kInt64) return flat;
  const nn::keras::Model::IdLimit limit = cm.model->InputIdLimit(0);
  flat.csv.numeric_all = false;
  flat.csv.categorical_layout = data::CategoricalLayout::kConcat;
  for (int64_t i = 0; i < columns; ++i) {
    data::CategoricalColumn c;
    c.column = data::ColumnRef::Index(i);
    // Without an embedding reading the input directly, any non-negative id.
    c.num_buckets = limit.input_dim >= 0 ? limit.input_dim : std::numeric_limits<int64_t>::max();
    flat.csv.categorical.push_back(std::move(c));
  }
  return flat;
}

}  // namespace

Result<PredictionSummary> RunPrediction(const PredictOptions& o) {
  if (o.prediction_data.empty()) return InvalidArgument("--prediction_data is required");
  if (o.output.empty()) return InvalidArgument("--output is required (a CSV file to write)");
  if (o.minibatch_size <= 0) return InvalidArgument("--minibatch_size must be positive");
  tensor::SetNumThreads(o.model.num_threads);  // 0: UsableCpus()
  ModelOptions mo = o.model;
  mo.for_inference = true;
  EDL_ASSIGN_OR_RETURN(CompiledModel cm, CompileModel(mo));

  // The model's own input spec first (a tabular model's CSV layout, IDX
  // images); a CSV that does not fit it is read as rows of the flattened
  // input tensor of a single-input model.
  // Streamed: CSV and TFRecord files are read through their record indexes,
  // a batch at a time, and the CSV is written as it goes, so memory does not
  // grow with the data.
  data::OpenOptions reading;
  reading.labels = data::LabelPolicy::kIfPresent;
  reading.stream = true;
  reading.index_dir = o.model.data_index_dir;
  reading.skip_corrupt_records = o.model.skip_corrupt_records;
  Result<std::unique_ptr<data::Source>> opened =
      data::OpenSource(o.prediction_data, cm.input, reading);
  Status fits = opened.ok() ? CheckSourceFitsModel(**opened, cm, "--prediction_data", false)
                            : opened.status().WithPrefix("--prediction_data");
  if (!fits.ok() && cm.input.format != data::DataFormat::kCsv && LooksLikeCsv(o.prediction_data)) {
    if (cm.model->inputs().size() != 1) {
      return InvalidArgument("--prediction_data " + o.prediction_data +
                             ": a CSV of flattened inputs needs a single-input model; "
                             "this one has " +
                             std::to_string(cm.model->inputs().size()));
    }
    data::InputSpec flat;
    flat.format = data::DataFormat::kCsv;
    flat.csv.has_label = false;
    if (EndsWith(o.prediction_data, ".tsv") || EndsWith(o.prediction_data, ".tsv.gz")) {
      flat.csv.delimiter = '\t';
    }
    opened = data::OpenSource(o.prediction_data, flat, reading);
    if (opened.ok()) {
      EDL_ASSIGN_OR_RETURN(flat, FlatCsvSpec(o.prediction_data, **opened, cm, flat));
      if (!flat.csv.categorical.empty())
        opened = data::OpenSource(o.prediction_data, flat, reading);
    }
    fits = opened.ok() ? CheckSourceFitsModel(**opened, cm, "--prediction_data", false)
                       : opened.status().WithPrefix("--prediction_data");
  }
  EDL_RETURN_IF_ERROR(fits);
  const data::Source& source = **opened;

  nn::NoGradGuard no_grad;
  const auto start = std::chrono::steady_clock::now();
  data::BatchOptions bo;
  bo.batch_size = o.minibatch_size;
  data::BatchPrefetcher batches(source, 0, source.num_records(), bo, data::kPrefetchBatches);
  auto file = AtomicFileWriter::Open(o.output);
  if (!file.ok()) return file.status().WithPrefix("--output");
  std::string csv;
  bool header_written = false;
  PredictionSummary summary;
  const auto names = cm.model->output_names();
  while (true) {
    if (csv.size() >= (1 << 20)) {
      Status s = (*file)->Append(csv);
      if (!s.ok()) return s.WithPrefix("--output");
      csv.clear();
    }
    EDL_ASSIGN_OR_RETURN(auto next, batches.Next());
    if (!next) break;
    std::vector<nn::Var> forward = cm.model->Forward(ModelInputs(*next, cm), false);
    // The CSV is written from host copies of the outputs.
    std::vector<nn::Var> out;
    for (const nn::Var& v : forward) out.emplace_back(v.value().On(tensor::Device::kCPU));
    const int64_t n = next->size();
    std::vector<int64_t> cols;
    for (const nn::Var& v : out) cols.push_back(n ? v.value().numel() / n : 0);
    // A class column for classifiers (categorical losses, or no loss known).
    const bool with_class =
        cols[0] > 1 && (!cm.loss || cm.loss->name().find("categorical") != std::string::npos);
    if (!header_written) {
      for (size_t k = 0; k < out.size(); ++k) {
        for (int64_t j = 0; j < cols[k]; ++j) {
          if (!csv.empty()) csv += ',';
          csv += (k < names.size() ? names[k] : "output" + std::to_string(k)) + "_" +
                 std::to_string(j);
        }
      }
      if (with_class) csv += ClassHeader(cm);
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
        AppendClass(cm, best, &csv);
      }
      csv += '\n';
    }
    summary.records += n;
  }
  summary.seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
  Status s = (*file)->Append(csv);
  if (s.ok()) s = (*file)->Commit();
  if (!s.ok()) return s.WithPrefix("--output");
  return summary;
}

std::string PredictionCsv(const CompiledModel& cm, const tensor::Tensor& output) {
  const int64_t rows = output.rank() ? output.dim(0) : 0;
  const int64_t cols = rows ? output.numel() / rows : 0;
  const auto names = cm.model->output_names();
  const std::string name = names.empty() ? "output0" : names[0];
  const bool with_class =
      cols > 1 && (!cm.loss || cm.loss->name().find("categorical") != std::string::npos);
  std::string csv;
  for (int64_t j = 0; j < cols; ++j) csv += (j ? "," : "") + name + "_" + std::to_string(j);
  if (with_class) csv += ClassHeader(cm);
  csv += '\n';
  const float* v = output.f32();
  for (int64_t i = 0; i < rows; ++i) {
    const float* row = v + i * cols;
    for (int64_t j = 0; j < cols; ++j) {
      if (j) csv += ',';
      AppendNumber(&csv, row[j]);
    }
    if (with_class) {
      int64_t best = 0;
      for (int64_t j = 1; j < cols; ++j) best = row[j] > row[best] ? j : best;
      AppendClass(cm, best, &csv);
    }
    csv += '\n';
  }
  return csv;
}

}  // namespace edl::roles
