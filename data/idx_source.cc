#include "data/idx_source.h"

#include "data/idx_images.h"

namespace edl::data {

Result<std::unique_ptr<IdxSource>> IdxSource::Open(const std::string& path, const IdxSpec& spec,
                                                   LabelPolicy labels) {
  std::unique_ptr<IdxSource> s(new IdxSource());
  s->name_ = path;
  EDL_ASSIGN_OR_RETURN(s->images_, ReadIdxFile(path));
  const IdxHeader images{s->images_.dims};
  EDL_ASSIGN_OR_RETURN(InputInfo input, IdxImageInput(path, images, spec));
  s->inputs_.push_back(std::move(input));
  s->scale_ = static_cast<float>(spec.scale);
  s->offset_ = static_cast<float>(spec.offset);
  EDL_ASSIGN_OR_RETURN(std::string labels_path, FindIdxLabels(path, spec, labels));
  if (labels_path.empty()) return s;
  EDL_ASSIGN_OR_RETURN(s->labels_, ReadIdxFile(labels_path));
  EDL_RETURN_IF_ERROR(CheckIdxLabels(labels_path, IdxHeader{s->labels_.dims}, path, images));
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
    DecodeIdxPixels(images_.Record(indices[r]), size, scale_, offset_, dst + r * size);
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
