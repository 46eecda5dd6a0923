#include "data/streamed_idx_source.h"

#include <algorithm>

#include "data/examples_source.h"
#include "data/idx_images.h"

namespace edl::data {

Result<std::unique_ptr<StreamedIdxSource>> StreamedIdxSource::Open(const std::string& path,
                                                                   const IdxSpec& spec,
                                                                   LabelPolicy labels,
                                                                   const std::string& index_dir) {
  std::unique_ptr<StreamedIdxSource> s(new StreamedIdxSource());
  EDL_ASSIGN_OR_RETURN(s->images_, IdxData::Open(path, index_dir));
  EDL_ASSIGN_OR_RETURN(InputInfo input, IdxImageInput(path, s->images_.header, spec));
  s->inputs_.push_back(std::move(input));
  s->scale_ = static_cast<float>(spec.scale);
  s->offset_ = static_cast<float>(spec.offset);
  EDL_ASSIGN_OR_RETURN(std::string labels_path, FindIdxLabels(path, spec, labels));
  if (labels_path.empty()) return s;
  EDL_ASSIGN_OR_RETURN(IdxData l, IdxData::Open(labels_path, index_dir));
  EDL_RETURN_IF_ERROR(CheckIdxLabels(labels_path, l.header, path, s->images_.header));
  s->labels_ = std::move(l);
  return s;
}

// Records in order from one reader per file, opened at the first.
class StreamedIdxSource::Cursor : public RecordCursor {
 public:
  Cursor(const StreamedIdxSource& source, std::unique_ptr<IdxReader> images,
         std::unique_ptr<IdxReader> labels, int64_t next, int64_t end)
      : source_(source),
        images_(std::move(images)),
        labels_(std::move(labels)),
        next_(next),
        end_(end) {}

  Result<Examples> Next(int64_t n) override {
    const int64_t k = std::min(end_, next_ + std::max<int64_t>(n, 0)) - next_;
    const int64_t size = source_.images_.header.RecordBytes();
    tensor::Shape shape = {k};
    const tensor::Shape& record = source_.inputs_[0].shape;
    shape.insert(shape.end(), record.begin(), record.end());
    Examples out;
    tensor::Tensor x = tensor::Tensor::Empty(shape, tensor::DType::kFloat32);
    if (k > 0) {
      bytes_.resize(static_cast<size_t>(k * size));
      EDL_RETURN_IF_ERROR(images_->Read(k, bytes_.data()));
      DecodeIdxPixels(bytes_.data(), k * size, source_.scale_, source_.offset_, x.f32());
    }
    out.inputs.push_back(std::move(x));
    if (labels_) {
      out.labels = tensor::Tensor::Empty({k}, tensor::DType::kInt64);
      if (k > 0) {
        bytes_.resize(static_cast<size_t>(k));
        EDL_RETURN_IF_ERROR(labels_->Read(k, bytes_.data()));
        int64_t* y = out.labels.i64();
        for (int64_t r = 0; r < k; ++r) y[r] = bytes_[r];
      }
    }
    next_ += k;
    return out;
  }

 private:
  const StreamedIdxSource& source_;
  std::unique_ptr<IdxReader> images_;
  std::unique_ptr<IdxReader> labels_;  // null without labels
  int64_t next_;
  int64_t end_;
  std::vector<uint8_t> bytes_;  // one step's records, reused
};

Result<std::unique_ptr<RecordCursor>> StreamedIdxSource::OpenCursor(int64_t begin,
                                                                    int64_t end) const {
  EDL_RETURN_IF_ERROR(CheckRange(begin, end));
  std::unique_ptr<IdxReader> images, labels;
  if (begin < end) {
    EDL_ASSIGN_OR_RETURN(images, IdxReader::Open(images_, begin));
    if (labels_) {
      EDL_ASSIGN_OR_RETURN(labels, IdxReader::Open(*labels_, begin));
    }
  }
  return std::unique_ptr<RecordCursor>(
      new Cursor(*this, std::move(images), std::move(labels), begin, end));
}

Result<Examples> StreamedIdxSource::Read(int64_t begin, int64_t end) const {
  EDL_ASSIGN_OR_RETURN(std::unique_ptr<RecordCursor> cursor, OpenCursor(begin, end));
  return cursor->Next(end - begin);
}

Result<Examples> StreamedIdxSource::Gather(const std::vector<int64_t>& indices) const {
  EDL_RETURN_IF_ERROR(CheckIndices(indices));
  if (indices.empty()) return Read(0, 0);
  const auto [lo, hi] = std::minmax_element(indices.begin(), indices.end());
  EDL_ASSIGN_OR_RETURN(std::unique_ptr<ExamplesSource> range, ReadIntoMemory(*this, *lo, *hi + 1));
  std::vector<int64_t> local(indices.size());
  for (size_t i = 0; i < indices.size(); ++i) local[i] = indices[i] - *lo;
  return range->Gather(local);
}

}  // namespace edl::data
