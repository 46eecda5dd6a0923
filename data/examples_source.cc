#include "data/examples_source.h"

#include <cstring>

#include "base/check.h"
#include "tensor/ops.h"

namespace edl::data {
namespace {

// Rows `indices` of `t` (first axis), copied.
tensor::Tensor GatherRows(const tensor::Tensor& t, const std::vector<int64_t>& indices) {
  tensor::Shape shape = t.shape();
  const int64_t n = static_cast<int64_t>(indices.size());
  const size_t row = t.dim(0) > 0 ? t.bytes() / static_cast<size_t>(t.dim(0)) : 0;
  shape[0] = n;
  tensor::Tensor out = tensor::Tensor::Empty(shape, t.dtype());
  const char* src = static_cast<const char*>(t.raw_data());
  char* dst = static_cast<char*>(out.raw_data());
  for (int64_t r = 0; r < n; ++r) std::memcpy(dst + r * row, src + indices[r] * row, row);
  return out;
}

}  // namespace

Result<Examples> ExamplesSource::Gather(const std::vector<int64_t>& indices) const {
  EDL_RETURN_IF_ERROR(CheckIndices(indices));
  Examples out;
  for (const tensor::Tensor& x : records_.inputs) out.inputs.push_back(GatherRows(x, indices));
  if (records_.labels.defined()) out.labels = GatherRows(records_.labels, indices);
  if (records_.records.size() == static_cast<size_t>(records_.size())) {
    for (int64_t i : indices) out.records.push_back(records_.records[static_cast<size_t>(i)]);
  }
  return out;
}

Result<std::unique_ptr<ExamplesSource>> ReadIntoMemory(const Source& source, int64_t begin,
                                                       int64_t end) {
  EDL_ASSIGN_OR_RETURN(Examples records, source.Read(begin, end));
  // Each row's record in `source`: as the source says, else [begin, end)
  // when none was left out, else unknown (-1: augmentation then draws from
  // the model's generator, nn/layers/augmentation.h).
  if (records.records.size() != static_cast<size_t>(records.size())) {
    records.records.assign(static_cast<size_t>(records.size()), -1);
    if (records.size() == end - begin) {
      for (int64_t i = 0; i < records.size(); ++i)
        records.records[static_cast<size_t>(i)] = begin + i;
    }
  }
  return std::make_unique<ExamplesSource>(source.name(), std::move(records), source.inputs(),
                                          source.has_labels());
}

Examples JoinExamples(std::vector<Examples> pieces) {
  EDL_CHECK(!pieces.empty());
  if (pieces.size() == 1) return std::move(pieces[0]);
  Examples out;
  for (size_t k = 0; k < pieces[0].inputs.size(); ++k) {
    std::vector<tensor::Tensor> xs;
    for (const Examples& e : pieces) xs.push_back(e.inputs[k]);
    out.inputs.push_back(tensor::Concat(xs, 0));
  }
  if (pieces[0].labels.defined()) {
    std::vector<tensor::Tensor> ys;
    for (const Examples& e : pieces) ys.push_back(e.labels);
    out.labels = tensor::Concat(ys, 0);
  }
  bool known = true;
  for (const Examples& e : pieces)
    known = known && e.records.size() == static_cast<size_t>(e.size());
  for (const Examples& e : pieces) {
    if (known) out.records.insert(out.records.end(), e.records.begin(), e.records.end());
  }
  return out;
}

}  // namespace edl::data
