#include "data/idx_source.h"

#include <sys/stat.h>

#include "data/file_bytes.h"

namespace edl::data {
namespace {

bool FileExists(const std::string& path) {
  struct stat st;
  return ::stat(path.c_str(), &st) == 0;
}

}  // namespace

std::vector<std::string> IdxSource::LabelsPathCandidates(const std::string& path) {
  size_t slash = path.find_last_of('/');
  size_t base = slash == std::string::npos ? 0 : slash + 1;
  std::string name = path.substr(base);
  size_t at = name.find("images-idx3");
  if (at == std::string::npos) return {};
  name.replace(at, 11, "labels-idx1");
  std::string derived = path.substr(0, base) + name;
  bool gz = derived.size() > 3 && derived.compare(derived.size() - 3, 3, ".gz") == 0;
  return {derived, gz ? derived.substr(0, derived.size() - 3) : derived + ".gz"};
}

Result<std::unique_ptr<IdxSource>> IdxSource::Open(const std::string& path, const IdxSpec& spec,
                                                   LabelPolicy labels) {
  std::unique_ptr<IdxSource> s(new IdxSource());
  s->name_ = path;
  EDL_ASSIGN_OR_RETURN(s->images_, ReadIdxFile(path));
  const IdxArray& images = s->images_;
  tensor::Shape shape(images.dims.begin() + 1, images.dims.end());
  if (shape.empty()) shape = {1};
  if (!spec.shape.empty()) {
    if (tensor::NumElements(spec.shape) != images.RecordSize()) {
      return InvalidArgument(path + ": input.shape " + tensor::ShapeString(spec.shape) + " has " +
                             std::to_string(tensor::NumElements(spec.shape)) +
                             " elements but each record of the file holds " +
                             std::to_string(images.RecordSize()) + " (" +
                             tensor::ShapeString(shape) + ")");
    }
    shape = spec.shape;
  }
  s->scale_ = static_cast<float>(spec.scale);
  s->offset_ = static_cast<float>(spec.offset);
  s->inputs_.push_back({"image", tensor::DType::kFloat32, shape, 0});

  std::string labels_path = spec.labels_path;
  if (labels_path.empty()) {
    for (const std::string& candidate : LabelsPathCandidates(path)) {
      if (FileExists(candidate)) {
        labels_path = candidate;
        break;
      }
    }
  }
  if (labels_path.empty()) {
    if (labels == LabelPolicy::kIfPresent) return s;
    std::vector<std::string> tried = LabelsPathCandidates(path);
    return NotFound(path + ": no labels file found" +
                    (tried.empty()
                         ? std::string(" (the name has no \"images-idx3\" "
                                       "to derive it from; set input.labels_path)")
                         : " (tried " + BaseName(tried[0]) + " and " + BaseName(tried[1]) + ")"));
  }
  EDL_ASSIGN_OR_RETURN(s->labels_, ReadIdxFile(labels_path));
  if (s->labels_.dims.size() != 1) {
    return InvalidArgument(labels_path + ": a labels file must have rank 1, got " +
                           std::to_string(s->labels_.dims.size()) + " dimensions");
  }
  if (s->labels_.NumRecords() != images.NumRecords()) {
    return InvalidArgument(labels_path + ": holds " + std::to_string(s->labels_.NumRecords()) +
                           " labels but " + BaseName(path) + " holds " +
                           std::to_string(images.NumRecords()) + " images");
  }
  s->has_labels_ = true;
  return s;
}

Result<Examples> IdxSource::Gather(const std::vector<int64_t>& indices) const {
  EDL_RETURN_IF_ERROR(CheckIndices(indices));
  const int64_t n = static_cast<int64_t>(indices.size());
  const int64_t size = images_.RecordSize();
  tensor::Shape shape = {n};
  shape.insert(shape.end(), inputs_[0].shape.begin(), inputs_[0].shape.end());
  Examples out;
  tensor::Tensor x = tensor::Tensor::Empty(shape, tensor::DType::kFloat32);
  float* dst = x.f32();
  for (int64_t r = 0; r < n; ++r) {
    const uint8_t* src = images_.Record(indices[r]);
    float* row = dst + r * size;
    for (int64_t k = 0; k < size; ++k) row[k] = src[k] * scale_ + offset_;
  }
  out.inputs.push_back(std::move(x));
  if (has_labels_) {
    out.labels = tensor::Tensor::Empty({n}, tensor::DType::kInt64);
    int64_t* y = out.labels.i64();
    for (int64_t r = 0; r < n; ++r) y[r] = *labels_.Record(indices[r]);
  }
  return out;
}

}  // namespace edl::data
