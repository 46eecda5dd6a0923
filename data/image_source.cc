#include "data/image_source.h"

#include <cstring>

#include "base/file.h"
#include "base/logging.h"
#include "data/image_decoder.h"
#include "data/image_resize.h"

namespace edl::data {

Status DecodeToInput(std::string_view bytes, const ImageSpec& spec, float* out) {
  DecodeOptions d;
  d.channels = spec.channels;
  d.max_pixels = spec.max_pixels;
  if (spec.dct_scaling) {
    d.cover_height = spec.height;
    d.cover_width = spec.width;
    d.crop_to_aspect_ratio = spec.crop_to_aspect_ratio;
  }
  EDL_ASSIGN_OR_RETURN(DecodedImage image, DecodeImage(bytes, d));
  ResizeImage(image, spec, out);
  return Status::Ok();
}

Result<std::unique_ptr<ImageSource>> ImageSource::Open(const std::string& path,
                                                       const ImageSpec& spec,
                                                       const OpenOptions& options) {
  std::unique_ptr<ImageSource> s(new ImageSource());
  s->name_ = path;
  s->spec_ = spec;
  s->skip_corrupt_ = options.skip_corrupt_records;
  EDL_ASSIGN_OR_RETURN(s->list_,
                       ListImages(path, spec.class_names, options.labels, options.index_dir));
  s->inputs_.push_back(
      {"image", tensor::DType::kFloat32, {spec.height, spec.width, spec.channels}, 0});
  return s;
}

std::string ImageSource::FilePath(int64_t record) const {
  const std::string& f = list_.files[static_cast<size_t>(record)];
  if (!f.empty() && f[0] == '/') return f;
  return list_.root + "/" + f;
}

Status ImageSource::DecodeRecord(int64_t record, float* out) const {
  const std::string path = FilePath(record);
  auto bytes = ReadFile(path);
  if (!bytes.ok()) return bytes.status();
  return DecodeToInput(*bytes, spec_, out).WithPrefix(path);
}

Result<Examples> ImageSource::Gather(const std::vector<int64_t>& indices) const {
  EDL_RETURN_IF_ERROR(CheckIndices(indices));
  const int64_t size = spec_.height * spec_.width * spec_.channels;
  const auto wanted = static_cast<int64_t>(indices.size());
  // Decoded straight into the batch; cut short only when files are skipped.
  tensor::Tensor x = tensor::Tensor::Empty({wanted, spec_.height, spec_.width, spec_.channels},
                                           tensor::DType::kFloat32);
  std::vector<int64_t> kept;
  kept.reserve(indices.size());
  for (int64_t r : indices) {
    Status s = DecodeRecord(r, x.f32() + static_cast<int64_t>(kept.size()) * size);
    if (!s.ok()) {
      if (!skip_corrupt_) return s;
      ++skipped_;
      EDL_LOG(WARNING) << "skipping a corrupt image (--skip_corrupt_records): " << s.message();
      continue;
    }
    kept.push_back(r);
  }
  const auto n = static_cast<int64_t>(kept.size());
  Examples out;
  if (n < wanted) {
    tensor::Tensor fewer = tensor::Tensor::Empty({n, spec_.height, spec_.width, spec_.channels},
                                                 tensor::DType::kFloat32);
    if (n > 0) std::memcpy(fewer.f32(), x.f32(), static_cast<size_t>(n * size) * sizeof(float));
    x = std::move(fewer);
  }
  out.inputs.push_back(std::move(x));
  if (has_labels()) {
    out.labels = tensor::Tensor::Empty({n}, tensor::DType::kInt64);
    int64_t* y = out.labels.i64();
    for (int64_t i = 0; i < n; ++i) y[i] = list_.labels[static_cast<size_t>(kept[i])];
  }
  out.records = std::move(kept);
  return out;
}

}  // namespace edl::data
