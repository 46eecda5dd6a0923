#include "data/idx_images.h"

#include <sys/stat.h>

#include "data/file_bytes.h"

namespace edl::data {
namespace {

bool FileExists(const std::string& path) {
  struct stat st;
  return ::stat(path.c_str(), &st) == 0;
}

}  // namespace

Result<InputInfo> IdxImageInput(const std::string& path, const IdxHeader& images,
                                const IdxSpec& spec) {
  tensor::Shape shape(images.dims.begin() + 1, images.dims.end());
  if (shape.empty()) shape = {1};
  if (!spec.shape.empty()) {
    if (tensor::NumElements(spec.shape) != images.RecordBytes()) {
      return InvalidArgument(path + ": input.shape " + tensor::ShapeString(spec.shape) + " has " +
                             std::to_string(tensor::NumElements(spec.shape)) +
                             " elements but each record of the file holds " +
                             std::to_string(images.RecordBytes()) + " (" +
                             tensor::ShapeString(shape) + ")");
    }
    shape = spec.shape;
  }
  return InputInfo{"image", tensor::DType::kFloat32, shape, 0};
}

std::vector<std::string> IdxLabelsPathCandidates(const std::string& path) {
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

Result<std::string> FindIdxLabels(const std::string& path, const IdxSpec& spec,
                                  LabelPolicy labels) {
  if (!spec.labels_path.empty()) return spec.labels_path;
  const std::vector<std::string> tried = IdxLabelsPathCandidates(path);
  for (const std::string& candidate : tried) {
    if (FileExists(candidate)) return candidate;
  }
  if (labels == LabelPolicy::kIfPresent) return std::string();
  return NotFound(path + ": no labels file found" +
                  (tried.empty()
                       ? std::string(" (the name has no \"images-idx3\" "
                                     "to derive it from; set input.labels_path)")
                       : " (tried " + BaseName(tried[0]) + " and " + BaseName(tried[1]) + ")"));
}

Status CheckIdxLabels(const std::string& labels_path, const IdxHeader& labels,
                      const std::string& images_path, const IdxHeader& images) {
  if (labels.dims.size() != 1) {
    return InvalidArgument(labels_path + ": a labels file must have rank 1, got " +
                           std::to_string(labels.dims.size()) + " dimensions");
  }
  if (labels.NumRecords() != images.NumRecords()) {
    return InvalidArgument(labels_path + ": holds " + std::to_string(labels.NumRecords()) +
                           " labels but " + BaseName(images_path) + " holds " +
                           std::to_string(images.NumRecords()) + " images");
  }
  return Status::Ok();
}

void DecodeIdxPixels(const uint8_t* src, int64_t n, float scale, float offset, float* dst) {
  for (int64_t k = 0; k < n; ++k) dst[k] = src[k] * scale + offset;
}

}  // namespace edl::data
