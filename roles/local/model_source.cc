// Opening a model's data (roles/local/model_source.h).
#include "roles/local/model_source.h"

#include "roles/local/compiled_model.h"

namespace edl::roles {

Status CheckSourceFitsModel(const data::Source& source, const CompiledModel& cm,
                            const std::string& flag, bool need_labels) {
  const auto& want = cm.model->inputs();
  const auto& have = source.inputs();
  const std::string where = flag + " " + source.name();
  if (want.size() != have.size()) {
    return InvalidArgument(where + ": the data gives " + std::to_string(have.size()) +
                           " input(s) but the model takes " + std::to_string(want.size()) +
                           " (check the spec's \"input\" section)");
  }
  for (size_t i = 0; i < want.size(); ++i) {
    if (tensor::NumElements(want[i].shape) != tensor::NumElements(have[i].shape)) {
      return InvalidArgument(where + ": input " + std::to_string(i) + " (\"" + have[i].name +
                             "\") has per-record shape " + tensor::ShapeString(have[i].shape) +
                             " but model input \"" + want[i].name + "\" is " +
                             tensor::ShapeString(want[i].shape));
    }
    if (want[i].dtype != have[i].dtype) {
      return InvalidArgument(where + ": input " + std::to_string(i) + " (\"" + have[i].name +
                             "\") is " + tensor::DTypeName(have[i].dtype) + " but model input \"" +
                             want[i].name + "\" takes " + tensor::DTypeName(want[i].dtype));
    }
  }
  for (size_t i = 0; i < want.size(); ++i) {
    if (have[i].dtype != tensor::DType::kInt64 || have[i].num_ids <= 0) continue;
    const auto limit = cm.model->InputIdLimit(i);
    if (limit.input_dim >= 0 && have[i].num_ids > limit.input_dim) {
      return InvalidArgument(where + ": input \"" + have[i].name + "\" has ids up to " +
                             std::to_string(have[i].num_ids - 1) + " but " + limit.description +
                             " (raise it or lower the spec's hash_buckets)");
    }
  }
  if (need_labels && !source.has_labels()) {
    return InvalidArgument(where + ": has no labels");
  }
  return Status::Ok();
}

Result<std::unique_ptr<data::Source>> OpenSourceForModel(const std::string& flag,
                                                         const std::string& path,
                                                         const CompiledModel& cm, bool need_labels,
                                                         data::OpenOptions reading) {
  reading.labels = need_labels ? data::LabelPolicy::kRequired : data::LabelPolicy::kIfPresent;
  auto source = data::OpenSource(path, cm.input, reading);
  if (!source.ok()) return source.status().WithPrefix(flag);
  EDL_RETURN_IF_ERROR(CheckSourceFitsModel(**source, cm, flag, need_labels));
  return source;
}

data::OpenOptions JobReading(const ModelOptions& model, bool worker) {
  data::OpenOptions o;
  o.stream = !(worker && model.data_in_memory);
  o.index_dir = model.data_index_dir;
  o.skip_corrupt_records = model.skip_corrupt_records;
  o.images_in_memory = !o.stream;  // --data_in_memory: image files decoded once
  return o;
}

}  // namespace edl::roles
